// Package linuxvm runs shell scripts on the real Linux kernel, under QEMU,
// as vfslab's oracle: the kernel vfslab models answers the same scripts
// that `vfslab sh` runs.
//
// # What it needs
//
// Find looks on the host for a kernel (the newest /boot/vmlinuz-RELEASE with
// its /lib/modules/RELEASE, or the one named by $VFSLAB_LINUX_KERNEL),
// qemu-system-x86_64, and the user-space tools the guest runs: bash and
// GNU coreutils, grep, sed, findutils, diffutils, util-linux and awk from
// the host itself, busybox for su and poweroff, xfs_io (xfsprogs), keyctl
// (keyutils), e2fsprogs, f2fs-tools, kmod and dmsetup. When any is missing
// it returns a *MissingError, one line naming the Debian packages to
// install.
//
// # The initramfs
//
// Initramfs builds the guest's root file system once into the user's cache
// directory (os.UserCacheDir()/vfslab/linux/initramfs-KEY.cpio, an
// uncompressed newc archive): the tools with every shared library they
// load (read from their ELF headers), the kernel modules `modprobe
// --show-depends` names for the filesystems, ciphers, block and
// device-mapper drivers the scripts need (6.12's are .ko.xz; kmod loads
// them in the guest, and depmod indexes them so that the kernel's own
// request_module finds them), the accounts of vfslab sh (root, fsgqa,
// fsgqa2, 123456-fsgqa), the guest's init (init.sh) and the caller's
// prelude. One program of the project's own is built for the guest when
// the host has a C compiler: guest/set_encpolicy.c, xfs_io's
// set_encpolicy with -s (xfsprogs 6.6; Debian 12's xfs_io is 6.1), which
// the guest's xfs_io (guest/xfs_io.sh, in front of the real one) runs for
// that one command. KEY hashes all of these inputs (file names, sizes and
// modification times, the module list, init and prelude), so a new kernel,
// a changed tool or prelude builds a new one and an unchanged host reuses
// it.
//
// # A run
//
// Run boots the kernel under TCG (software emulation; KVM only when
// Options.KVM asks for it, since on virtual hosts the guest may never get
// past the decompressor) with `console=ttyS0 quiet panic=-1
// no_timer_check` and -no-reboot, the base initramfs followed by a small
// per-run archive with the batch of scripts. Disks are virtio-blk over
// sparse host files: /dev/vda carries the results back, /dev/vdb.. are the
// scratch devices (the names vfslab sh uses), 8 GiB each unless a script
// asks for other sizes; scripts that ask for different devices boot
// separately. Between scripts the guest discards every scratch device
// (its blocks read back as zeroes), unmounts what the script mounted,
// removes its loop and device-mapper devices, kills the processes it
// left, and empties /tmp, /mnt, /root and /home; each script runs in a
// new session keyring (keyctl session). Each script's standard output,
// standard error, exit status and the kernel log it caused (dmesg, read
// after the script; timestamps stripped with StripTimestamps) come back
// in a Result. A script that runs past Options.ScriptTimeout is killed
// (status 124, as timeout(1)); a boot that does not come up within
// BootTimeout, or a guest that stops answering, is killed and its
// finished scripts' results are still returned.
//
// The package imports nothing of the model: it knows scripts, disks and
// the guest, and nothing of what the scripts test.
package linuxvm
