package review

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/review/fault"
	"github.com/vfslab/vfslab/vfs"
)

// Op is a syscall (or a short fixed series of them, as one command of
// vfslab sh makes) of a generated sequence.
type Op string

// The operations of a sequence. Each is one command of a reproducer.
const (
	OpCreate     Op = "create"      // open(O_WRONLY|O_CREAT), close: touch
	OpWrite      Op = "write"       // open(O_RDWR|O_CREAT), pwrite, close: xfs_io -f -c pwrite
	OpTruncate   Op = "truncate"    // open(O_RDWR), ftruncate, close: xfs_io -c truncate
	OpRead       Op = "read"        // open, read to the end, close: md5sum
	OpReadBio    Op = "readbio"     // the file's blocks read back through read bios (fscrypt_decrypt_bio)
	OpStat       Op = "stat"        // lstat
	OpGetdents   Op = "getdents"    // open(O_DIRECTORY), getdents64 to the end, close: ls -a
	OpMkdir      Op = "mkdir"       // mkdir
	OpRmdir      Op = "rmdir"       // rmdir
	OpUnlink     Op = "unlink"      // unlink: rm
	OpLink       Op = "link"        // link: ln
	OpRename     Op = "rename"      // rename, flags 0: mv -T
	OpAddKey     Op = "add_key"     // FS_IOC_ADD_ENCRYPTION_KEY
	OpRemoveKey  Op = "remove_key"  // FS_IOC_REMOVE_ENCRYPTION_KEY
	OpDropCaches Op = "drop_caches" // echo 2 > /proc/sys/vm/drop_caches
	// OpCorruptContext is an offline edit of a file's encryption
	// context (the "c" xattr), as a tool working on the image could make
	// it: the file's v2 context is rewritten to name a second key, which
	// is added first, so that the file's key is present and its policy
	// is not its encrypted parent's. fscrypt_file_open must refuse its
	// opens with EPERM, fscrypt_prepare_link and _rename its moves with
	// EXDEV.
	OpCorruptContext Op = "corrupt_context"
)

// Step is one operation of a sequence. A and B are paths relative to /d
// ("" is /d itself); Off, Len and Fill are a write's offset, length and
// byte, a truncate's length.
type Step struct {
	Op       Op
	A, B     string
	Off, Len int64
	Fill     byte
}

// String renders the step as a call ("write(\"a\", off=0, len=4096, 0x41)").
func (s Step) String() string {
	switch s.Op {
	case OpWrite:
		return fmt.Sprintf("write(%q, off=%d, len=%d, 0x%02x)", s.A, s.Off, s.Len, s.Fill)
	case OpTruncate:
		return fmt.Sprintf("truncate(%q, %d)", s.A, s.Len)
	case OpLink, OpRename:
		return fmt.Sprintf("%s(%q, %q)", s.Op, s.A, s.B)
	case OpAddKey, OpRemoveKey, OpDropCaches:
		return string(s.Op) + "()"
	case OpCorruptContext:
		return fmt.Sprintf("%s(%q)", s.Op, s.A)
	}
	return fmt.Sprintf("%s(%q)", s.Op, s.A)
}

// path returns the absolute path of a relative one.
func path(rel string) string {
	if rel == "" {
		return workDir
	}
	return workDir + "/" + rel
}

// call describes the step for the fault model's kernel rules.
func (s Step) call() fault.Call {
	switch s.Op {
	case OpStat:
		return fault.Call{Kind: fault.Lookup}
	case OpCreate, OpWrite:
		return fault.Call{Kind: fault.Create}
	case OpMkdir, OpRmdir, OpUnlink, OpLink, OpRename:
		return fault.Call{Kind: fault.Namespace, PlainRename: s.Op == OpRename, A: path(s.A), B: path(s.B)}
	}
	return fault.Call{}
}

