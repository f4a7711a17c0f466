package ext4

import (
	"encoding/binary"
	"fmt"

	"github.com/vfslab/vfslab/kernel"
)

// Journal recovery (fs/jbd2/recovery.c: jbd2_journal_recover, do_one_pass)
// of the internal journal (inode s_journal_inum) when the superblock says
// needs_recovery: the log from s_start is scanned for the committed
// transactions (PASS_SCAN), their revoke records collected (PASS_REVOKE),
// and every logged block written to its place unless a later revoke
// cancels it (PASS_REPLAY); then the journal is marked empty (s_start 0,
// s_head after the replayed transactions) and needs_recovery cleared.
// A commit block whose checksum (v2, v3) fails ends the log; the
// descriptors' and the blocks' checksums are not verified (a well-formed
// log replays the same; a torn one ends at the first block whose header
// does not continue the sequence).

// jbd2 block types and features (include/linux/jbd2.h).
const (
	jbd2DescriptorBlock = 1
	jbd2CommitBlock     = 2
	jbd2SuperblockV1    = 3
	jbd2RevokeBlock     = 5

	jbd2FeatureIncompatRevoke = 0x1
	jbd2FeatureIncompat64bit  = 0x2
	jbd2FeatureIncompatCsumV2 = 0x8
	jbd2FeatureIncompatCsumV3 = 0x10

	jbd2FlagEscape   = 1
	jbd2FlagSameUUID = 2
	jbd2FlagLastTag  = 8

	jbd2FeatureCompatChecksum = 0x1 // checksum v1
	jbd2FeatureIncompatAsync  = 0x4 // async_commit
	jbd2Crc32cChksum          = 4   // JBD2_CRC32C_CHKSUM, s_checksum_type

	// journal_superblock_t (big-endian).
	jsbBlocksize       = 0x0C
	jsbMaxlen          = 0x10
	jsbFirst           = 0x14
	jsbSequence        = 0x18
	jsbStart           = 0x1C
	jsbFeatureCompat   = 0x24
	jsbFeatureIncompat = 0x28
	jsbUUID            = 0x30
	jsbChecksumType    = 0x50
	jsbHead            = 0x58 // s_head, the cycled log (Linux 6.5)
	jsbChecksum        = 0xFC

	// journal_header_t, the revoke header, commit_header.
	journalHeaderSize = 12
	revokeHeaderSize  = 16
	commitChksumType  = 0x0C
	commitChksum      = 0x10
	commitSec         = 0x30
	commitNsec        = 0x38
)

// journal is the journal's superblock fields recovery uses, and the map
// from log block to filesystem block.
type journal struct {
	d        *diskFS
	blocks   []uint64 // log block -> filesystem block
	first    uint32
	maxlen   uint32
	start    uint32
	sequence uint32
	incompat uint32
	bs       int
	// head is the log block after the last committed transaction the
	// scan found (recovery_info's head_block).
	head uint32
	// seed is j_csum_seed (checksums v2 and v3).
	seed uint32
}

func (j *journal) tagBytes() int {
	if j.incompat&jbd2FeatureIncompatCsumV3 != 0 {
		return 16
	}
	sz := 12
	if j.incompat&jbd2FeatureIncompatCsumV2 != 0 {
		sz += 2
	}
	if j.incompat&jbd2FeatureIncompat64bit != 0 {
		return sz
	}
	return sz - 4
}

// block returns log block n (wrapped into [s_first, s_maxlen)).
func (j *journal) block(n uint32) []byte {
	if n >= uint32(len(j.blocks)) || j.blocks[n] == 0 {
		return nil
	}
	return j.d.bread(j.blocks[n])
}

func (j *journal) wrap(n uint32) uint32 {
	if n >= j.maxlen {
		n -= j.maxlen - j.first
	}
	return n
}

