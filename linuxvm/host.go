package linuxvm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// tool is one program the host must provide: the names the guest calls it
// by, and the Debian package it comes from.
type tool struct {
	names []string
	pkg   string
	// optional tools are carried when the host has them; a missing one is
	// no error (the script that calls it fails as it would on a system
	// without it).
	optional bool
}

// guestTools are the programs carried into the guest. vfslab sh imitates
// GNU coreutils, util-linux's mount, e2fsprogs, f2fs-tools, xfs_io and
// keyctl; these are the real ones.
var guestTools = []tool{
	{names: []string{"bash"}, pkg: "bash"},
	{names: []string{
		"ls", "cat", "mkdir", "rmdir", "rm", "mv", "ln", "touch", "stat", "readlink",
		"truncate", "head", "tail", "cp", "dd", "md5sum", "sha256sum", "wc", "sort",
		"uniq", "tr", "cut", "seq", "tee", "od", "echo", "true", "false", "chmod",
		"chown", "chgrp", "id", "whoami", "groups", "sleep", "sync", "date", "uname",
		"basename", "dirname", "env", "mknod", "mkfifo", "timeout", "printf", "test",
		"base64", "realpath", "yes", "nproc", "du", "df", "stty", "fallocate",
	}, pkg: "coreutils"},
	{names: []string{"grep", "egrep"}, pkg: "grep"},
	{names: []string{"sed"}, pkg: "sed"},
	{names: []string{"awk"}, pkg: "mawk"},
	{names: []string{"find", "xargs"}, pkg: "findutils"},
	{names: []string{"diff", "cmp"}, pkg: "diffutils"},
	{names: []string{"mount", "umount", "losetup"}, pkg: "mount"},
	{names: []string{"blkid", "blockdev", "blkdiscard", "dmesg", "setsid"}, pkg: "util-linux"},
	{names: []string{"busybox"}, pkg: "busybox-static"},
	{names: []string{"xfs_io"}, pkg: "xfsprogs"},
	{names: []string{"keyctl"}, pkg: "keyutils"},
	{names: []string{
		"mke2fs", "mkfs.ext4", "e2fsck", "fsck.ext4", "debugfs", "dumpe2fs", "tune2fs",
		"chattr", "lsattr",
	}, pkg: "e2fsprogs"},
	{names: []string{"mkfs.f2fs", "fsck.f2fs", "dump.f2fs"}, pkg: "f2fs-tools"},
	{names: []string{"f2fs_io", "sload.f2fs", "inject.f2fs"}, pkg: "f2fs-tools", optional: true},
	{names: []string{"modprobe", "insmod", "lsmod", "rmmod"}, pkg: "kmod"},
	{names: []string{"dmsetup"}, pkg: "dmsetup"},
	{names: []string{"xxd"}, pkg: "xxd", optional: true},
	{names: []string{"fscryptctl"}, pkg: "fscryptctl", optional: true},
	{names: []string{"xz"}, pkg: "xz-utils", optional: true},
	{names: []string{"setfattr", "getfattr", "attr"}, pkg: "attr", optional: true},
}

// busyboxApplets are the commands busybox provides in the guest: su runs
// as root without PAM, poweroff ends the boot.
var busyboxApplets = []string{"su", "poweroff", "reboot", "hostname"}

// hostTools are the programs the host itself runs: QEMU, and depmod to
// index the guest's modules.
var hostTools = []tool{
	{names: []string{"qemu-system-x86_64"}, pkg: "qemu-system-x86"},
	{names: []string{"depmod"}, pkg: "kmod"},
}

// guestModules are the kernel modules the guest loads at boot (with what
// `modprobe --show-depends` says they need): the two filesystems, the
// block drivers, the ciphers fscrypt asks for (AES-XTS, AES-CBC-CTS,
// Adiantum with XChaCha12 and NHPoly1305, ESSIV for v1's IV_INO_LBLK), the
// CRC32C of ext4's checksums, and device-mapper with dm-log-writes and
// dm-flakey for crash states. Modules built into the kernel are listed as
// builtin by modprobe and need nothing.
var guestModules = []string{
	"virtio_blk", "loop", "ext4", "f2fs", "crc32c", "xts", "cts", "essiv",
	"adiantum", "chacha_generic", "nhpoly1305", "aesni_intel",
	"dm_mod", "dm_log_writes", "dm_flakey",
}

