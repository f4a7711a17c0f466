package f2fs

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Known answers for the on-disk structures: an image made by mkfs.f2fs is
// decoded and compared field by field with what dump.f2fs prints of it;
// re-encoding gives back the same bytes (checksums included), and the
// root inode's checksum is the one mkfs wrote.

var reDumpField = regexp.MustCompile(`(?m)^(\w+(?:\[\w+\])?)\s+\[0x\s*[0-9a-f]+ : (\d+)\]`)

func dumpFields(out string) map[string]uint64 {
	m := map[string]uint64{}
	for _, f := range reDumpField.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseUint(f[2], 10, 64)
		if _, dup := m[f[1]]; !dup {
			m[f[1]] = v
		}
	}
	return m
}

func TestOndiskKnownAnswers(t *testing.T) {
	needTools(t, "mkfs.f2fs", "dump.f2fs")
	for _, args := range [][]string{
		{"-O", "extra_attr,inode_checksum,sb_checksum"},
		{"-O", "encrypt,casefold,extra_attr,inode_checksum,sb_checksum", "-C", "utf8:strict"},
		{},
	} {
		tmp := t.TempDir()
		img := filepath.Join(tmp, "img")
		os.WriteFile(img, nil, 0o644)
		os.Truncate(img, 100<<20)
		runIn(t, tmp, "mkfs.f2fs", append(append([]string{"-q", "-f"}, args...), img)...)
		raw, err := os.ReadFile(img)
		if err != nil {
			t.Fatal(err)
		}
		out := runIn(t, tmp, "dump.f2fs", "-d", "1", img)
		sbOut, cpOut, _ := strings.Cut(out, "| Checkpoint")
		want, wantCp := dumpFields(sbOut), dumpFields(cpOut)
		s := DecodeRawSuper(raw[SuperOffset : SuperOffset+superSize])
		for name, got := range map[string]uint64{
			"magic": uint64(s.Magic), "major_ver": uint64(s.MajorVer), "minor_ver": uint64(s.MinorVer),
			"log_sectorsize": uint64(s.LogSectorSize), "log_blocks_per_seg": uint64(s.LogBlocksPerSeg),
			"checksum_offset": uint64(s.ChecksumOffset), "block_count": s.BlockCount,
			"section_count": uint64(s.SectionCount), "segment_count": uint64(s.SegmentCount),
			"segment_count_ckpt": uint64(s.SegmentCountCkpt), "segment_count_sit": uint64(s.SegmentCountSit),
			"segment_count_nat": uint64(s.SegmentCountNat), "segment_count_ssa": uint64(s.SegmentCountSsa),
			"segment_count_main": uint64(s.SegmentCountMain), "segment0_blkaddr": uint64(s.Segment0Blkaddr),
			"cp_blkaddr": uint64(s.CpBlkaddr), "sit_blkaddr": uint64(s.SitBlkaddr), "nat_blkaddr": uint64(s.NatBlkaddr),
			"ssa_blkaddr": uint64(s.SsaBlkaddr), "main_blkaddr": uint64(s.MainBlkaddr), "root_ino": uint64(s.RootIno),
			"node_ino": uint64(s.NodeIno), "meta_ino": uint64(s.MetaIno), "cp_payload": uint64(s.CpPayload),
			"crc": uint64(s.Crc),
		} {
			if w, ok := want[name]; !ok || w != got {
				t.Errorf("%v: %s = %d, dump.f2fs says %d (%v)", args, name, got, w, ok)
			}
		}
		if s.Magic != SuperMagic || (s.HasFeature(FeatSbChksum) && f2fsCrc32(s.Raw[:sbCrcOffset]) != s.Crc) {
			t.Errorf("%v: magic %x, crc %x, computed %x", args, s.Magic, s.Crc, f2fsCrc32(s.Raw[:sbCrcOffset]))
		}
		c := s.Clone()
		if !bytes.Equal(c.Encode(), raw[SuperOffset:SuperOffset+superSize]) {
			t.Errorf("%v: superblock does not re-encode to its bytes", args)
		}
		if len(args) > 2 && (s.Encoding != encUTF8_12_1 || s.EncodingFlags != EncStrictModeFL || !s.HasFeature(FeatCasefold|FeatEncrypt)) {
			t.Errorf("%v: encoding %d flags %x features %v", args, s.Encoding, s.EncodingFlags, FeatureNames(s.Feature))
		}

		cpb := raw[int(s.CpBlkaddr)*BlockSize:][:BlockSize]
		cp := DecodeCheckpoint(cpb)
		for name, got := range map[string]uint64{
			"checkpoint_ver": cp.CheckpointVer, "user_block_count": cp.UserBlockCount,
			"valid_block_count": cp.ValidBlockCount, "rsvd_segment_count": uint64(cp.RsvdSegmentCount),
			"overprov_segment_count": uint64(cp.OverprovSegmentCount), "free_segment_count": uint64(cp.FreeSegmentCount),
			"cur_node_segno[0]": uint64(cp.CurNodeSegno[0]), "cur_data_segno[2]": uint64(cp.CurDataSegno[2]),
			"cur_node_blkoff[0]": uint64(cp.CurNodeBlkoff[0]), "ckpt_flags": uint64(cp.CkptFlags),
			"cp_pack_total_block_count": uint64(cp.CpPackTotalBlockCount), "cp_pack_start_sum": uint64(cp.CpPackStartSum),
			"valid_node_count": uint64(cp.ValidNodeCount), "valid_inode_count": uint64(cp.ValidInodeCount),
			"next_free_nid": uint64(cp.NextFreeNid), "sit_ver_bitmap_bytesize": uint64(cp.SitVerBitmapBytesize),
			"nat_ver_bitmap_bytesize": uint64(cp.NatVerBitmapBytesize), "checksum_offset": uint64(cp.ChecksumOffset),
		} {
			if w, ok := wantCp[name]; !ok || w != got {
				t.Errorf("%v: checkpoint %s = %d, dump.f2fs says %d (%v)", args, name, got, w, ok)
			}
		}
		if !cp.CrcValid() {
			t.Errorf("%v: checkpoint crc invalid", args)
		}
		again := DecodeCheckpoint(cpb)
		if !bytes.Equal(again.Encode(), cpb) {
			t.Errorf("%v: checkpoint does not re-encode to its bytes", args)
		}

		// The root inode: its NAT entry (in the hot data summary's
		// journal or the NAT), its node block and its checksum.
		im := &imageInfo{raw: s, ckpt: cp, cpStart: s.CpBlkaddr, blocksPerSeg: s.BlocksPerSeg()}
		im.natBitmap = cp.bitmapPtr(natBitmap, 0, nil)[:cp.NatVerBitmapBytesize]
		var ne NatEntry
		found := false
		hot := raw[int(im.sumBlkAddr(nrCursegPersistType, CursegHotData))*BlockSize:][:BlockSize]
		sum := DecodeSummaryBlock(hot)
		for _, j := range decodeNatJournal(sum.Journal[:]) {
			if j.Nid == RootIno {
				ne, found = j.NatEntry, true
			}
		}
		if !found {
			nb := raw[int(im.currentNatAddr(RootIno))*BlockSize:]
			ne = decodeNatEntry(nb[RootIno*natEntrySize:])
		}
		if ne.Ino != RootIno || ne.BlockAddr < s.MainBlkaddr {
			t.Fatalf("%v: root NAT entry %+v", args, ne)
		}
		n := Node(raw[int(ne.BlockAddr)*BlockSize:][:BlockSize])
		if n.NidOfNode() != RootIno || !n.IsInode() || n.Mode()&SIfmt != SIfdir {
			t.Fatalf("%v: root node %+v mode %o inline %x", args, n.Footer(), n.Mode(), n.Inline())
		}
		seed := f2fsChksum(^uint32(0), s.UUID[:])
		if enableInodeChksum(s.Feature, n) != s.HasFeature(FeatInodeChksum) {
			t.Errorf("%v: inode checksum enabled %v", args, enableInodeChksum(s.Feature, n))
		}
		if s.HasFeature(FeatInodeChksum) && inodeChksum(seed, n) != n.InodeChecksum() {
			t.Errorf("%v: root checksum %x, computed %x", args, n.InodeChecksum(), inodeChksum(seed, n))
		}
		var blk [BlockSize]byte
		sum.Encode(blk[:])
		if !bytes.Equal(blk[:], hot) {
			t.Errorf("%v: summary block does not re-encode to its bytes", args)
		}
	}
}

