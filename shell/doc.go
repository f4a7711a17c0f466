// Package shell is `vfslab sh`: a POSIX shell (mvdan.cc/sh/v3's parser and
// interpreter) whose commands run on one simulated machine: coreutils,
// xfs_io's fscrypt commands, fscryptctl, keyctl, mkfs, mount and su, with
// the real tools' options, messages and exit statuses, an xfstests-style
// prelude, and vfslab's own trace, events, dump and patches. Main is the
// entry point (`vfslab sh [--seed N] [--patches SET] [SCRIPT | -c CMDS]`).
//
// # The machine
//
// Machine boots a kernel with the patch set (kernel.NewWith), a memfs root
// holding /mnt/scratch, /mnt/test, /tmp, /proc, /sys and /dev, and four
// scratch block devices /dev/vdb../dev/vde that mkfs.ext4 and mkfs.f2fs
// format (the types' own Mkfs with the real tools' -O, -E, -N, -C options).
// mount without -t finds the type on the device, as blkid does; options
// mount(8) turns into MS_* flags are recorded in /proc/mounts, the rest go
// to the filesystem. umount goes through vfs.System.Umount (the keyring is
// destroyed, unused dentries and inodes evicted) and a later mount of the
// device attaches the same superblock again (vfs.System.MountSuper): the
// model's disk filesystems keep their inodes in memory, so the detached
// superblock stands for what the device holds. /proc/sys/vm/drop_caches is
// vfs.System.DropCaches. The keys are package keys' (keys.go): one session
// keyring every process shares, keyctl over the keys syscalls, and
// /proc/keys, /proc/key-users and /proc/sys/kernel/keys/* (the key quota). Users are root, fsgqa (1000) and fsgqa2 (1001),
// each in a group of its own name and number, the two also in users (100)
// (users.go); `su USER -c CMD` runs CMD in a process with that user's
// kernel.Cred (uid, fsgid, supplementary groups), `su -g GROUP` and `-G
// GROUP` (root only) change its groups. The VFS checks the mode bits as
// generic_permission does (vfs/attr.go), so chmod, chown OWNER:GROUP and
// chgrp matter.
//
// The scratch devices are sparse disks, 8 GiB unless --device DEV:SIZE
// (Machine.SetDeviceSize) says otherwise, on which mkfs writes the real
// on-disk format. A host image attached with --image FILE:DEV
// (Machine.AttachImage) is the device's contents, read lazily from FILE,
// which is locked against other processes: write-protected unless
// --writable, in which case umount, sync and Machine.Close write the
// changed blocks back, atomically (vfs.BlockDevice.Sync); --save-image
// DEV:FILE (Machine.SaveImageAtClose) writes a device out at Close. A write-protected device mounts read-only after the kernel's
// EACCES, with mount(8)'s warning. These are the only host files the
// machine touches besides the script itself (image.go).
//
// Timestamps are the VFS's (vfs/atime.go): the machine's clock starts at
// 2026-01-01 00:00:00 UTC and moves only with sleep (clock.go), reads and
// readdir update atimes under the mount's policy (relatime by default;
// strictatime, noatime, nodiratime; lazytime dirties with I_DIRTY_TIME),
// writes, truncation, namespace changes, chmod, chown and touch move
// mtime and ctime; stat, ls -l and date show them.
//
// Every syscall a command makes takes the machine's lock, runs on the
// machine's one task with the task named after the command (as printk
// shows it) and, under `trace on`, prints its function_graph and result on
// standard error. One script and one seed give the same bytes: the clock
// moves only with sleep, inode numbers come from the filesystems' counters, and the
// kernel's random source (Kernel.Seed: fscrypt's file nonces, hence the
// no-key names) and /dev/urandom are seeded with --seed.
//
// The kernel's fault-injection interface is in the machine's files
// (faultinject.go): failslab's debugfs knobs under
// /sys/kernel/debug/failslab, SLAB_FAILSLAB under /sys/kernel/slab, and
// /proc/self/fail-nth (also /proc/thread-self/fail-nth), over the kernel's
// kmem.FailslabAttr and the machine task's fail_nth. The commands all run
// on that one task, so a fail-nth written by the shell counts the points
// of the commands after it (in Linux a forked command starts at 0).
//
// # The interpreter
//
// The runner's open, stat, readdir and access handlers go to the machine,
// its directory is set without the host's stat, and its $TMPDIR names a
// directory the host cannot create files in (the interpreter opens FIFOs
// there with os.OpenFile); process substitution is refused before a script
// runs. Where mvdan's interpreter falls short of what xfstests-style
// scripts need, the parsed syntax tree is rewritten before it runs (no
// patched copy of the interpreter): `exec N<file`, `exec N>file` and
// `exec N<&-` for N above 2 become the machine's __vfslab_fd command, and
// `cmd >&N` / `cmd <&N` redirections of /dev/fd/N, which the open handler
// gives the shell's descriptor. The call handler splits combined echo
// options (`echo -ne`), answers `command -v`, `type` and `which` from the
// machine's commands, and makes sourcing xfstests' common/* files a no-op.
// A command that panics is reported and returns status 1; the shell goes
// on.
//
// # Where the commands live
//
// The registries are in coreutils.go; the commands sit by family: files.go
// (ls, mkdir, rm, ln, stat, mv, cp, chattr, lsattr, find), textutils.go
// (cat, head, tail, tee, wc, sort, uniq, tr, cut, seq, cmp, echo, the
// checksums), text.go (grep, sed, awk, od, xxd), diff.go, devices.go (dd,
// /dev/urandom) and mount.go (mkfs, mount, blkid), users.go (su's
// accounts, chmod, chown, chgrp, id, whoami), cryptotools.go (xfs_io,
// fscryptctl) and keyctl.go, and the machine's own (trace, events, dump,
// patches) in vfslab.go.
//
// # What is not modelled
//
// ACLs, capabilities other than uid 0's, the umask (the tools pass what
// a umask of 022 leaves), fs.protected_hardlinks, timestamps and atime
// updates, thread and process keyrings (every process shares the
// session keyring; fscrypt searches it for v1 keys), and a full awk (the command proxy does not
// serve benhoyt/goawk; the subset xfstests' filters use is built in).
package shell
