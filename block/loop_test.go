package block

import (
	"bytes"
	"sync"
	"testing"

	"github.com/vfslab/vfslab/kernel"
)

// memBacking is a backing file in memory.
type memBacking []byte

func (m memBacking) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m)) {
		return 0, nil
	}
	return copy(p, m[off:]), nil
}

// TestLoopDevice: bios submitted to a loop device are copied from the
// backing file at their sector and completed by the loop worker, in
// another task than the submitter's; a read past the backing file's end
// reads zeroes without error.
func TestLoopDevice(t *testing.T) {
	k := kernel.New()
	tk := k.NewTask("submitter")
	back := make(memBacking, 64<<10)
	for i := range back {
		back[i] = byte(i * 13)
	}
	lo := LoopConfigure(k, 7, back)
	var mu sync.Mutex
	var done []*Bio
	completer := map[*kernel.Task]bool{}
	var wg sync.WaitGroup
	submit := func(sector uint64, pages int) *Bio {
		b := NewBio(pages)
		for i := 0; i < pages; i++ {
			b.AddFolio(NewFolio(uint64(i), 0), PageSize, 0)
		}
		b.Sector = sector
		b.EndIOTask = func(ct *kernel.Task, b *Bio) {
			mu.Lock()
			done = append(done, b)
			completer[ct] = true
			mu.Unlock()
			wg.Done()
		}
		wg.Add(1)
		lo.QueueRq(tk, b)
		return b
	}
	b1 := submit(8, 2)                       // bytes 4096..12287
	b2 := submit(uint64(len(back)/512)-8, 3) // the last page and two past the end
	wg.Wait()
	k.FlushWorkqueues()
	if len(done) != 2 || completer[tk] || len(completer) != 1 {
		t.Fatalf("%d bios completed, by %d tasks (the submitter: %t)", len(done), len(completer), completer[tk])
	}
	if !bytes.Equal(b1.Vecs[0].Folio.Data, back[4096:8192]) || !bytes.Equal(b1.Vecs[1].Folio.Data, back[8192:12288]) {
		t.Error("bio 1: data differ from the backing file")
	}
	if !bytes.Equal(b2.Vecs[0].Folio.Data, back[len(back)-4096:]) || !bytes.Equal(b2.Vecs[2].Folio.Data, make([]byte, PageSize)) {
		t.Error("bio 2: the last page or the zeroes past the end differ")
	}
	for _, b := range done {
		if b.Status != BlkStsOK {
			t.Errorf("status %v", b.Status)
		}
	}
}

// TestFolioLockAndEndRead: folio_end_read from another goroutine wakes a
// waiter and publishes PG_uptodate; a failed read leaves the folio
// !uptodate with the error mark.
func TestFolioLockAndEndRead(t *testing.T) {
	f := NewFolio(3, 0)
	f.Lock()
	if f.TryLock() || !f.TestLocked() {
		t.Fatal("a locked folio could be locked again")
	}
	go func() {
		f.Data[0] = 42
		f.EndRead(true)
	}()
	f.WaitLocked()
	if !f.TestUptodate() || f.TestLocked() || f.Data[0] != 42 {
		t.Fatalf("after end_read: %v data[0]=%d", f, f.Data[0])
	}
	g := NewFolio(4, 0)
	g.Lock()
	g.EndRead(false)
	if g.TestUptodate() || !g.TestError() || g.TestLocked() {
		t.Errorf("failed read: uptodate %t error %t", g.TestUptodate(), g.TestError())
	}
	g.SetReadahead()
	g.Reset(9, nil)
	if g.TestReadahead() || g.TestError() || g.Index != 9 {
		t.Error("Reset kept flags")
	}
}
