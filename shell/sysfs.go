package shell

import (
	"bytes"
	"io"
	"sort"
	"strings"

	"github.com/vfslab/vfslab/vfs"
)

// The kernel's files that xfstests reads to learn what the machine
// supports: /proc/filesystems (the registered filesystem types, as
// filesystems_proc_show prints them) and /sys/fs/TYPE/features/FEATURE
// (ext4_feat_attrs, f2fs_feat_attrs: one file per feature the kernel was
// built with, each reading "supported"), and /dev/kmsg, whose writes go
// to the kernel log (devkmsg_write).

// kmsgPath is /dev/kmsg.
const kmsgPath = "/dev/kmsg"

// kernelFile returns the contents of one of the kernel's read-only files
// listed above.
func (m *Machine) kernelFile(p string) (string, bool) {
	if p == "/proc/filesystems" {
		var b strings.Builder
		for _, f := range vfs.Filesystems() {
			if f.RequiresDev {
				b.WriteString("\t" + f.Name + "\n")
			} else {
				b.WriteString("nodev\t" + f.Name + "\n")
			}
		}
		return b.String(), true
	}
	if rest, ok := strings.CutPrefix(p, "/sys/fs/"); ok {
		typ, feat, ok := strings.Cut(rest, "/features/")
		if !ok || strings.Contains(feat, "/") {
			return "", false
		}
		for _, f := range sysfsFeatures(typ) {
			if f == feat {
				return "supported\n", true
			}
		}
	}
	return "", false
}

// sysfsFeatures lists /sys/fs/TYPE/features of a registered type.
func sysfsFeatures(typ string) []string {
	fst, err := vfs.GetFsType(typ)
	if err != nil {
		return nil
	}
	out := append([]string(nil), fst.SysfsFeatures...)
	sort.Strings(out)
	return out
}

// kernelDir lists a directory of the kernel's files: /sys/fs, /sys/fs/TYPE
// and /sys/fs/TYPE/features.
func (m *Machine) kernelDir(p string) ([]string, bool) {
	switch {
	case p == "/sys/fs":
		var out []string
		for _, f := range vfs.Filesystems() {
			if len(f.SysfsFeatures) > 0 {
				out = append(out, f.Name)
			}
		}
		sort.Strings(out)
		return out, true
	case strings.HasPrefix(p, "/sys/fs/"):
		rest := strings.TrimPrefix(p, "/sys/fs/")
		typ, sub, _ := strings.Cut(rest, "/")
		feats := sysfsFeatures(typ)
		if len(feats) == 0 {
			return nil, false
		}
		switch sub {
		case "":
			return []string{"features"}, true
		case "features":
			return feats, true
		}
	}
	return nil, false
}

// kernelStat is stat(2) of the kernel's files and directories above.
func (m *Machine) kernelStat(p string) (vfs.Stat, bool) {
	if p == kmsgPath {
		return vfs.Stat{Mode: vfs.S_IFCHR | 0o644, Nlink: 1, Ino: 5}, true
	}
	if _, ok := m.kernelFile(p); ok {
		return vfs.Stat{Mode: vfs.S_IFREG | 0o444, Nlink: 1, Ino: 6}, true
	}
	if _, ok := m.kernelDir(p); ok {
		return vfs.Stat{Mode: vfs.S_IFDIR | 0o755, Nlink: 2, Ino: 7}, true
	}
	return vfs.Stat{}, false
}

// kmsgFile is /dev/kmsg opened for writing: each line is one log
// record (devkmsg_write takes a record per write(2); the shell's echo
// writes its words and the newline separately, so lines are gathered
// first, as a real shell's single write would give them).
type kmsgFile struct {
	m       *Machine
	pending []byte
}

func (f *kmsgFile) Read([]byte) (int, error) { return 0, io.EOF }
func (f *kmsgFile) Write(b []byte) (int, error) {
	f.pending = append(f.pending, b...)
	for {
		i := bytes.IndexByte(f.pending, '\n')
		if i < 0 {
			break
		}
		f.m.printk(string(f.pending[:i]))
		f.pending = f.pending[i+1:]
	}
	return len(b), nil
}

// Close logs what is left of a last line.
func (f *kmsgFile) Close() error {
	if len(f.pending) > 0 {
		f.m.printk(string(f.pending))
		f.pending = nil
	}
	return nil
}