// kernelFunc is the kernel's entry point of the step, for findings that
// are the step's result (an errno or data that differ).
func (s Step) kernelFunc() string {
	switch s.Op {
	case OpCreate, OpWrite, OpTruncate, OpRead, OpGetdents:
		return map[Op]string{OpCreate: "do_sys_openat2", OpWrite: "vfs_write", OpTruncate: "do_truncate",
			OpRead: "filemap_read", OpGetdents: "iterate_dir"}[s.Op]
	case OpReadBio:
		return "fscrypt_decrypt_bio"
	case OpStat:
		return "vfs_statx"
	case OpAddKey:
		return "fscrypt_ioctl_add_key"
	case OpRemoveKey:
		return "fscrypt_ioctl_remove_key"
	case OpDropCaches:
		return "drop_slab"
	case OpCorruptContext:
		return "fscrypt_set_context"
	}
	return "vfs_" + string(s.Op)
}

// result is what one step returned: its errno and what it showed (a
// stat line, a directory's names in getdents order, a file's contents).
type result struct {
	err  error
	show string
	data []byte
	// opened and wrote are a write step's: whether its open(O_CREAT)
	// succeeded, and the bytes pwrite wrote.
	opened bool
	wrote  int64
}

func (r result) String() string {
	s := fault.ErrName(r.err)
	if r.show != "" {
		s += " " + r.show
	}
	if r.data != nil {
		s += fmt.Sprintf(" %d bytes sha256:%x", len(r.data), sha256.Sum256(r.data))
	}
	return s
}