// loadJournal reads the journal inode's map and superblock.
func (d *diskFS) loadJournal(t *kernel.Task, id string) (*journal, error) {
	ino := d.es.JournalInum()
	raw := d.inodeLoc(ino)
	if ino == 0 || raw == nil {
		return nil, fmt.Errorf("no journal inode %d", ino)
	}
	var exts []Extent
	var err error
	if raw.Flags()&ExtentsFL != 0 {
		r := &extReader{bread: d.bread, blocksize: d.bs, nblocks: d.nblocks}
		exts, err = r.readExtents(raw.IBlock())
	} else {
		exts, _, err = readIndirect(raw.IBlock(), d.bread, d.bs, d.nblocks, raw.Size())
	}
	if err != nil {
		return nil, err
	}
	n := uint64(raw.Size()) / uint64(d.bs)
	if n < 2 || n > d.nblocks {
		return nil, fmt.Errorf("journal inode size %d", raw.Size())
	}
	j := &journal{d: d, blocks: make([]uint64, n), bs: d.bs}
	for _, e := range exts {
		for k := uint32(0); k < e.Len; k++ {
			if l := uint64(e.Lblk) + uint64(k); l < n {
				j.blocks[l] = e.Pblk + uint64(k)
			}
		}
	}
	sb := j.block(0)
	be := binary.BigEndian
	if sb == nil || be.Uint32(sb) != jbd2Magic {
		return nil, fmt.Errorf("journal superblock magic")
	}
	if bt := be.Uint32(sb[4:]); bt != jbd2SuperblockV1 && bt != jbd2SuperblockV2 {
		return nil, fmt.Errorf("journal superblock type %d", bt)
	}
	if int(be.Uint32(sb[jsbBlocksize:])) != d.bs {
		return nil, fmt.Errorf("journal block size %d", be.Uint32(sb[jsbBlocksize:]))
	}
	j.maxlen, j.first = be.Uint32(sb[jsbMaxlen:]), be.Uint32(sb[jsbFirst:])
	j.sequence, j.start = be.Uint32(sb[jsbSequence:]), be.Uint32(sb[jsbStart:])
	if be.Uint32(sb[4:]) == jbd2SuperblockV2 {
		j.incompat = be.Uint32(sb[jsbFeatureIncompat:])
	}
	j.seed = Crc32c(^uint32(0), sb[jsbUUID:jsbUUID+16])
	if j.maxlen > uint32(n) || j.first == 0 || j.first >= j.maxlen || (j.start != 0 && (j.start < j.first || j.start >= j.maxlen)) {
		return nil, fmt.Errorf("journal geometry first %d maxlen %d start %d", j.first, j.maxlen, j.start)
	}
	return j, nil
}

// pass is do_one_pass: it walks the log from s_start and calls fn for
// every tag of every committed transaction's descriptor (with the log
// block holding the data) and for every revoke record; it returns the
// sequence after the last committed transaction.
func (j *journal) pass(onTag func(seq uint32, logBlk uint32, target uint64, flags uint32), onRevoke func(seq uint32, target uint64), endSeq uint32, scan bool) (uint32, error) {
	be := binary.BigEndian
	next, seq := j.start, j.sequence
	if scan {
		j.head = next
	}
	tb := j.tagBytes()
	tail := 0
	if j.incompat&(jbd2FeatureIncompatCsumV2|jbd2FeatureIncompatCsumV3) != 0 {
		tail = 4
	}
	for steps := 0; steps < int(j.maxlen)*2; steps++ {
		if !scan && seq >= endSeq {
			return seq, nil
		}
		b := j.block(next)
		if b == nil || be.Uint32(b) != jbd2Magic || be.Uint32(b[8:]) != seq {
			return seq, nil
		}
		next = j.wrap(next + 1)
		switch be.Uint32(b[4:]) {
		case jbd2DescriptorBlock:
			for off := journalHeaderSize; off+tb <= j.bs-tail; {
				target := uint64(be.Uint32(b[off:]))
				var flags uint32
				if j.incompat&jbd2FeatureIncompatCsumV3 != 0 {
					flags = be.Uint32(b[off+4:])
					if j.incompat&jbd2FeatureIncompat64bit != 0 {
						target |= uint64(be.Uint32(b[off+8:])) << 32
					}
				} else {
					flags = uint32(be.Uint16(b[off+6:]))
					if j.incompat&jbd2FeatureIncompat64bit != 0 {
						target |= uint64(be.Uint32(b[off+8:])) << 32
					}
				}
				if onTag != nil {
					onTag(seq, next, target, flags)
				}
				next = j.wrap(next + 1)
				off += tb
				if flags&jbd2FlagSameUUID == 0 {
					off += 16
				}
				if flags&jbd2FlagLastTag != 0 {
					break
				}
			}
		case jbd2CommitBlock:
			// A commit block whose checksum fails ends the log: its
			// transaction never committed (do_one_pass's chksum_error,
			// without async_commit).
			if tail != 0 && !commitBlockCsumVerify(j.seed, b) {
				return seq, nil
			}
			seq++
			if scan {
				j.head = next
			}
		case jbd2RevokeBlock:
			rsize := 4
			if j.incompat&jbd2FeatureIncompat64bit != 0 {
				rsize = 8
			}
			count := int(be.Uint32(b[journalHeaderSize:]))
			if count > j.bs-tail {
				return seq, fmt.Errorf("revoke block count %d", count)
			}
			for off := revokeHeaderSize; off+rsize <= count; off += rsize {
				var target uint64
				if rsize == 8 {
					target = be.Uint64(b[off:])
				} else {
					target = uint64(be.Uint32(b[off:]))
				}
				if onRevoke != nil {
					onRevoke(seq, target)
				}
			}
		default:
			return seq, nil
		}
	}
	return seq, fmt.Errorf("journal does not end")
}

