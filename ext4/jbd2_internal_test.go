package ext4

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// TestJournalSplitsLargeTransactions: a sync whose metadata does not fit
// the log (here made small) commits it in several transactions, each with
// its descriptors, copies and commit block inside the log, and the image
// replayed from the writes is clean for e2fsck -fn (when installed).
func TestJournalSplitsLargeTransactions(t *testing.T) {
	dev := vfs.NewBlockDeviceSize(8 << 20 / vfs.PageSize)
	tk := kernel.New().NewTask("mkfs")
	if err := Type.Mkfs(tk, dev, nil); err != nil {
		t.Fatal(err)
	}
	tk.Exit()
	var base bytes.Buffer
	if _, err := dev.WriteTo(&base); err != nil {
		t.Fatal(err)
	}
	var writes []BlockWrite
	LogWrites(dev, func(w BlockWrite) { writes = append(writes, w) })
	defer LogWrites(dev, nil)
	var sys *vfs.System
	e := fstestutil.Boot(t, "ext4-split", func(tk *kernel.Task) (*vfs.System, *vfs.Proc, error) {
		s, p, err := vfs.Boot(tk, vfs.Config{}, Type, vfs.MountOptions{Device: dev, Source: "vdb"})
		sys = s
		return s, p, err
	})
	d := EXT4_SB(sys.RootMount().SB).disk
	if d.jw == nil {
		t.Fatal("no journal writer on a read-write mount")
	}
	d.jw.maxTx = 12
	per := d.jw.metaPerTx(0, d.bs)
	e.Must(e.P.Mkdir(e.T, "/d", 0o755))
	for i := 0; i < 200; i++ {
		e.Write(fmt.Sprintf("/d/file-%03d", i), "x")
	}
	e.Must(sys.Sync(e.T))
	commits := 0
	for _, w := range writes {
		if len(w.Data) >= 8 && binary.BigEndian.Uint32(w.Data) == jbd2Magic && binary.BigEndian.Uint32(w.Data[4:]) == jbd2CommitBlock {
			commits++
		}
	}
	if commits < 3 {
		t.Fatalf("%d commits for a sync of 200 files with room for %d blocks a transaction", commits, per)
	}
	img := append([]byte(nil), base.Bytes()...)
	for _, w := range writes {
		copy(img[w.Off:], w.Data)
	}
	if !bytes.Equal(img[:dev.Size()], deviceBytes(t, dev)) {
		t.Fatal("the writes do not give the device's image")
	}
	if _, err := exec.LookPath(e2tool("e2fsck")); err != nil {
		return
	}
	p := filepath.Join(t.TempDir(), "img")
	e.Must(dev.SaveImage(p))
	if out, err := exec.Command(e2tool("e2fsck"), "-fn", p).CombinedOutput(); err != nil {
		t.Fatalf("e2fsck -fn after %d commits: %v\n%s", commits, err, out)
	}
}

func deviceBytes(t *testing.T, dev *vfs.BlockDevice) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := dev.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
