package ext4

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// FuzzExt4Mount mounts mutated images and walks them: a 4 MiB image that
// vfslab's mkfs made (1 KiB blocks, as mke2fs.conf's small type says) and a few calls filled (directories linear and
// htree, a casefolded one, an encrypted one whose key the walk does not
// have, small, fragmented and sparse files, fast and slow symlinks) gets
// the fuzzer's patches, with the superblock's, the descriptors' and the
// inodes' checksums recomputed or not, then is mounted, every directory
// listed, every name stat'ed, files read and symlinks followed, and a
// file created and synced. Nothing may panic or hang; a corruption found
// after the mount must be EFSCORRUPTED, EFSBADCRC or EUCLEAN with an
// "EXT4-fs" log line.

var (
	fuzzImageOnce sync.Once
	fuzzImage     []byte
	fuzzImageErr  error
)

const fuzzImageBlocks = 1024

func buildFuzzImage() ([]byte, error) {
	dev := vfs.NewBlockDeviceSize(fuzzImageBlocks)
	t := kernel.New().NewTask("mkfs")
	defer t.Exit()
	if err := Type.Mkfs(t, dev, []string{"-O", "casefold,encrypt"}); err != nil {
		return nil, err
	}
	sys, p, err := vfs.Boot(t, vfs.Config{}, Type, vfs.MountOptions{Device: dev, Source: "vdb", ReadOnly: dev.ReadOnly()})
	if err != nil {
		return nil, err
	}
	must := func(err error) {
		if err != nil && fuzzImageErr == nil {
			fuzzImageErr = err
		}
	}
	write := func(path string, data []byte, offs ...int64) {
		fd, err := p.Open(t, path, vfs.O_CREAT|vfs.O_RDWR, 0o644)
		must(err)
		if err != nil {
			return
		}
		if len(offs) == 0 {
			offs = []int64{0}
		}
		for _, o := range offs {
			_, err = p.Pwrite(t, fd, data, o)
			must(err)
		}
		must(p.Close(t, fd))
	}
	must(p.Mkdir(t, "/d", 0o755))
	must(p.Mkdir(t, "/d/sub", 0o700))
	for i := 0; i < 120; i++ {
		write(fmt.Sprintf("/d/name-%03d-%s", i, strings.Repeat("x", i%30)), []byte("v"))
	}
	write("/small", []byte("hello"))
	var frag []int64
	for k := int64(0); k < 12; k++ {
		frag = append(frag, 2*k*BlockSize)
	}
	write("/frag", []byte("f"), frag...)
	write("/sparse", []byte("end"), 40*BlockSize)
	must(p.Symlink(t, "small", "/fast"))
	must(p.Symlink(t, strings.Repeat("s/", 40), "/slow"))
	must(p.Link(t, "/small", "/d/hard"))
	must(p.Mkdir(t, "/ci", 0o755))
	fd, err := p.Open(t, "/ci", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	must(err)
	fl := uint32(vfs.FS_CASEFOLD_FL)
	_, err = p.Ioctl(t, fd, vfs.FS_IOC_SETFLAGS, &fl)
	must(err)
	must(p.Close(t, fd))
	write("/ci/MiXeD", []byte("c"))
	must(p.Mkdir(t, "/enc", 0o755))
	_, err = p.EncryptDir(t, "/enc", make([]byte, 64), 0, 0)
	must(err)
	write("/enc/secret", []byte("s"))
	must(p.Symlink(t, "secret", "/enc/link"))
	must(SyncFS(t, sys.RootMount().SB))
	img := make([]byte, dev.Size())
	if _, err := dev.ReadAt(img, 0); err != nil {
		return nil, err
	}
	return img, fuzzImageErr
}

// fixChecksums recomputes the superblock's, the group descriptors' and
// every inode's checksum of img, so that patches reach the parsers behind
// them.
func fixChecksums(img []byte, what uint8) {
	var s RawSuper
	copy(s[:], img[SuperblockOffset:])
	bs := 1024 << (s.LogBlockSize() % 3)
	if what&2 != 0 && s.BlocksPerGroup() != 0 {
		ds := s.DescSize()
		if ds < MinDescSize || ds > 1024 {
			ds = MinDescSize
		}
		for g := uint32(0); g < min(s.GroupsCount(), 64); g++ {
			off := bs*int(s.FirstDataBlock()%2+1) + int(g)*ds
			if off+ds <= len(img) {
				gd := GroupDesc(img[off : off+ds])
				binary.LittleEndian.PutUint16(gd[bgChecksum:], groupDescCsum(&s, s.CsumSeed(), g, gd))
			}
		}
	}
	if gdOff := bs * int(s.FirstDataBlock()%2+1); what&4 != 0 && s.InodesPerGroup() != 0 && s.InodeSize() >= GoodOldInodeSize && s.InodeSize() <= bs {
		gd := GroupDesc(img[gdOff : gdOff+MinDescSize64bit])
		it := int(gd.InodeTable()) * bs
		for i := 0; i < int(min(s.InodesPerGroup(), 1024)); i++ {
			off := it + i*s.InodeSize()
			if off < 0 || off+s.InodeSize() > len(img) {
				break
			}
			raw := RawInode(img[off : off+s.InodeSize()])
			raw.CsumSet(inodeCsumSeed(s.CsumSeed(), uint32(i+1), raw.Generation()))
		}
	}
	if what&1 != 0 {
		s.SuperblockCsumSet()
		copy(img[SuperblockOffset:], s[:])
	}
}

// walkImage lists, stats and reads what the mounted image holds, within
// a budget of calls, and checks the errnos.
func walkImage(t *testing.T, tk *kernel.Task, p *vfs.Proc) {
	budget := 3000
	check := func(op string, err error) {
		switch err {
		// ENODATA: an inode flagged encrypted without its context
		// (fscrypt_get_encryption_info passes get_context's error on).
		case nil, errno.ENOENT, errno.ENOKEY, errno.ENODATA, errno.ENOTDIR, errno.ELOOP, errno.ENAMETOOLONG, errno.EPERM,
			errno.EINVAL, errno.ENOSPC, errno.EEXIST, errno.EISDIR, errno.EROFS, errno.EOPNOTSUPP, errno.EACCES:
		case errno.EFSCORRUPTED, EFSBADCRC: // EFSCORRUPTED is EUCLEAN
			if !tk.K.Log.Contains("EXT4-fs") {
				t.Fatalf("%s: %v with no EXT4-fs log line", op, err)
			}
		default:
			t.Fatalf("%s: unexpected %v", op, err)
		}
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > 8 || budget <= 0 {
			return
		}
		fd, err := p.Open(tk, dir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		check("open "+dir, err)
		if err != nil {
			return
		}
		var names []string
		buf := make([]byte, 4096)
		for budget > 0 {
			budget--
			n, err := p.Getdents64(tk, fd, buf)
			check("getdents "+dir, err)
			if err != nil || n == 0 {
				break
			}
			ds, err := vfs.ParseDirents(buf[:n])
			if err != nil {
				t.Fatalf("getdents %s: %v", dir, err)
			}
			for _, d := range ds {
				if d.Name != "." && d.Name != ".." {
					names = append(names, d.Name)
				}
			}
		}
		p.Close(tk, fd)
		for _, n := range names {
			if budget--; budget <= 0 {
				return
			}
			path := strings.TrimSuffix(dir, "/") + "/" + n
			st, err := p.Lstat(tk, path)
			check("lstat "+path, err)
			if err != nil {
				continue
			}
			switch st.Mode & vfs.S_IFMT {
			case vfs.S_IFDIR:
				walk(path, depth+1)
			case vfs.S_IFLNK:
				lb := make([]byte, 4096)
				_, err := p.Readlink(tk, path, lb)
				check("readlink "+path, err)
			case vfs.S_IFREG:
				fd, err := p.Open(tk, path, vfs.O_RDONLY, 0)
				check("open "+path, err)
				if err == nil {
					b := make([]byte, 64<<10)
					_, err := p.Read(tk, fd, b)
					check("read "+path, err)
					p.Close(tk, fd)
				}
			}
		}
	}
	walk("/", 0)
	fd, err := p.Open(tk, "/fuzz-new", vfs.O_CREAT|vfs.O_RDWR, 0o644)
	check("creat", err)
	if err == nil {
		_, err = p.Write(tk, fd, make([]byte, 3*BlockSize))
		check("write", err)
		p.Close(tk, fd)
	}
	check("mkdir", p.Mkdir(tk, "/d/fuzz-dir", 0o755))
	check("unlink", p.Unlink(tk, "/small"))
}

func FuzzExt4Mount(f *testing.F) {
	fuzzImageOnce.Do(func() { fuzzImage, fuzzImageErr = buildFuzzImage() })
	if fuzzImageErr != nil {
		f.Fatal(fuzzImageErr)
	}
	// Seeds: nothing; the superblock's counts; a descriptor; an inode's
	// mode, size and extent header; a directory block's rec_len.
	f.Add(uint32(0), []byte{}, uint8(0))
	f.Add(uint32(SuperblockOffset+sInodesPerGroup), []byte{0xff, 0xff}, uint8(1))
	f.Add(uint32(SuperblockOffset+sFeatureIncompat), []byte{0x00, 0x80}, uint8(1))
	f.Add(uint32(SuperblockOffset+sFeatureIncompat), []byte{0xC6}, uint8(1)) // needs_recovery: the journal is read
	if j := fuzzJournalOffset(); j > 0 {
		f.Add(uint32(j+0x1C), []byte{0, 0, 0, 1}, uint8(0))                           // s_start 1: a log to scan
		f.Add(uint32(j+1024+0), []byte{0xC0, 0x3B, 0x39, 0x98, 0, 0, 0, 1}, uint8(0)) // a descriptor at log block 1
	}
	f.Add(uint32(2*1024+bgInodeTableLo), []byte{0x01}, uint8(3)) // group 0's descriptor (block 2 of 1 KiB)
	for _, ino := range []uint32{RootIno, 12, 14, 20} {
		off := uint32(fuzzInodeOffset(ino))
		f.Add(off+iMode, []byte{0xff, 0x41}, uint8(7))
		f.Add(off+iSizeLo, []byte{0xff, 0xff, 0xff, 0x7f}, uint8(7))
		f.Add(off+iBlock+4, []byte{0xff, 0x01}, uint8(7))
		f.Add(off+iBlock+6, []byte{0x05}, uint8(7))
		f.Add(off+iLinksCount, []byte{0}, uint8(7))
	}
	f.Fuzz(func(t *testing.T, off uint32, patch []byte, fix uint8) {
		img := append([]byte(nil), fuzzImage...)
		o := int(off % uint32(len(img)))
		copy(img[o:], patch)
		fixChecksums(img, fix)
		dev := vfs.NewBlockDeviceSize(fuzzImageBlocks)
		if _, err := dev.WriteAt(img, 0); err != nil {
			t.Fatal(err)
		}
		tk := kernel.New().NewTask("fuzz")
		defer tk.Exit()
		_, p, err := vfs.Boot(tk, vfs.Config{}, Type, vfs.MountOptions{Device: dev, Source: "vdb", ReadOnly: dev.ReadOnly()})
		if err != nil {
			if !tk.K.Log.Contains("EXT4-fs") && err != nil {
				t.Fatalf("mount failed (%v) with no log line", err)
			}
			return
		}
		walkImage(t, tk, p)
	})
}

// fuzzInodeOffset is the byte offset of inode ino in the fuzz image
// (group 0's inode table, where the model's mkfs puts it).
func fuzzInodeOffset(ino uint32) int {
	var s RawSuper
	copy(s[:], fuzzImage[SuperblockOffset:])
	bs := s.BlockSize()
	gdOff := bs * int(s.FirstDataBlock()+1)
	gd := GroupDesc(fuzzImage[gdOff : gdOff+MinDescSize64bit])
	return int(gd.InodeTable())*bs + int(ino-1)*s.InodeSize()
}

// fuzzJournalOffset is the byte offset of the fuzz image's journal
// superblock (0 without a journal).
func fuzzJournalOffset() int {
	var s RawSuper
	copy(s[:], fuzzImage[SuperblockOffset:])
	raw := RawInode(fuzzImage[fuzzInodeOffset(JournalIno):][:s.InodeSize()])
	h := readExtHeader(raw.IBlock())
	if s.JournalInum() != JournalIno || h.magic != ExtMagic || h.depth != 0 || h.entries == 0 {
		return 0
	}
	e := raw.IBlock()[extHeaderSize:]
	pblk := uint64(binary.LittleEndian.Uint16(e[6:]))<<32 | uint64(binary.LittleEndian.Uint32(e[8:]))
	return int(pblk) * s.BlockSize()
}
