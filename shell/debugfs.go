package shell

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// The filesystem debuggers of the machine, for what xfstests reads with
// them: debugfs's `ea_get <INO> c` (the encryption context xattr) and
// `ls -l -r <INO>` (a directory's on-disk names, ciphertext escaped), and
// dump.f2fs -i INO (an inode's name on disk and its context). Like the
// checkers (fsck.go) they mount the device read-only where nothing else
// sees it, with no key, and read the filesystem's own structures: the
// inode's context through the filesystem's fscrypt operations, the names
// from its directory blocks (ext4.WalkDirents, f2fs.WalkDirents).

// inodeAt finds the path of inode ino under the mount at dir ("" when no
// name reaches it), and its parent directory's path.
func (c *cmd) inodeAt(dir string, ino uint64) (string, string) {
	if st, err := c.m.stat(c.errw, toolIdent, c.name, dir, false); err == nil && st.Ino == ino {
		return dir, dir
	}
	var found, parent string
	var walk func(p string, depth int)
	walk = func(p string, depth int) {
		if found != "" || depth > 4096 {
			return
		}
		ents, err := c.m.readDir(c.errw, toolIdent, c.name, p)
		if err != nil {
			return
		}
		for _, e := range ents {
			if e.Name == "." || e.Name == ".." {
				continue
			}
			if e.Ino == ino {
				found, parent = p+"/"+e.Name, p
				return
			}
		}
		for _, e := range ents {
			if e.Type == vfs.DT_DIR && e.Name != "." && e.Name != ".." {
				walk(p+"/"+e.Name, depth+1)
			}
		}
	}
	walk(dir, 0)
	return found, parent
}

// withInode runs fn on the inode at p under the machine's lock: fn must
// neither make syscalls nor write to the command's streams (a file of
// the machine).
func (c *cmd) withInode(p string, fn func(t *kernel.Task, inode *vfs.Inode) error) error {
	_, err := c.sys(fmt.Sprintf("iget(%q)", p), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		d, err := c.m.procFor(toolIdent).LookupDentry(t, p, false)
		if err != nil {
			return 0, err
		}
		defer dcache.Dput(t, d)
		if d.Inode() == nil {
			return 0, errNoInode
		}
		return 0, fn(t, d.Inode())
	})
	return err
}

var errNoInode = simpleErr("no inode")

// withInodeNumber runs fn, as withInode does, on inode ino of the
// filesystem mounted at dir, found by its number as the real tools read
// it from the inode table (ext4.NfsGetInode, f2fs.NfsGetInode), not by a
// name: a file whose name a lookup without the key cannot reach (a v1
// policy's, once the key is gone) is still there. ESTALE when there is no
// such inode.
func (c *cmd) withInodeNumber(dir string, ino uint64, fn func(t *kernel.Task, inode *vfs.Inode) error) error {
	return c.withInode(dir, func(t *kernel.Task, root *vfs.Inode) error {
		sb := root.SB()
		var inode *vfs.Inode
		var err error
		switch sb.Type {
		case ext4.Type:
			inode, err = ext4.NfsGetInode(t, sb, ino)
		case f2fs.Type:
			inode, err = f2fs.NfsGetInode(t, sb, ino)
		default:
			return errNoInode
		}
		if err != nil {
			return err
		}
		defer vfs.Iput(t, inode)
		return fn(t, inode)
	})
}

