package ext4_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

// readMachine is ext4 (mkfs.ext4 -O encrypt) on a counting kernel, over a
// loop device or a plain one, with an encrypted directory /e.
type readMachine struct {
	tb  testing.TB
	k   *kernel.Kernel
	t   *kernel.Task
	sys *vfs.System
	p   *vfs.Proc
}

func newReadMachine(tb testing.TB, loop bool, set patch.Set) *readMachine {
	tb.Helper()
	k := kernel.NewWith(kernel.Config{Counting: true, Patches: set})
	t := k.NewTask("readpage-test")
	fst, err := vfs.GetFsType("ext4")
	if err != nil {
		tb.Fatal(err)
	}
	opts, err := vfs.FormatNew(t, fst, fst.FeatureArgs(vfs.Features{Encrypt: true}), "")
	if err != nil {
		tb.Fatal(err)
	}
	if loop {
		opts.Device.LoopSetup(k, 0)
	}
	sys, p, err := vfs.Boot(t, vfs.Config{}, fst, opts)
	if err != nil {
		tb.Fatal(err)
	}
	m := &readMachine{tb: tb, k: k, t: t, sys: sys, p: p}
	m.must(p.Mkdir(t, "/e", 0o755))
	if _, err := p.EncryptDir(t, "/e", bare.PlaintextStream("readpage test key", 64), 0, 0); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		k.FlushWorkqueues()
		p.Exit(t)
		t.Exit()
	})
	return m
}

func (m *readMachine) must(err error) {
	m.tb.Helper()
	if err != nil {
		m.tb.Fatal(err)
	}
}

// events sums every task's count of e so far, the I/O settled first.
func (m *readMachine) events(e events.Event) uint64 {
	m.k.FlushWorkqueues()
	var n uint64
	for _, t := range m.k.CountedTasks() {
		n += t.Ev.Get(e)
	}
	return n
}

// pattern is the test files' contents: every page distinct.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+i>>12) ^ seed
	}
	return b
}

func (m *readMachine) writeAt(path string, data []byte, off int64) {
	m.tb.Helper()
	fd, err := m.p.Open(m.t, path, vfs.O_CREAT|vfs.O_WRONLY, 0o644)
	m.must(err)
	defer m.p.Close(m.t, fd)
	for done := 0; done < len(data); {
		n, err := m.p.Pwrite(m.t, fd, data[done:], off+int64(done))
		m.must(err)
		done += n
	}
}

// readAll reads path from offset 0 in bs-byte read(2) calls.
func (m *readMachine) readAll(path string, bs int) []byte {
	m.tb.Helper()
	fd, err := m.p.Open(m.t, path, vfs.O_RDONLY, 0)
	m.must(err)
	defer m.p.Close(m.t, fd)
	var out []byte
	buf := make([]byte, bs)
	for {
		n, err := m.p.Read(m.t, fd, buf)
		m.must(err)
		if n == 0 {
			return out
		}
		out = append(out, buf[:n]...)
	}
}