// commitBlockCsumVerify is jbd2_commit_block_csum_verify: h_chksum[0]
// is the crc32c of the block with it zeroed.
func commitBlockCsumVerify(seed uint32, b []byte) bool {
	c := append([]byte(nil), b...)
	want := binary.BigEndian.Uint32(c[commitChksum:])
	binary.BigEndian.PutUint32(c[commitChksum:], 0)
	return Crc32c(seed, c) == want
}

// recoverJournal is jbd2_journal_recover followed by ext4's clearing of
// needs_recovery: the three passes, the journal superblock left empty
// with the next sequence, the filesystem's superblock re-read from the
// device (the log may have held it) and written back without the flag.
func (d *diskFS) recoverJournal(t *kernel.Task, id string) error {
	j, err := d.loadJournal(t, id)
	if err != nil {
		t.Printk("JBD2: journal recovery failed: %v", err)
		imageMsg(t, id, "error loading journal")
		return err
	}
	if j.start == 0 {
		return d.clearRecover()
	}
	end, err := j.pass(nil, nil, 0, true)
	if err != nil {
		return err
	}
	revoked := map[uint64]uint32{}
	if _, err := j.pass(nil, func(seq uint32, target uint64) {
		if s, ok := revoked[target]; !ok || seq > s {
			revoked[target] = seq
		}
	}, end, false); err != nil {
		return err
	}
	replayed := 0
	if _, err := j.pass(func(seq uint32, logBlk uint32, target uint64, flags uint32) {
		if s, ok := revoked[target]; ok && s >= seq {
			return
		}
		src, dst := j.block(logBlk), d.bread(target)
		if src == nil || dst == nil {
			return
		}
		copy(dst, src)
		if flags&jbd2FlagEscape != 0 {
			binary.BigEndian.PutUint32(dst, jbd2Magic)
		}
		replayed++
	}, nil, end, false); err != nil {
		return err
	}
	t.Printk("JBD2: recovery done: %d transactions, %d blocks replayed", end-j.sequence, replayed)
	sb := j.block(0)
	binary.BigEndian.PutUint32(sb[jsbSequence:], end)
	binary.BigEndian.PutUint32(sb[jsbStart:], 0)
	// The log continues after the replayed transactions (the cycled
	// log: jbd2_journal_recover's j_head, kept in s_head).
	binary.BigEndian.PutUint32(sb[jsbHead:], j.head)
	if j.incompat&(jbd2FeatureIncompatCsumV2|jbd2FeatureIncompatCsumV3) != 0 {
		binary.BigEndian.PutUint32(sb[jsbChecksum:], 0)
		binary.BigEndian.PutUint32(sb[jsbChecksum:], Crc32c(^uint32(0), sb[:1024]))
	}
	if _, err := d.dev.ReadAt(d.es[:], SuperblockOffset); err != nil {
		return err
	}
	return d.clearRecover()
}

// clearRecover clears needs_recovery and writes the superblock.
func (d *diskFS) clearRecover() error {
	d.es.put32(sFeatureIncompat, d.es.Incompat()&^IncompatRecover)
	d.es.SuperblockCsumSet()
	_, err := d.dev.WriteAt(d.es[:], SuperblockOffset)
	return err
}