// rawContext reads an inode's fscrypt context as the filesystem stores it
// (the "c" xattr of index 9).
func rawContext(t *kernel.Task, inode *vfs.Inode) ([]byte, error) {
	cop := inode.SB().Cop()
	if cop == nil {
		return nil, errNoAttr
	}
	buf := make([]byte, 64)
	n, err := cop.GetContext(t, inode, buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

var errNoAttr = simpleErr("Extended attribute key not found")

// onDevice runs fn with the device's filesystem mounted where fn can see
// it: its mount when it is mounted, a private read-only mount otherwise.
// It prints the tool's message and returns false when the device has no
// filesystem of type want.
func (c *cmd) onDevice(devName, want string, fn func(dir string) error) bool {
	p := c.abs(devName)
	c.m.mu.Lock()
	d, ok := c.m.devs[p]
	r := c.m.mountOf(p)
	c.m.mu.Unlock()
	if !ok {
		fmt.Fprintf(c.errw, "%s: No such file or directory while trying to open %s\n", c.name, devName)
		return false
	}
	if r != nil {
		if err := fn(r.dir); err != nil {
			fmt.Fprintf(c.errw, "%s: %v\n", c.name, err)
		}
		return true
	}
	c.m.mu.Lock()
	fstype := Blkid(d.bdev)
	c.m.mu.Unlock()
	if fstype != want {
		fmt.Fprintf(c.errw, "%s: Bad magic number in super-block while trying to open %s\n", c.name, devName)
		return false
	}
	if err := c.m.privateMount(c, d, fstype, fn); err != nil {
		fmt.Fprintf(c.errw, "%s: %v while opening filesystem %s\n", c.name, err, devName)
		return false
	}
	return true
}

// parseInodeSpec reads debugfs's <INO> (or a plain number).
func parseInodeSpec(s string) (uint64, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "<"), ">")
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil && n > 0
}

// cmdDebugfs is debugfs(8) with -R REQUEST (or requests on standard
// input): ea_get [-x] <INO> NAME for the encryption context "c", and
// ls [-l] [-r] <INO>|PATH.
func cmdDebugfs(c *cmd) int {
	var dev string
	var reqs []string
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a == "-R" && i+1 < len(c.args):
			reqs = append(reqs, c.args[i+1])
			i++
		case a == "-w" || a == "-c" || a == "-n":
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(c.errw, "Usage: debugfs [-b blocksize] [-s superblock] [-f cmd_file] [-R request] [-d data_source_device] [-i] [-n] [-D] [-V] [[-w] [-z undo_file] [-c] device]\n")
			return 1
		default:
			dev = a
		}
	}
	if dev == "" {
		fmt.Fprintf(c.errw, "debugfs: the model's debugfs needs a device\n")
		return 1
	}
	if len(reqs) == 0 {
		data, _ := c.readAll("-")
		reqs = splitLines(data)
	}
	fmt.Fprintf(c.errw, "debugfs 1.47.0 (5-Feb-2023)\n")
	c.onDevice(dev, "ext4", func(dir string) error {
		for _, r := range reqs {
			c.debugfsRequest(dir, strings.Fields(r))
		}
		return nil
	})
	return 0
}