// run performs the step on m. Every file it opens is closed before it
// returns; a BUG raised below it is the step's error.
func (s Step) run(m *machine) (r result) {
	t, p := m.t, m.p
	defer t.Recover(&r.err)
	a, b := path(s.A), path(s.B)
	switch s.Op {
	case OpCreate:
		fd, err := p.Open(t, a, vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		if err == nil {
			err = p.Close(t, fd)
		}
		r.err = err
	case OpWrite:
		fd, err := p.Open(t, a, vfs.O_RDWR|vfs.O_CREAT, 0o644)
		if err != nil {
			r.err = err
			return r
		}
		r.opened = true
		n, err := p.Pwrite(t, fd, bytes.Repeat([]byte{s.Fill}, int(s.Len)), s.Off)
		r.wrote = int64(n)
		if err == nil && int64(n) != s.Len {
			r.show = fmt.Sprintf("short write %d", n)
		}
		cerr := p.Close(t, fd)
		if err == nil {
			err = cerr
		}
		r.err = err
	case OpTruncate:
		fd, err := p.Open(t, a, vfs.O_RDWR, 0)
		if err != nil {
			r.err = err
			return r
		}
		r.err = p.Ftruncate(t, fd, s.Len)
		p.Close(t, fd)
	case OpRead:
		r.data, r.err = m.readFile(a)
	case OpReadBio:
		r.data, r.show, r.err = m.readBio(a)
	case OpStat:
		st, err := p.Lstat(t, a)
		if err == nil {
			r.show = fmt.Sprintf("mode=%o nlink=%d size=%d", st.Mode, st.Nlink, st.Size)
		}
		r.err = err
	case OpGetdents:
		ds, err := m.getdents(a)
		var names []string
		for _, d := range ds {
			names = append(names, fmt.Sprintf("%q", d.Name))
		}
		r.show, r.err = strings.Join(names, " "), err
	case OpMkdir:
		r.err = p.Mkdir(t, a, 0o755)
	case OpRmdir:
		r.err = p.Rmdir(t, a)
	case OpUnlink:
		r.err = p.Unlink(t, a)
	case OpLink:
		r.err = p.Link(t, a, b)
	case OpRename:
		r.err = p.Rename(t, a, b, 0)
	case OpAddKey:
		r.err = m.addKey()
	case OpRemoveKey:
		r.err = m.removeKey()
	case OpDropCaches:
		m.sys.DropCachesAfterWriteback(t, 2)
	case OpCorruptContext:
		r.err = m.corruptContext(a)
	default:
		r.err = fmt.Errorf("review: unknown op %q", s.Op)
	}
	return r
}

// readFile reads a whole file through read(2) in 64 KiB calls.
func (m *machine) readFile(path string) ([]byte, error) {
	t, p := m.t, m.p
	fd, err := p.Open(t, path, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer p.Close(t, fd)
	out := []byte{}
	buf := make([]byte, 64<<10)
	for {
		n, err := p.Read(t, fd, buf)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

// readBio reads an encrypted file's blocks back through the model of
// ext4's and f2fs's read bios (fscrypt.NewReadPath: bios of up to 256 KiB
// of 4 KiB folios, completed by a device task, decrypted where the
// crypto-bio variant says): its plaintext is read with read(2), encrypted
// as writeback does (fscrypt_encrypt_pagecache_blocks) into the blocks a
// disk holds, and read back in one bio per 16 pages, so that a bio holds
// several folios and data units. It returns what the bios decrypted and,
// when that differs from the plaintext, where.
func (m *machine) readBio(path string) ([]byte, string, error) {
	t, p := m.t, m.p
	plain, err := m.readFile(path)
	if err != nil {
		return nil, "", err
	}
	fd, err := p.Open(t, path, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, "", err
	}
	defer p.Close(t, fd)
	f, err := p.File(fd)
	if err != nil {
		return nil, "", err
	}
	inode := f.Inode()
	if !inode.IsEncrypted() || len(plain) == 0 {
		return plain, "", nil
	}
	if inode.CryptInfo() == nil {
		return nil, "", errEnokey
	}
	pages := (len(plain) + block.PageSize - 1) / block.PageSize
	disk := make([]byte, pages*block.PageSize)
	folio := block.NewFolio(0, 0)
	folio.Host = fscrypt.Inode(inode)
	for i := 0; i < pages; i++ {
		folio.Index = uint64(i)
		clear(folio.Data)
		copy(folio.Data, plain[i*block.PageSize:])
		bounce, err := fscrypt.EncryptPagecacheBlocks(t, folio, block.PageSize, 0)
		if err != nil {
			return nil, "", err
		}
		copy(disk[i*block.PageSize:], bounce)
		fscrypt.FreeBouncePage(t, bounce)
	}
	bioPages := min(pages, 16)
	// The workers count, so that their allocations and frees join the
	// task's (the sites a step reaches, the live objects at teardown).
	rp, err := fscrypt.NewReadPath(m.k, inode, 0, disk, fscrypt.ReadPathOptions{DeviceWorkers: 1, WorkqueueMaxActive: 1,
		Readahead: 1, BioSize: bioPages * block.PageSize, Count: true})
	if err != nil {
		return nil, "", err
	}
	got := make([]byte, len(disk))
	err = rp.Read(t, got, 0)
	rp.Close()
	for _, w := range rp.Tasks() {
		m.t.Stats.Merge(w.Stats)
	}
	if err != nil {
		return nil, "", err
	}
	got = got[:len(plain)]
	show := ""
	if i := firstDiff(got, plain); i >= 0 {
		du := i / block.PageSize
		show = fmt.Sprintf("decrypted data differ from the plaintext from byte %d (data unit %d of a %d-page bio)", i, du%bioPages, bioPages)
	}
	return got, show, nil
}

// errEnokey is the errno of a read whose key is gone.
var errEnokey = errno.ENOKEY

// firstDiff returns the first index where a and b differ, or -1.
func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return n
	}
	return -1
}

// getdents lists a directory in the filesystem's order, "." and ".."
// included.
func (m *machine) getdents(path string) ([]vfs.Dirent, error) {
	t, p := m.t, m.p
	fd, err := p.Open(t, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer p.Close(t, fd)
	var out []vfs.Dirent
	buf := make([]byte, 1<<16)
	for {
		n, err := p.Getdents64(t, fd, buf)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		ds, err := vfs.ParseDirents(buf[:n])
		if err != nil {
			return nil, err
		}
		if out = append(out, ds...); len(out) > maxListing {
			return nil, errNoEnd
		}
	}
}

// maxListing bounds a listing: on a corrupted directory, or one whose
// fill keeps failing part-way, ext4_dx_readdir's listing can cycle for
// ever, in the kernel too; the review stops it and says so.
const maxListing = 1 << 17

// errNoEnd is the result of a listing stopped at maxListing entries.
var errNoEnd = fmt.Errorf("getdents64: the listing never ends (stopped after %d entries)", maxListing)

// dput drops a dentry reference.
func dput(t *kernel.Task, d *vfs.Dentry) { dcache.Dput(t, d) }

// Names is the pool a sequence's names are drawn from: names that
// casefold alike ("Alpha", "ALPHA", "Straße", "STRASSE"), a name that
// folds differently in NFD ("ñ" precomposed and decomposed), and long
// names up to NAME_MAX (255 bytes), which in an encrypted directory
// become the longest ciphertext names.
var Names = []string{
	"Alpha", "ALPHA", "alpha", "beta", "Straße", "STRASSE", "ma\u00f1ana", "man\u0303ana",
	strings.Repeat("x", 40), strings.Repeat("L", 180) + "ong", strings.Repeat("l", 180) + "ONG",
	strings.Repeat("N", 255), strings.Repeat("n", 254) + "N", "sub", "SUB",
}

// Generate draws a sequence of n steps from r for env: names from Names
// in /d and in /d/sub, writes of up to 96 KiB at offsets that cross pages
// (so that a read bio holds several folios and data units), truncates,
// reads through read(2) and, in an encrypted directory, through read
// bios, lookups, listings, links, renames, unlinks, mkdir and rmdir, key
// removal and re-adding in an encrypted directory, and drop_caches so
// that lookups reach the filesystem again.
func Generate(r *rand.Rand, env Env, n int) []Step {
	pick := func() string {
		name := Names[r.IntN(len(Names))]
		if r.IntN(4) == 0 {
			return "sub/" + name
		}
		return name
	}
	// Every sequence starts with a file of several pages read back (a
	// bio that crosses folios and data units, through read bios in an
	// encrypted directory), so that what a variant does to a bio's
	// second data unit shows in every review, not by chance.
	first := Names[r.IntN(len(Names))]
	read := OpRead
	if env.Encrypt {
		read = OpReadBio
	}
	seq := []Step{{Op: OpMkdir, A: "sub"},
		{Op: OpWrite, A: first, Len: 3*4096 + 1 + int64(r.IntN(4096)), Fill: byte('A' + r.IntN(26))},
		{Op: read, A: first}}
	for len(seq) < n {
		var s Step
		switch k := r.IntN(22); {
		case k < 3:
			s = Step{Op: OpCreate, A: pick()}
		case k < 6:
			s = Step{Op: OpWrite, A: pick(), Off: int64(r.IntN(3)) * 3000, Len: int64(1 + r.IntN(96<<10)), Fill: byte('A' + r.IntN(26))}
		case k < 7:
			s = Step{Op: OpTruncate, A: pick(), Len: int64(r.IntN(20000))}
		case k < 9:
			s = Step{Op: OpRead, A: pick()}
		case k < 10:
			s = Step{Op: OpReadBio, A: pick()}
			if !env.Encrypt {
				s.Op = OpRead
			}
		case k < 13:
			s = Step{Op: OpStat, A: pick()}
		case k < 14:
			s = Step{Op: OpGetdents, A: []string{"", "sub"}[r.IntN(2)]}
		case k < 15:
			s = Step{Op: OpLink, A: pick(), B: pick()}
		case k < 16:
			s = Step{Op: OpRename, A: pick(), B: pick()}
		case k < 17:
			s = Step{Op: OpUnlink, A: pick()}
		case k < 18:
			s = Step{Op: []Op{OpMkdir, OpRmdir}[r.IntN(2)], A: pick()}
		case k < 19:
			if env.Encrypt && r.IntN(3) == 0 {
				seq = append(seq, Step{Op: OpRemoveKey}, Step{Op: OpDropCaches})
				s = Step{Op: OpStat, A: pick()}
				seq = append(seq, s, Step{Op: OpAddKey})
				continue
			}
			s = Step{Op: OpDropCaches}
		default:
			s = Step{Op: OpDropCaches}
		}
		seq = append(seq, s)
	}
	return seq[:n]
}

// treeDirs are the directories a tree sequence works with: /d, /d/sub
// and two more at each level.
var treeDirs = []string{"", "sub", "Alpha", "sub/beta"}

// GenerateTree draws a sequence of n steps from r for env that exercises
// the namespace's structure, which Generate's flat pool of names reaches
// only by chance: directories made at two levels and moved between
// parents (over empty directories too), files linked across directories
// and renamed over targets that have other links, unlinks, rmdirs,
// stats, listings and drop_caches; with a v2 policy, files given an
// inconsistent context (OpCorruptContext) and then opened, linked and
// renamed. It is what the base oracle's link
// counts and namespace model check.
func GenerateTree(r *rand.Rand, env Env, n int) []Step {
	names := []string{"a", "b", "c", "STRASSE", "Straße", strings.Repeat("L", 180) + "ong"}
	dir := func() string { return treeDirs[r.IntN(len(treeDirs))] }
	join := func(d, name string) string {
		if d == "" {
			return name
		}
		return d + "/" + name
	}
	file := func() string { return join(dir(), names[r.IntN(len(names))]) }
	seq := []Step{{Op: OpMkdir, A: "sub"}, {Op: OpMkdir, A: "Alpha"}, {Op: OpMkdir, A: "sub/beta"},
		{Op: OpWrite, A: "a", Len: int64(1 + r.IntN(9000)), Fill: byte('A' + r.IntN(26))}}
	for len(seq) < n {
		var s Step
		kinds := 16
		if env.Encrypt && !env.V1 {
			kinds = 17
		}
		switch k := r.IntN(kinds); {
		case k < 3:
			s = Step{Op: OpCreate, A: file()}
		case k < 4:
			s = Step{Op: OpWrite, A: file(), Off: int64(r.IntN(3)) * 3000, Len: int64(1 + r.IntN(12000)), Fill: byte('A' + r.IntN(26))}
		case k < 6:
			s = Step{Op: OpLink, A: file(), B: file()}
		case k < 8:
			s = Step{Op: OpRename, A: file(), B: file()}
		case k < 10:
			// A directory moved to another parent, or over another
			// (empty) directory.
			s = Step{Op: OpRename, A: join(dir(), "dir"), B: join(dir(), []string{"dir", "Alpha", "beta"}[r.IntN(3)])}
		case k < 11:
			s = Step{Op: OpMkdir, A: join(dir(), "dir")}
		case k < 12:
			s = Step{Op: OpUnlink, A: file()}
		case k < 13:
			s = Step{Op: OpRmdir, A: join(dir(), []string{"dir", "beta"}[r.IntN(2)])}
		case k < 14:
			s = Step{Op: OpStat, A: file()}
		case k < 15:
			s = Step{Op: OpGetdents, A: dir()}
		case k < 16:
			s = Step{Op: OpDropCaches}
		default:
			// An inconsistent context, then what must refuse it: an
			// open, a link and a rename of the file.
			f := file()
			if r.IntN(2) == 0 {
				f = "a" // the file every tree sequence writes first
			}
			seq = append(seq, Step{Op: OpCorruptContext, A: f}, Step{Op: OpRead, A: f},
				Step{Op: OpLink, A: f, B: file()}, Step{Op: OpRename, A: f, B: file()})
			continue
		}
		seq = append(seq, s)
	}
	return seq[:n]
}
