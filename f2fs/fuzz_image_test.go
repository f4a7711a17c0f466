package f2fs_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// testdata/image-base.img.gz is a 64 MiB image made by f2fs-tools 1.15
// (fsck.f2fs --dry-run -f finds nothing to fix in it):
//
//	mkfs.f2fs -f -O extra_attr,inode_checksum,sb_checksum,encrypt,casefold -C utf8 img
//	sload.f2fs -f src img
//
// with src holding a ("hi\n", inline data), l -> a, empty/, d/b (20000
// random bytes), d/file-1 to d/file-40 (each its number and a newline)
// and d/e/zeros (2000000 zero bytes). It lets the image path be tested
// and fuzzed without the tools. (sload.f2fs 1.15 cannot fill more than a
// few MiB of a 64 MiB image: it stops with "Can't find free block" and
// leaves an inconsistent image.)

var baseImage struct {
	once   sync.Once
	data   []byte
	blocks []uint32 // the blocks that are not all zero
	err    error
}

func loadBaseImage(tb testing.TB) ([]byte, []uint32) {
	tb.Helper()
	baseImage.once.Do(func() {
		f, err := os.Open("testdata/image-base.img.gz")
		if err != nil {
			baseImage.err = err
			return
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			baseImage.err = err
			return
		}
		baseImage.data, baseImage.err = io.ReadAll(zr)
		var zero [f2fs.BlockSize]byte
		for a := 0; a+f2fs.BlockSize <= len(baseImage.data); a += f2fs.BlockSize {
			if !bytes.Equal(baseImage.data[a:a+f2fs.BlockSize], zero[:]) {
				baseImage.blocks = append(baseImage.blocks, uint32(a/f2fs.BlockSize))
			}
		}
	})
	if baseImage.err != nil {
		tb.Fatal(baseImage.err)
	}
	return baseImage.data, baseImage.blocks
}

// baseDevice returns a fixed-size device holding the base image (only its
// non-zero blocks are written, so that a fuzzing execution does not touch
// 64 MiB), with patch written at offset off of its non-zero block number
// blk.
func baseDevice(tb testing.TB, blk uint16, off uint16, patch []byte) *vfs.BlockDevice {
	data, blocks := loadBaseImage(tb)
	dev := vfs.NewBlockDeviceSize(uint32(len(data) / f2fs.BlockSize))
	for _, a := range blocks {
		copy(dev.Block(a), data[int(a)*f2fs.BlockSize:][:f2fs.BlockSize])
	}
	if len(patch) > 0 {
		b := dev.Block(blocks[int(blk)%len(blocks)])
		copy(b[int(off)%f2fs.BlockSize:], patch)
	}
	return dev
}

// walk lists, stats, reads and readlinks everything under path, with a
// bound on the entries it visits; it returns their number.
func walk(t *kernel.Task, p *vfs.Proc, path string, budget *int) int {
	fd, err := p.Open(t, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return 0
	}
	var names []string
	buf := make([]byte, 1024)
	for *budget > 0 {
		n, err := p.Getdents64(t, fd, buf)
		if err != nil || n == 0 {
			break
		}
		ds, err := vfs.ParseDirents(buf[:n])
		if err != nil {
			break
		}
		for _, d := range ds {
			*budget--
			if d.Name != "." && d.Name != ".." {
				names = append(names, d.Name)
			}
		}
	}
	p.Close(t, fd)
	count := 0
	for _, name := range names {
		if strings.Contains(name, "/") {
			continue
		}
		child := strings.TrimSuffix(path, "/") + "/" + name
		st, err := p.Lstat(t, child)
		if err != nil {
			continue
		}
		count++
		switch st.Mode & vfs.S_IFMT {
		case vfs.S_IFDIR:
			if *budget > 0 && strings.Count(child, "/") < 16 {
				count += walk(t, p, child, budget)
			}
		case vfs.S_IFLNK:
			lb := make([]byte, 4096)
			p.Readlink(t, child, lb)
		case vfs.S_IFREG:
			if fd, err := p.Open(t, child, vfs.O_RDONLY, 0); err == nil {
				rb := make([]byte, 64<<10)
				for i := 0; i < 8; i++ {
					if n, err := p.Read(t, fd, rb); n == 0 || err != nil {
						break
					}
				}
				p.Close(t, fd)
			}
		}
	}
	return count
}

