package ext4

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Known-answer tests of the on-disk structures against images that mke2fs
// and debugfs make here (skipped without e2fsprogs): the superblock's
// fields and checksum as dumpe2fs prints them, group descriptor and bitmap
// checksums (crc32c with metadata_csum, crc16 with uninit_bg), the inode
// checksum, extent trees of depth 0 and 1 as debugfs lists them, and
// in-inode and block xattrs with their e_hash as e2fsprogs computed it.

func e2tool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return "/usr/sbin/" + name
}

func needE2fsprogs(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("image tests run e2fsprogs")
	}
	for _, n := range []string{"mke2fs", "debugfs", "dumpe2fs"} {
		if _, err := os.Stat(e2tool(n)); err != nil {
			t.Skipf("%s not installed (apt-get install e2fsprogs)", n)
		}
	}
}

// e2out runs a tool for its standard output.
func e2out(t *testing.T, name string, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(e2tool(name), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s%s", name, args, err, out, stderr.Bytes())
	}
	return string(out)
}

func hexField(t *testing.T, out, re string) uint64 {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q in:\n%s", re, out)
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(m[1], "0x"), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func decField(t *testing.T, out, re string) uint64 {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q in:\n%s", re, out)
	}
	v, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// kat builds an image with mke2fs args from a tree that has a small file
// and a sparse file of twelve islands (twelve extents: a depth-1 tree).
func katImage(t *testing.T, args ...string) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "small"), bytes.Repeat([]byte("s"), 9000), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(src, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 12; i++ {
		if _, err := f.WriteAt(bytes.Repeat([]byte{'x'}, 100), int64(i)*3*4096); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	img := filepath.Join(dir, "img")
	a := append([]string{"-q", "-F", "-t", "ext4", "-b", "4096"}, args...)
	a = append(a, "-d", src, img, "16M")
	if out, err := exec.Command(e2tool("mke2fs"), a...).CombinedOutput(); err != nil {
		t.Fatalf("mke2fs: %v\n%s", err, out)
	}
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	return img, data
}

func TestCrc16KnownAnswer(t *testing.T) {
	// CRC-16/ARC (the kernel's crc16) of "123456789".
	if got := Crc16(0, []byte("123456789")); got != 0xBB3D {
		t.Fatalf("crc16 = %#04x, want 0xbb3d", got)
	}
}

func TestOndiskSuperAndGroups(t *testing.T) {
	needE2fsprogs(t)
	for _, args := range [][]string{nil, {"-O", "^metadata_csum,uninit_bg"}, {"-O", "casefold,encrypt"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			img, data := katImage(t, args...)
			var s RawSuper
			copy(s[:], data[SuperblockOffset:])
			h := e2out(t, "dumpe2fs", "-h", img)
			if s.Magic() != SuperMagic {
				t.Fatalf("magic %#x", s.Magic())
			}
			for _, c := range []struct {
				re  string
				got uint64
			}{
				{`Inode count:\s+(\d+)`, uint64(s.InodesCount())},
				{`Block count:\s+(\d+)`, s.BlocksCount()},
				{`Free blocks:\s+(\d+)`, s.FreeBlocksCount()},
				{`Free inodes:\s+(\d+)`, uint64(s.FreeInodesCount())},
				{`Block size:\s+(\d+)`, uint64(s.BlockSize())},
				{`Inodes per group:\s+(\d+)`, uint64(s.InodesPerGroup())},
				{`Blocks per group:\s+(\d+)`, uint64(s.BlocksPerGroup())},
				{`First inode:\s+(\d+)`, uint64(s.FirstIno())},
				{`Inode size:\s+(\d+)`, uint64(s.InodeSize())},
				{`Reserved GDT blocks:\s+(\d+)`, uint64(s.ReservedGdtBlocks())},
				{`Journal inode:\s+(\d+)`, uint64(s.JournalInum())},
			} {
				if want := decField(t, h, c.re); want != c.got {
					t.Errorf("%s: %d, dumpe2fs %d", c.re, c.got, want)
				}
			}
			if u := s.UUID(); !strings.Contains(h, fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])) {
				t.Errorf("uuid %x not in dumpe2fs", u)
			}
			metadataCsum := s.RoCompat()&RoCompatMetadataCsum != 0
			if metadataCsum != (args == nil || args[1] == "casefold,encrypt") {
				t.Fatalf("metadata_csum %v with %v", metadataCsum, args)
			}
			if metadataCsum {
				if want := uint32(hexField(t, h, `Checksum:\s+(0x[0-9a-f]+)`)); s.SuperblockCsum() != want || s.Checksum() != want {
					t.Errorf("superblock csum %#x (stored %#x), dumpe2fs %#x", s.SuperblockCsum(), s.Checksum(), want)
				}
			}
			if strings.Contains(strings.Join(args, ""), "casefold") {
				if s.Encoding() != EncUTF8_12_1 || s.Incompat()&IncompatCasefold == 0 || s.Incompat()&IncompatEncrypt == 0 {
					t.Errorf("casefold image: s_encoding %d, incompat %#x", s.Encoding(), s.Incompat())
				}
			}
			// Group 0's descriptor and bitmaps.
			full := e2out(t, "dumpe2fs", img)
			seed := s.CsumSeed()
			gd := GroupDesc(data[s.BlockSize() : s.BlockSize()+s.DescSize()])
			wantCsum := uint16(hexField(t, full, `Group 0: \(Blocks [0-9-]+\)(?: \[[A-Z_, ]+\])? csum (0x[0-9a-f]+)`))
			if got := groupDescCsum(&s, seed, 0, gd); got != wantCsum || gd.Checksum() != wantCsum {
				t.Errorf("group 0 csum %#x (stored %#x), dumpe2fs %#x", got, gd.Checksum(), wantCsum)
			}
			if b := decField(t, full, `Block bitmap at (\d+)`); b != gd.BlockBitmap() {
				t.Errorf("block bitmap at %d, dumpe2fs %d", gd.BlockBitmap(), b)
			}
			if b := decField(t, full, `Inode table at (\d+)`); b != gd.InodeTable() {
				t.Errorf("inode table at %d, dumpe2fs %d", gd.InodeTable(), b)
			}
			if f := decField(t, full, `(\d+) free blocks,`); f != uint64(gd.FreeBlocks()) {
				t.Errorf("free blocks %d, dumpe2fs %d", gd.FreeBlocks(), f)
			}
			if metadataCsum {
				bs := s.BlockSize()
				bb := data[int(gd.BlockBitmap())*bs:]
				ib := data[int(gd.InodeBitmap())*bs:]
				if want := uint32(hexField(t, full, `Block bitmap at \d+ \(\+\d+\), csum (0x[0-9a-f]+)`)); bitmapCsum(seed, bb[:s.ClustersPerGroup()/8]) != want || gd.BlockBitmapCsum() != want {
					t.Errorf("block bitmap csum %#x, dumpe2fs %#x", gd.BlockBitmapCsum(), want)
				}
				if want := uint32(hexField(t, full, `Inode bitmap at \d+ \(\+\d+\), csum (0x[0-9a-f]+)`)); bitmapCsum(seed, ib[:s.InodesPerGroup()/8]) != want || gd.InodeBitmapCsum() != want {
					t.Errorf("inode bitmap csum %#x, dumpe2fs %#x", gd.InodeBitmapCsum(), want)
				}
			}
		})
	}
}