// TestXattrRoundTrip: the inline xattr format (header, entries aligned to
// 4 bytes, a zero word at the end) decodes what it encodes, and a buffer
// too small is refused.
func TestXattrRoundTrip(t *testing.T) {
	ctx := bytes.Repeat([]byte{0xc}, 40)
	xs := []Xattr{{Index: XattrIndexEncryption, Name: "c", Value: ctx}, {Index: 1, Name: "user.x", Value: []byte("vv")}}
	buf := make([]byte, 4*DefaultInlineXattrAddrs)
	if !encodeXattrs(buf, xs) {
		t.Fatal("did not fit")
	}
	if want := xattrHeaderSize + xattrEntrySize(1, 40); buf[want] != 1 || buf[xattrHeaderSize] != XattrIndexEncryption {
		t.Fatalf("layout: % x", buf[:80])
	}
	got, err := parseXattrs(buf)
	if err != nil || len(got) != 2 || !bytes.Equal(got[0].Value, ctx) || got[1].Name != "user.x" {
		t.Fatalf("%+v %v", got, err)
	}
	if encodeXattrs(make([]byte, 60), xs) {
		t.Fatal("fitted 60 bytes")
	}
	buf[xattrHeaderSize+1] = 200 // a name running past the buffer
	if _, err := parseXattrs(buf); err == nil {
		t.Fatal("corrupt entry accepted")
	}
}