func (c *cmd) debugfsRequest(dir string, f []string) {
	if len(f) == 0 {
		return
	}
	var args []string
	opts := map[string]bool{}
	for _, a := range f[1:] {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			for _, ch := range a[1:] {
				opts[string(ch)] = true
			}
			continue
		}
		args = append(args, a)
	}
	target := func(s string) (string, bool) {
		if ino, ok := parseInodeSpec(s); ok && strings.HasPrefix(s, "<") {
			p, _ := c.inodeAt(dir, ino)
			if p == "" {
				fmt.Fprintf(c.errw, "%s: Inode %d is not reachable while looking up inode\n", f[0], ino)
				return "", false
			}
			return p, true
		}
		return path.Join(dir, s), true
	}
	switch f[0] {
	case "ea_get":
		if len(args) != 2 {
			fmt.Fprintf(c.errw, "%s: Usage: ea_get [-f outfile]|[-xVC] [-r] <file> <attr>\n", f[0])
			return
		}
		if args[1] != "c" {
			fmt.Fprintf(c.errw, "ea_get: the model's debugfs reads only the encryption context \"c\"\n")
			return
		}
		var ctx []byte
		getCtx := func(t *kernel.Task, inode *vfs.Inode) error {
			var err error
			ctx, err = rawContext(t, inode)
			return err
		}
		var err error
		if ino, ok := parseInodeSpec(args[0]); ok && strings.HasPrefix(args[0], "<") {
			// An inode that is not in use has no xattrs: debugfs reads
			// its zeroed table slot and finds no key.
			if err = c.withInodeNumber(dir, ino, getCtx); err == errno.ESTALE {
				err = errNoAttr
			}
		} else {
			err = c.withInode(path.Join(dir, args[0]), getCtx)
		}
		if err != nil {
			fmt.Fprintf(c.errw, "ea_get: %v while getting extended attribute\n", err)
			return
		}
		hexs := make([]string, len(ctx))
		for i, b := range ctx {
			hexs[i] = fmt.Sprintf("%02x", b)
		}
		fmt.Fprintf(c.out, "c (%d) = %s\n", len(ctx), strings.Join(hexs, " "))
	case "ls":
		p := dir
		if len(args) > 0 {
			var ok bool
			if p, ok = target(args[0]); !ok {
				return
			}
		}
		var ents []ext4.Dirent
		err := c.withInode(p, func(t *kernel.Task, inode *vfs.Inode) error {
			if !inode.IsDir() || inode.SB().Type != ext4.Type {
				return simpleErr("Ext2 inode is not a directory")
			}
			inode.Rwsem.RLock()
			layout := ext4.WalkDirents(nil, ext4.EXT4_I(inode))
			inode.Rwsem.RUnlock()
			for _, b := range layout.Blocks {
				for _, de := range b.Entries {
					if !de.Unused() {
						de.Name = append([]byte(nil), de.Name...)
						ents = append(ents, de)
					}
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintf(c.errw, "ls: %v\n", err)
			return
		}
		stats := c.direntStats(p)
		for _, de := range ents {
			name := string(de.Name)
			if opts["r"] {
				name = debugfsRawName(de.Name)
			}
			if !opts["l"] {
				fmt.Fprintf(c.out, " %d  (%d) %s   ", de.Inode, de.RecLen, name)
				continue
			}
			st := stats[uint64(de.Inode)]
			fmt.Fprintf(c.out, " %7d %6o (%d) %5d %5d %8d %s %s\n", de.Inode, st.Mode, de.FileType, st.UID, st.GID, st.Size,
				stamp(st.Mtime).Format("2-Jan-2006 15:04"), name)
		}
		if !opts["l"] {
			fmt.Fprintln(c.out)
		}
	default:
		fmt.Fprintf(c.errw, "debugfs: the model's debugfs has ea_get and ls, not %s\n", f[0])
	}
}

// direntStats are the stats of the inodes directory dir names, by inode
// number (its entries as readdir shows them: with no key, no-key names).
func (c *cmd) direntStats(dir string) map[uint64]vfs.Stat {
	out := map[uint64]vfs.Stat{}
	ents, err := c.m.readDir(c.errw, toolIdent, c.name, dir)
	if err != nil {
		return out
	}
	for _, e := range ents {
		if st, err := c.m.stat(c.errw, toolIdent, c.name, dir+"/"+e.Name, false); err == nil {
			out[st.Ino] = st
		}
	}
	return out
}

// debugfsRawName is an on-disk name as `ls -r` prints it: printable
// ASCII as it is, every other byte (and the backslash) as \xHH, so that
// the bytes can be read back.
func debugfsRawName(b []byte) string {
	var s strings.Builder
	for _, ch := range b {
		if ch > ' ' && ch < 0x7f && ch != '\\' {
			s.WriteByte(ch)
		} else {
			fmt.Fprintf(&s, "\\x%02x", ch)
		}
	}
	return s.String()
}

// f2fsBase64 is the base64 of f2fs-tools' pretty-printed names (and of
// fscrypt's old no-key names): A-Z a-z 0-9 + ,, six bits at a time from
// the low bits of each byte up.
func f2fsBase64(b []byte) string {
	const table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,"
	var s strings.Builder
	ac, bits := 0, 0
	for _, ch := range b {
		ac |= int(ch) << bits
		bits += 8
		for bits >= 6 {
			s.WriteByte(table[ac&63])
			ac >>= 6
			bits -= 6
		}
	}
	if bits > 0 {
		s.WriteByte(table[ac&63])
	}
	return s.String()
}

// cmdDumpF2fs is dump.f2fs -i INO DEVICE: the inode's number, mode and
// size, i_name (its name on disk, which for an encrypted name is the
// ciphertext, shown in f2fs-tools' base64) and its xattrs: the
// encryption context "c" (index 9) as dump.f2fs prints it (a v1
// context's fields, a v2 context in hex).
func cmdDumpF2fs(c *cmd) int {
	var dev string
	ino := uint64(0)
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a == "-i" && i+1 < len(c.args):
			n, err := strconv.ParseUint(c.args[i+1], 0, 64)
			if err != nil {
				fmt.Fprintf(c.errw, "\tError: Wrong option -i %s\n", c.args[i+1])
				return 1
			}
			ino = n
			i++
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(c.errw, "\tError: the model's dump.f2fs has -i only\n")
			return 1
		default:
			dev = a
		}
	}
	if dev == "" || ino == 0 {
		fmt.Fprintf(c.errw, "\nUsage: dump.f2fs [options] device\n[options]:\n  -i inode no (hex)\n")
		return 1
	}
	ok := c.onDevice(dev, "f2fs", func(dir string) error {
		var mode uint32
		var size int64
		var ctx, name []byte
		err := c.withInodeNumber(dir, ino, func(t *kernel.Task, inode *vfs.Inode) error {
			mode, size = inode.Mode(), inode.Size()
			ctx, _ = rawContext(t, inode)
			name = f2fs.DiskName(t, inode.SB(), ino)
			return nil
		})
		if err != nil {
			fmt.Fprintf(c.out, "Invalid inode: %d\n", ino)
			return nil
		}
		if name == nil {
			// Not written to the image yet (a mounted filesystem
			// before its checkpoint): the name in the parent's
			// dentry is the one i_name will hold.
			name = c.f2fsDentryName(dir, ino)
		}
		fmt.Fprintf(c.out, "Info: Dump inode %d\n", ino)
		fmt.Fprintf(c.out, "i_mode                        \t\t[0x%8x : %d]\n", mode, mode)
		fmt.Fprintf(c.out, "i_size                        \t\t[0x%8x : %d]\n", size, size)
		fmt.Fprintf(c.out, "i_namelen                     \t\t[0x%8x : %d]\n", len(name), len(name))
		fmt.Fprintf(c.out, "i_name                        \t\t[%s]\n", f2fsBase64(name))
		if len(ctx) == 0 {
			return nil
		}
		fmt.Fprintf(c.out, "xattr: e_name_index:9 e_name:c e_name_len:1 e_value_size:%d e_value:\n", len(ctx))
		if ctx[0] == 1 && len(ctx) == 28 {
			fmt.Fprintf(c.out, "format: %d\ncontents_encryption_mode: 0x%x\nfilenames_encryption_mode: 0x%x\nflags: 0x%x\n", ctx[0], ctx[1], ctx[2], ctx[3])
			fmt.Fprintf(c.out, "master_key_descriptor: %X\nnonce: %X\n", ctx[4:12], ctx[12:28])
			return nil
		}
		fmt.Fprintf(c.out, "%X\n", ctx)
		return nil
	})
	if !ok {
		return 1
	}
	return 0
}

// f2fsDentryName is the on-disk name of the dentry that names inode ino
// under the mount at dir (nil when no name reaches it).
func (c *cmd) f2fsDentryName(dir string, ino uint64) []byte {
	_, parent := c.inodeAt(dir, ino)
	if parent == "" {
		return nil
	}
	var name []byte
	c.withInode(parent, func(t *kernel.Task, pi *vfs.Inode) error {
		if !pi.IsDir() || pi.SB().Type != f2fs.Type {
			return nil
		}
		pi.Rwsem.RLock()
		layout := f2fs.WalkDirents(nil, f2fs.F2FS_I(pi))
		pi.Rwsem.RUnlock()
		for _, a := range layout.Areas {
			for _, de := range a.Dirents {
				if uint64(de.Entry.Ino) == ino && de.Name != nil {
					name = append([]byte(nil), de.Name...)
				}
			}
		}
		return nil
	})
	return name
}

func init() {
	commands["debugfs"] = cmdDebugfs
	commands["dump.f2fs"] = cmdDumpF2fs
}
