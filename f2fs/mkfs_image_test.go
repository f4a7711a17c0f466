package f2fs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// TestMkfsImageLayout compares vfslab's mkfs.f2fs with f2fs-tools' for
// several sizes and feature sets: every superblock field but the UUID, the
// version strings and the checksum (the extension lists included), every
// checkpoint field but the version and the checksum, the root inode but
// its times and checksum, and the dentry, NAT and summary blocks. For the
// sizes a test device can hold, vfslab's image itself goes to fsck.f2fs.
func TestMkfsImageLayout(t *testing.T) {
	needTools(t, "mkfs.f2fs", "fsck.f2fs")
	for _, c := range []struct {
		mb   int
		args []string
	}{
		{64, nil},
		{64, []string{"-O", "extra_attr,inode_checksum,sb_checksum"}},
		{100, []string{"-O", "encrypt,casefold,extra_attr,inode_checksum,sb_checksum", "-C", "utf8:strict"}},
		{200, []string{"-O", "extra_attr,inode_crtime,inode_checksum"}},
		{1024, []string{"-O", "extra_attr,sb_checksum"}},
		{3000, nil},
	} {
		tmp := t.TempDir()
		img := filepath.Join(tmp, "ref.img")
		os.WriteFile(img, nil, 0o644)
		os.Truncate(img, int64(c.mb)<<20)
		runIn(t, tmp, "mkfs.f2fs", append(append([]string{"-q", "-f"}, c.args...), img)...)
		ref := readBlocks(t, img)
		cfg, err := parseImageMkfsArgs(c.args)
		if err != nil {
			t.Fatal(err)
		}
		l, err := prepareImageLayout(uint64(c.mb)<<11, cfg)
		if err != nil {
			t.Fatalf("%d MiB %v: %v", c.mb, c.args, err)
		}
		want := DecodeRawSuper(ref(0)[SuperOffset:])
		got := l.sb.Clone()
		got.UUID, got.Crc = want.UUID, want.Crc
		copy(got.Raw[sbVersion:sbInitVersion+VersionLen], want.Raw[sbVersion:sbInitVersion+VersionLen])
		gb, wb := got.Encode()[:sbCrcOffset], want.Raw[:sbCrcOffset]
		if !bytes.Equal(gb, wb) {
			for i := range gb {
				if gb[i] != wb[i] {
					t.Fatalf("%d MiB %v: superblock differs from byte %d: %+v\nwant %+v", c.mb, c.args, i, *got, *want)
				}
			}
		}
		if c.mb > 100 {
			continue // the layout only: too large for a test device
		}
		dev := vfs.NewBlockDeviceSize(uint32(c.mb) << 8)
		tk := kernel.New().NewTask("mkfs")
		if err := mkfsDevice(tk, dev, c.args); err != nil {
			t.Fatal(err)
		}
		mine := func(a uint32) []byte { return dev.Block(a) }
		s := want
		wcp, gcp := DecodeCheckpoint(ref(s.CpBlkaddr)), DecodeCheckpoint(mine(s.CpBlkaddr))
		gcp.CheckpointVer = wcp.CheckpointVer
		if !bytes.Equal(gcp.Encode(), wcp.Raw[:]) {
			t.Fatalf("%d MiB %v: checkpoint\n got %+v\nwant %+v", c.mb, c.args, *gcp, *wcp)
		}
		rootNode := s.MainBlkaddr
		wn, gn := Node(bytes.Clone(ref(rootNode))), Node(bytes.Clone(mine(rootNode)))
		for _, off := range []int{iAtime, iCtime, iMtime, iCrtime} {
			copy(wn[off:off+8], gn[off:off+8])
		}
		wn.put32(iInodeChecksum, 0)
		gn.put32(iInodeChecksum, 0)
		if !bytes.Equal(wn, gn) {
			t.Fatalf("%d MiB %v: root inode differs", c.mb, c.args)
		}
		for _, a := range []uint32{s.MainBlkaddr + 3*512, s.NatBlkaddr, s.CpBlkaddr + 2, s.CpBlkaddr + 3, s.CpBlkaddr + 4} {
			if !bytes.Equal(ref(a), mine(a)) {
				t.Fatalf("%d MiB %v: block %d differs", c.mb, c.args, a)
			}
		}
		// The compacted summary: the same but for the SIT entries' mtime
		// (0 in both) — byte for byte.
		if !bytes.Equal(ref(s.CpBlkaddr+1), mine(s.CpBlkaddr+1)) {
			t.Fatalf("%d MiB %v: compacted summary differs", c.mb, c.args)
		}
		out := filepath.Join(tmp, "vfslab.img")
		if err := dev.SaveImage(out); err != nil {
			t.Fatal(err)
		}
		if ok, report := fsckClean(t, tmp, out); !ok {
			t.Fatalf("%d MiB %v: fsck.f2fs on vfslab's image:\n%s", c.mb, c.args, report)
		}
		tk.Exit()
	}
}

// readBlocks returns a reader of an image's blocks.
func readBlocks(t *testing.T, img string) func(uint32) []byte {
	return func(a uint32) []byte { return readBlock(t, img, a) }
}

// TestMkfsImageMount: vfslab's mkfs on a fixed-size device, then a mount
// from what it wrote, files made, a checkpoint, and a second mount that
// finds them (no tools needed).
func TestMkfsImageMount(t *testing.T) {
	dev := vfs.NewBlockDeviceSize(64 << 8)
	k := kernel.New()
	tk := k.NewTask("mkfs")
	defer tk.Exit()
	if err := mkfsDevice(tk, dev, []string{"-O", "encrypt,extra_attr,inode_checksum,sb_checksum"}); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		sys, p, err := vfs.Boot(tk, vfs.Config{}, Type, vfs.MountOptions{Device: dev, Source: "vdb", ReadOnly: dev.ReadOnly()})
		if err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, strings.Join(k.Log.Lines(), "\n"))
		}
		if round == 0 {
			if err := p.Mkdir(tk, "/d", 0o755); err != nil {
				t.Fatal(err)
			}
			fd, err := p.Open(tk, "/d/f", vfs.O_CREAT|vfs.O_RDWR, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			p.Write(tk, fd, bytes.Repeat([]byte("z"), 9000))
			p.Close(tk, fd)
			if err := F2FS_SB(sys.RootMount().SB).SyncFs(tk); err != nil {
				t.Fatal(err)
			}
			// The next boot reads the device again: release it.
			dev = cloneDevice(dev)
			continue
		}
		st, err := p.Stat(tk, "/d/f")
		if err != nil || st.Size != 9000 {
			t.Fatalf("after remount: %v %v", st, err)
		}
	}
}

// cloneDevice copies a device (a mounted root cannot be unmounted to
// release its device).
func cloneDevice(d *vfs.BlockDevice) *vfs.BlockDevice {
	n, err := d.Clone()
	if err != nil {
		panic(err)
	}
	return n
}