// TestReadaheadBioSizes: a cold sequential read(2) of a 4 MiB file reads
// ahead in windows of the request size (ra_pages 32 below it, the request
// up to io_pages above), and ext4 submits one bio per window, of
// contiguous blocks: 128 KiB reads make 32 bios of 128 KiB, cat's 256 KiB
// reads 16 of 256 KiB, dd bs=1M 4 of 1 MiB (BIO_MAX_VECS folios). The
// data come back right, over a loop device and over a plain one, in an
// encrypted directory and outside one.
func TestReadaheadBioSizes(t *testing.T) {
	const size = 4 << 20
	for _, loop := range []bool{true, false} {
		for _, dir := range []string{"/e", ""} {
			for _, c := range []struct{ bs, bios int }{{128 << 10, 32}, {256 << 10, 16}, {1 << 20, 4}} {
				t.Run(fmt.Sprintf("loop=%t/dir=%q/bs=%d", loop, dir, c.bs), func(t *testing.T) {
					m := newReadMachine(t, loop, patch.Set{})
					path := dir + "/f"
					want := pattern(size, 1)
					m.writeAt(path, want, 0)
					m.sys.DropCaches(m.t, 1)
					bios0, bytes0 := m.events(vfs.EvBioSubmit), m.events(vfs.EvBioSubmitBytes)
					got := m.readAll(path, c.bs)
					if !bytes.Equal(got, want) {
						t.Fatalf("read back %d bytes, not what was written", len(got))
					}
					bios := m.events(vfs.EvBioSubmit) - bios0
					bytes := m.events(vfs.EvBioSubmitBytes) - bytes0
					if bios != uint64(c.bios) || bytes != size {
						t.Errorf("%d bios of %d bytes in all, want %d of %d bytes each", bios, bytes, c.bios, size/c.bios)
					}
					if got := m.events(vfs.EvCopyToUser); got != size {
						t.Errorf("copy_to_user %d bytes, want %d", got, size)
					}
					loops := m.events(block.EvLoopRequest)
					if loop != (loops == bios) || (!loop && loops != 0) {
						t.Errorf("loop=%t: %d loop requests for %d bios", loop, loops, bios)
					}
					decrypted := m.events(fscrypt.EvBioDecrypt)
					if (dir == "/e") != (decrypted == bios) || (dir == "" && decrypted != 0) {
						t.Errorf("dir %q: %d bios decrypted of %d", dir, decrypted, bios)
					}
					// A second read finds the page cache warm: no bio.
					m.readAll(path, c.bs)
					if again := m.events(vfs.EvBioSubmit) - bios0; again != bios {
						t.Errorf("warm read submitted %d more bios", again-bios)
					}
				})
			}
		}
	}
}

// TestReadaheadSmallReads: 4 KiB reads start with a 4-page window that
// doubles up to ra_pages (32): more, smaller bios, the same data.
func TestReadaheadSmallReads(t *testing.T) {
	m := newReadMachine(t, true, patch.Set{})
	want := pattern(1<<20, 2)
	m.writeAt("/e/f", want, 0)
	m.sys.DropCaches(m.t, 1)
	if got := m.readAll("/e/f", 4096); !bytes.Equal(got, want) {
		t.Fatal("4 KiB reads: data differ")
	}
	// 4 + 8 + 16 pages, then 32-page windows: 3 + 7 + a last short one.
	if bios := m.events(vfs.EvBioSubmit); bios != 11 {
		t.Errorf("%d bios for 256 pages read 4 KiB at a time, want 11", bios)
	}
}

// TestReadHolesAndCoherence: a hole reads as zeroes without a bio; the
// page cache stays equal to the file across writes, truncation and
// drop_caches.
func TestReadHolesAndCoherence(t *testing.T) {
	m := newReadMachine(t, true, patch.Set{})
	data := pattern(1<<20, 3)
	m.writeAt("/e/h", data, 2<<20) // pages 0..511 are a hole
	m.sys.DropCaches(m.t, 1)
	got := m.readAll("/e/h", 256<<10)
	want := append(make([]byte, 2<<20), data...)
	if !bytes.Equal(got, want) {
		t.Fatal("file with a hole: data differ")
	}
	if bytes := m.events(vfs.EvBioSubmitBytes); bytes != 1<<20 {
		t.Errorf("%d bytes of bios for 1 MiB of data after a 2 MiB hole", bytes)
	}
	// The cache is warm; a write must show in the next read.
	patchData := bytes.Repeat([]byte{0xAB}, 5000)
	m.writeAt("/e/h", patchData, 3<<20-100)
	want = append(want[:3<<20-100], patchData...)
	if got := m.readAll("/e/h", 64<<10); !bytes.Equal(got, want) {
		t.Fatal("read after a write into cached pages: stale data")
	}
	// Shrink then grow: the tail is zeroes, cached or not.
	fd, err := m.p.Open(m.t, "/e/h", vfs.O_RDWR, 0)
	m.must(err)
	m.must(m.p.Ftruncate(m.t, fd, 2<<20+10))
	m.must(m.p.Ftruncate(m.t, fd, 3<<20))
	m.must(m.p.Close(m.t, fd))
	want = want[:3<<20]
	clear(want[2<<20+10:])
	if got := m.readAll("/e/h", 256<<10); !bytes.Equal(got, want) {
		t.Fatal("read after truncation: stale data")
	}
	d, err := m.p.LookupDentry(m.t, "/e/h", true)
	m.must(err)
	mapping := &d.Inode().Data
	if mapping.NrPages() == 0 {
		t.Error("no cached pages after reads")
	}
	m.sys.DropCaches(m.t, 1)
	if n := mapping.NrPages(); n != 0 {
		t.Errorf("%d pages cached after drop_caches 1", n)
	}
	dcache.Dput(m.t, d)
}