// mountBase mounts dev as the root of a new machine and walks it; with
// sync, it then makes a file and writes a checkpoint (SyncFs) and mounts
// the result again.
func mountBase(dev *vfs.BlockDevice, sync bool) (int, error) {
	k := kernel.New()
	t := k.NewTask("fuzz")
	defer t.Exit()
	sys, p, err := vfs.Boot(t, vfs.Config{}, f2fs.Type, vfs.MountOptions{Device: dev, Source: "vdb", ReadOnly: dev.ReadOnly()})
	if err != nil {
		return 0, err
	}
	budget := 2000
	n := walk(t, p, "/", &budget)
	if !sync {
		return n, nil
	}
	if fd, err := p.Open(t, "/new", vfs.O_CREAT|vfs.O_RDWR, 0o644); err == nil {
		p.Write(t, fd, []byte("fuzz"))
		p.Close(t, fd)
	}
	if err := f2fs.F2FS_SB(sys.RootMount().SB).SyncFs(t); err != nil {
		return n, err
	}
	return mountBase(cloneDev(dev), false)
}

// TestImageMountBase mounts the committed base image (no tools needed)
// and finds its tree.
func TestImageMountBase(t *testing.T) {
	n, err := mountBase(baseDevice(t, 0, 0, nil), false)
	if err != nil || n != 47 {
		t.Fatalf("walked %d entries, %v", n, err)
	}
	// A checkpoint, and the image it leaves: one file more.
	n, err = mountBase(baseDevice(t, 0, 0, nil), true)
	if err != nil || n != 48 {
		t.Fatalf("walked %d entries, %v", n, err)
	}
	e, _ := bootImageDev(t, baseDevice(t, 0, 0, nil))
	if got, err := e.Read("/d/file-17"); err != nil || got != "17\n" {
		t.Fatalf("d/file-17: %q %v", got, err)
	}
	if got, err := e.Read("/a"); err != nil || got != "hi\n" {
		t.Fatalf("a: %q %v", got, err)
	}
	if got, err := e.Read("/d/b"); err != nil || len(got) != 20000 {
		t.Fatalf("d/b: %d bytes %v", len(got), err)
	}
	if got, err := e.Read("/d/e/zeros"); err != nil || len(got) != 2000000 || strings.Trim(got, "\x00") != "" {
		t.Fatalf("d/e/zeros: %d bytes %v", len(got), err)
	}
}

func bootImageDev(tb testing.TB, dev *vfs.BlockDevice) (*env, *vfs.BlockDevice) {
	tb.Helper()
	e := &env{fstestutil.Boot(tb, "f2fs-image", func(t *kernel.Task) (*vfs.System, *vfs.Proc, error) {
		return vfs.Boot(t, vfs.Config{}, f2fs.Type, vfs.MountOptions{Device: dev, Source: "vdb", ReadOnly: dev.ReadOnly()})
	})}
	return e, dev
}

// FuzzF2fsMount mounts the base image with a patch written over one of
// its non-zero blocks (superblock, checkpoint, NAT, SIT, summaries, node
// and dentry blocks, data) and walks the tree, and for patches of an even
// length writes a file, a checkpoint and mounts the result: a damaged
// image must fail with an errno, never panic or hang.
func FuzzF2fsMount(f *testing.F) {
	_, blocks := loadBaseImage(f)
	// A byte over every fourth block, and a word (with the checkpoint
	// after it) over the superblocks and checkpoints: the seed corpus
	// stays a few seconds of the default test run.
	for i := 0; i < len(blocks); i += 4 {
		f.Add(uint16(i), uint16(0), []byte{0xff})
	}
	for i := 0; i < 4; i++ {
		f.Add(uint16(i), uint16(1024), []byte{0, 0, 0, 0})
	}
	var w [4]byte
	binary.LittleEndian.PutUint32(w[:], 0xffffffff)
	f.Add(uint16(0), uint16(1024+96), w[:])
	f.Fuzz(func(t *testing.T, blk, off uint16, patch []byte) {
		if len(patch) > 64 {
			patch = patch[:64]
		}
		mountBase(baseDevice(t, blk, off, patch), len(patch)%2 == 0)
	})
}