// rawInode returns inode ino's bytes from an image's data.
func rawInode(s *RawSuper, data []byte, ino uint32) RawInode {
	g := (ino - 1) / s.InodesPerGroup()
	bs := s.BlockSize()
	gdOff := bs*int(s.FirstDataBlock()+1) + int(g)*s.DescSize()
	gd := GroupDesc(data[gdOff : gdOff+s.DescSize()])
	off := int(gd.InodeTable())*bs + int((ino-1)%s.InodesPerGroup())*s.InodeSize()
	return RawInode(data[off : off+s.InodeSize()])
}

func TestOndiskInodesExtentsXattrs(t *testing.T) {
	needE2fsprogs(t)
	img, _ := katImage(t)
	// A short xattr (in the inode) and a long one (in a block).
	long := filepath.Join(t.TempDir(), "long")
	if err := os.WriteFile(long, bytes.Repeat([]byte("v"), 600), 0o644); err != nil {
		t.Fatal(err)
	}
	e2out(t, "debugfs", "-w", "-R", "ea_set /small user.foo bar", img)
	e2out(t, "debugfs", "-w", "-R", "ea_set -f "+long+" /sparse user.long", img)
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	var s RawSuper
	copy(s[:], data[SuperblockOffset:])
	nb := s.BlocksCount()
	bread := func(b uint64) []byte {
		if b >= nb {
			return nil
		}
		return data[int(b)*s.BlockSize() : int(b+1)*s.BlockSize()]
	}
	for _, name := range []string{"small", "sparse"} {
		st := e2out(t, "debugfs", "-R", "stat /"+name, img)
		ino := uint32(decField(t, e2out(t, "debugfs", "-R", "ls -l /", img), `(?m)^\s*(\d+)\s+\d+\s+\(\d+\).*\s`+name+`\s*$`))
		raw := rawInode(&s, data, ino)
		seed := inodeCsumSeed(s.CsumSeed(), ino, raw.Generation())
		if want := uint32(hexField(t, st, `Inode checksum: (0x[0-9a-f]+)`)); raw.InodeCsum(seed) != want || raw.Checksum() != want {
			t.Errorf("%s: inode csum %#x (stored %#x), debugfs %#x", name, raw.InodeCsum(seed), raw.Checksum(), want)
		}
		if got, want := raw.Size(), int64(decField(t, st, `Size: (\d+)`)); got != want {
			t.Errorf("%s: size %d, debugfs %d", name, got, want)
		}
		r := &extReader{bread: bread, blocksize: s.BlockSize(), nblocks: nb, csum: true, seed: seed}
		exts, err := r.readExtents(raw.IBlock())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		for _, n := range r.nodes {
			got = append(got, fmt.Sprintf("(ETB0):%d", n))
		}
		for _, e := range exts {
			got = append(got, e.String())
		}
		m := regexp.MustCompile(`EXTENTS:\n(.*)\n`).FindStringSubmatch(st)
		if m == nil || strings.Join(got, ", ") != m[1] {
			t.Errorf("%s: extents %q, debugfs %q", name, strings.Join(got, ", "), m)
		}
		// The tree written back from the same extents is the same tree.
		var iblock [iBlockLen]byte
		nodes := append([]uint64(nil), r.nodes...)
		written := map[uint64][]byte{}
		writeExtents(iblock[:], exts, nodes, func(b uint64) []byte {
			written[b] = make([]byte, s.BlockSize())
			return written[b]
		}, s.BlockSize(), true, seed)
		used := extHeaderSize + extEntrySize*int(readExtHeader(raw.IBlock()).entries)
		if !bytes.Equal(iblock[:used], raw.IBlock()[:used]) { // past eh_entries mke2fs leaves what was there
			t.Errorf("%s: i_block rewritten\n%x\nwas\n%x", name, iblock, raw.IBlock())
		}
		for b, w := range written {
			if !bytes.Equal(w[:extTailOffset(extSpaceBlock(s.BlockSize()))+4], bread(b)[:extTailOffset(extSpaceBlock(s.BlockSize()))+4]) {
				t.Errorf("%s: extent block %d rewritten differently", name, b)
			}
		}
		switch name {
		case "small":
			xs, err := ibodyXattrs(raw)
			if err != nil || len(xs) != 1 || xs[0].Index != 1 || xs[0].Name != "foo" || string(xs[0].Value) != "bar" {
				t.Fatalf("in-inode xattrs %+v, %v", xs, err)
			}
			// The model's own layout of the same attribute
			// (ext4_xattr_set_entry on an empty in-inode space) is
			// e2fsprogs's, e_hash 0 included: Linux 6.12 hashes only a
			// block's entries.
			space := append([]byte(nil), raw[GoodOldInodeSize+raw.ExtraIsize():]...)
			clear(space)
			s := &xattrSearch{buf: space[4:], notFound: true}
			if err := xattrSetEntry(s, xs[0].Index, xs[0].Name, xs[0].Value, false); err != nil {
				t.Fatal(err)
			}
			binary.LittleEndian.PutUint32(space, XattrMagic)
			if !bytes.Equal(space, raw[GoodOldInodeSize+raw.ExtraIsize():]) {
				t.Errorf("in-inode xattr layout differs:\n%x\n%x", space, raw[GoodOldInodeSize+raw.ExtraIsize():])
			}
		case "sparse":
			acl := raw.FileACL()
			if acl == 0 {
				t.Fatal("no xattr block")
			}
			xs, err := blockXattrs(bread(acl), acl, true, s.CsumSeed())
			if err != nil || len(xs) != 1 || xs[0].Name != "long" || len(xs[0].Value) != 600 {
				t.Fatalf("block xattrs %+v, %v", xs, err)
			}
			// e2fsprogs hashes a block's entries as the kernel does.
			if h := binary.LittleEndian.Uint32(bread(acl)[xattrBlockHeader+12:]); h != XattrHashEntry([]byte("long"), xs[0].Value) {
				t.Errorf("block e_hash %#x, model %#x", h, XattrHashEntry([]byte("long"), xs[0].Value))
			}
		}
	}
}