// TestReadVariants: every crypto-bio variant reads the file back through
// the read path; the workqueue variant decrypts on fscrypt_read_queue's
// kworkers (one work item per bio), the others in the loop worker.
func TestReadVariants(t *testing.T) {
	for _, v := range fscrypt.CryptoBioPatch.Variants {
		t.Run(v.Name, func(t *testing.T) {
			m := newReadMachine(t, true, patch.Set{}.MustWith(fscrypt.CryptoBioPatch, v.Name))
			want := pattern(2<<20, 4)
			m.writeAt("/e/f", want, 0)
			m.sys.DropCaches(m.t, 1)
			got := m.readAll("/e/f", 256<<10)
			bad := 0
			for p := 0; p < len(want); p += 4096 {
				if !bytes.Equal(got[p:p+4096], want[p:p+4096]) {
					bad++
				}
			}
			works := m.events(fscrypt.EvDecryptWork)
			bios := m.events(vfs.EvBioSubmit)
			switch v.Name {
			case "workqueue":
				if works != bios {
					t.Errorf("%d decrypt works queued for %d bios", works, bios)
				}
			default:
				if works != 0 {
					t.Errorf("%d decrypt works queued: the variant has no workqueue", works)
				}
			}
			if v.Name != "bio" && bad != 0 {
				t.Errorf("%d of %d pages read back wrong", bad, len(want)/4096)
			}
			t.Logf("%s: %d bios, %d pages wrong", v.Name, bios, bad)
		})
	}
}

// TestReadFailedBioRetried: a bio whose decryption fails (here its first
// request's kmalloc, failed with fail-nth) ends its folios' reads without
// PG_uptodate; the reader then reads each of them with ->read_folio
// (ext4_read_folio: a bio of one folio, decrypted the same way), as
// filemap_update_page does, and gets the right data: 1 bio of 64 folios,
// then 64 of one.
func TestReadFailedBioRetried(t *testing.T) {
	set := patch.Set{}.MustWith(fscrypt.CryptoBioPatch, "inline").MustWith(fscrypt.FnameOnstackPatch, "base")
	m := newReadMachine(t, false, set)
	want := pattern(256<<10, 5)
	m.writeAt("/e/f", want, 0)
	m.sys.DropCaches(m.t, 1)
	fd, err := m.p.Open(m.t, "/e/f", vfs.O_RDONLY, 0)
	m.must(err)
	defer m.p.Close(m.t, fd)
	bios0 := m.events(vfs.EvBioSubmit)
	// The bio's post-read context is the first fault injection point,
	// its first data unit's request the second (GFP_NOFS: failslab's
	// ignore-gfp-wait off).
	m.k.Failslab.SetIgnoreGFPWait(false)
	m.t.Ctx.FailNth = 2
	got := make([]byte, len(want))
	n, err := m.p.Read(m.t, fd, got)
	m.t.Ctx.FailNth = 0
	if err != nil || n != len(want) || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, %v; data equal: %t", n, err, bytes.Equal(got[:max(n, 0)], want[:max(n, 0)]))
	}
	if bios := m.events(vfs.EvBioSubmit) - bios0; bios != 65 {
		t.Errorf("%d bios, want 65: the failed one and one per folio read again", bios)
	}
}