// TestImageReadOnlyAndFull: an image on a read-only device refuses
// changes with EROFS; a writable one filled up gives ENOSPC, never a
// panic, and still checkpoints and mounts again.
func TestImageReadOnlyAndFull(t *testing.T) {
	dev := baseDevice(t, 0, 0, nil)
	dev.SetReadOnly(true)
	e, _ := bootImageDev(t, dev)
	if err := e.P.Mkdir(e.T, "/x", 0o755); err != errno.EROFS {
		t.Fatalf("mkdir on a read-only image: %v", err)
	}
	// The device mounts read-only (a read-write mount of it is EACCES,
	// as setup_bdev_super refuses), so opening for write is EROFS.
	if _, err := e.P.Open(e.T, "/a", vfs.O_RDWR, 0); err != errno.EROFS {
		t.Fatalf("open O_RDWR on a read-only image: %v", err)
	}

	e, dev = bootImageDev(t, baseDevice(t, 0, 0, nil))
	chunk := bytes.Repeat([]byte("F"), 1<<20)
	var full error
	for i := 0; i < 200 && full == nil; i++ {
		fd, err := e.P.Open(e.T, fmt.Sprintf("/fill-%d", i), vfs.O_CREAT|vfs.O_RDWR, 0o644)
		if err != nil {
			full = err
			break
		}
		for j := 0; j < 4; j++ {
			if n, err := e.P.Write(e.T, fd, chunk); err != nil || n < len(chunk) {
				full = errno.ENOSPC
				if err != nil {
					full = err
				}
				break
			}
		}
		e.P.Close(e.T, fd)
	}
	if full != errno.ENOSPC {
		t.Fatalf("filling the image: %v", full)
	}
	for i := 0; i < 300; i++ {
		if err := e.P.Mkdir(e.T, fmt.Sprintf("/d-%03d-%s", i, strings.Repeat("n", 200)), 0o755); err != nil && err != errno.ENOSPC {
			t.Fatalf("mkdir %d: %v\n%s", i, err, strings.Join(e.T.K.Log.Lines(), "\n"))
		}
	}
	e.Must(e.P.Unlink(e.T, "/fill-0"))
	// user_block_count kept the overprovisioned segments free: the
	// checkpoint has room for its nodes.
	if err := e.dir("/").SB.SyncFs(e.T); err != nil {
		t.Fatalf("sync: %v\n%s", err, strings.Join(e.T.K.Log.Lines(), "\n"))
	}
	if _, lerr := exec.LookPath("fsck.f2fs"); lerr == nil && !testing.Short() {
		img := filepath.Join(t.TempDir(), "full.img")
		e.Must(dev.SaveImage(img))
		if ok, out := fsckAccepts(t, img); !ok {
			t.Fatalf("fsck.f2fs on the filled image:\n%s", out)
		}
	}
}

// BenchmarkImageMount mounts the base image and walks its tree (every
// inode read from its node block, every directory listed, every file
// read).
func BenchmarkImageMount(b *testing.B) {
	loadBaseImage(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dev := baseDevice(b, 0, 0, nil)
		b.StartTimer()
		if n, err := mountBase(dev, false); err != nil || n != 47 {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkImageSyncFs writes a checkpoint of the base image with one
// file changed: every reachable node rewritten, the NAT, SIT and SSA
// with them.
func BenchmarkImageSyncFs(b *testing.B) {
	e, _ := bootImageDev(b, baseDevice(b, 0, 0, nil))
	sbi := e.dir("/").SB
	for i := 0; i < b.N; i++ {
		e.Write("/d/file-1", fmt.Sprint(i))
		if err := sbi.SyncFs(e.T); err != nil {
			b.Fatal(err)
		}
	}
}