// TestJournalRoundTrip: the NAT and SIT journals of a summary block
// decode what they encode, and a count past the journal's room is cut.
func TestJournalRoundTrip(t *testing.T) {
	var b [SumJournalSize]byte
	nats := []NatJournalEntry{{Nid: 7, NatEntry: NatEntry{Version: 1, Ino: 7, BlockAddr: 4096}}, {Nid: 9, NatEntry: NatEntry{Ino: 3, BlockAddr: 5000}}}
	encodeNatJournal(b[:], nats)
	if got := decodeNatJournal(b[:]); len(got) != 2 || got[1] != nats[1] || got[0] != nats[0] {
		t.Fatalf("%+v", got)
	}
	sits := []SitJournalEntry{{Segno: 3, SitEntry: SitEntry{Vblocks: 1<<SitVblocksShift | 2, Mtime: 9}}}
	sits[0].ValidMap[0] = 0xc0
	encodeSitJournal(b[:], sits)
	if got := decodeSitJournal(b[:]); len(got) != 1 || got[0] != sits[0] || got[0].ValidBlocks() != 2 || got[0].Type() != 1 {
		t.Fatalf("%+v", got)
	}
	b[0], b[1] = 0xff, 0xff
	if got := decodeNatJournal(b[:]); len(got) != NatJournalEntries {
		t.Fatalf("%d entries", len(got))
	}
}

// TestOndiskBaseImage pins the committed base image's checksums without
// the tools: both superblock copies carry the crc f2fs_crc32 computes,
// the checkpoint in use is valid and re-encodes to its bytes, and every
// inode the NAT maps has the checksum f2fs_inode_chksum computes.
func TestOndiskBaseImage(t *testing.T) {
	f, err := os.Open("testdata/image-base.img.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	blk := func(a uint32) []byte { return raw[int(a)*BlockSize:][:BlockSize] }
	var s *RawSuper
	for b := uint32(0); b < 2; b++ {
		s = DecodeRawSuper(blk(b)[SuperOffset:])
		if s.Magic != SuperMagic || !s.HasFeature(FeatSbChksum) || f2fsCrc32(s.Raw[:sbCrcOffset]) != s.Crc {
			t.Fatalf("superblock %d: magic %x crc %x computed %x", b, s.Magic, s.Crc, f2fsCrc32(s.Raw[:sbCrcOffset]))
		}
		if !bytes.Equal(s.Clone().Encode(), blk(b)[SuperOffset:SuperOffset+superSize]) {
			t.Fatalf("superblock %d does not re-encode to its bytes", b)
		}
	}
	cp := DecodeCheckpoint(blk(s.CpBlkaddr))
	if !cp.CrcValid() || !bytes.Equal(DecodeCheckpoint(blk(s.CpBlkaddr)).Encode(), blk(s.CpBlkaddr)) {
		t.Fatal("checkpoint crc")
	}
	im := &imageInfo{raw: s, ckpt: cp, cpStart: s.CpBlkaddr, blocksPerSeg: s.BlocksPerSeg()}
	im.natBitmap = cp.bitmapPtr(natBitmap, 0, nil)[:cp.NatVerBitmapBytesize]
	seed := f2fsChksum(^uint32(0), s.UUID[:])
	inodes := 0
	for nid := uint32(RootIno); nid < 64; nid++ {
		e := decodeNatEntry(blk(im.currentNatAddr(nid))[nid*natEntrySize:])
		if e.BlockAddr == NullAddr || e.Ino != nid {
			continue
		}
		n := Node(blk(e.BlockAddr))
		if !n.IsInode() || n.NidOfNode() != nid {
			continue
		}
		if !enableInodeChksum(s.Feature, n) || inodeChksum(seed, n) != n.InodeChecksum() {
			t.Fatalf("inode %d: checksum %x, computed %x", nid, n.InodeChecksum(), inodeChksum(seed, n))
		}
		inodes++
	}
	if inodes != 48 { // the root and the 47 names under it
		t.Fatalf("%d inodes checked", inodes)
	}
}