// Host is what Find found: the kernel and every tool.
type Host struct {
	Kernel  string // the bzImage
	Release string // its release (uname -r), from the file name
	Modules string // /lib/modules/RELEASE
	Config  string // /boot/config-RELEASE ("" when absent)
	QEMU    string
	Depmod  string
	// Tools maps a guest command name to its host path.
	Tools map[string]string
	// CC is the host's C compiler ("" when it has none), which builds
	// the guest's set_encpolicy helper (guest/set_encpolicy.c).
	CC string
}

// MissingError says what the host lacks, as one line naming the Debian
// packages to install.
type MissingError struct {
	What     []string // "xfs_io (xfsprogs)", "a kernel in /boot (linux-image-amd64)"
	Packages []string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("linux: not on this host: %s; install with: apt-get install %s",
		strings.Join(e.What, ", "), strings.Join(e.Packages, " "))
}

// searchPath is where tools are looked for besides $PATH (root's sbin
// directories are not on every user's PATH).
var searchPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// lookTool finds a program on $PATH or in searchPath.
func lookTool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	for _, d := range searchPath {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Find looks for the kernel and the tools. kernel names a bzImage
// ("" picks $VFSLAB_LINUX_KERNEL, else the newest /boot/vmlinuz-*).
func Find(kernel string) (*Host, error) {
	miss := &MissingError{}
	need := func(what, pkg string) {
		miss.What = append(miss.What, what)
		for _, p := range miss.Packages {
			if p == pkg {
				return
			}
		}
		miss.Packages = append(miss.Packages, pkg)
	}
	h := &Host{Tools: map[string]string{}}
	for _, t := range hostTools {
		p := lookTool(t.names[0])
		if p == "" {
			need(t.names[0]+" ("+t.pkg+")", t.pkg)
		}
		switch t.names[0] {
		case "qemu-system-x86_64":
			h.QEMU = p
		case "depmod":
			h.Depmod = p
		}
	}
	for _, t := range guestTools {
		for _, n := range t.names {
			p := lookTool(n)
			if p == "" {
				if !t.optional {
					need(n+" ("+t.pkg+")", t.pkg)
				}
				continue
			}
			h.Tools[n] = p
		}
	}
	for _, cc := range []string{"cc", "gcc"} {
		if p := lookTool(cc); p != "" {
			h.CC = p
			break
		}
	}
	if kernel == "" {
		kernel = os.Getenv("VFSLAB_LINUX_KERNEL")
	}
	if kernel == "" {
		kernel = newestKernel("/boot")
	}
	if kernel == "" {
		need("a kernel in /boot (linux-image-amd64)", "linux-image-amd64")
	} else {
		h.Kernel = kernel
		h.Release = strings.TrimPrefix(filepath.Base(kernel), "vmlinuz-")
		h.Modules = filepath.Join("/lib/modules", h.Release)
		if f, err := os.Open(kernel); err != nil {
			need(fmt.Sprintf("a readable kernel (%v)", err), "linux-image-"+h.Release)
		} else {
			f.Close()
		}
		if _, err := os.Stat(filepath.Join(h.Modules, "modules.dep")); err != nil {
			need("the modules of "+h.Release+" in "+h.Modules, "linux-image-"+h.Release)
		}
		if c := filepath.Join(filepath.Dir(kernel), "config-"+h.Release); fileExists(c) {
			h.Config = c
		}
	}
	if len(miss.What) > 0 {
		return nil, miss
	}
	return h, nil
}

// newestKernel is the /boot/vmlinuz-* with the highest version.
func newestKernel(dir string) string {
	ms, _ := filepath.Glob(filepath.Join(dir, "vmlinuz-*"))
	if len(ms) == 0 {
		return ""
	}
	sort.Slice(ms, func(i, j int) bool { return versionLess(ms[i], ms[j]) })
	return ms[len(ms)-1]
}

// versionLess compares two kernel file names by their dotted numbers
// (6.1.0-37 < 6.12.95).
func versionLess(a, b string) bool {
	na, nb := versionNums(a), versionNums(b)
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			return na[i] < nb[i]
		}
	}
	return len(na) < len(nb)
}

func versionNums(s string) []int {
	var out []int
	n, in := 0, false
	for _, c := range s {
		if c >= '0' && c <= '9' {
			n, in = n*10+int(c-'0'), true
			continue
		}
		if in {
			out = append(out, n)
		}
		n, in = 0, false
	}
	if in {
		out = append(out, n)
	}
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ConfigHash is the first 12 hex digits of the SHA-256 of the kernel's
// config file ("none" when the host has none), printed beside the release
// so that two runs on kernels of the same name and different
// configurations are told apart.
func (h *Host) ConfigHash() string {
	if h.Config == "" {
		return "none"
	}
	b, err := os.ReadFile(h.Config)
	if err != nil {
		return "none"
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:6])
}
