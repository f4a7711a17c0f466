package f2fs

import "encoding/binary"

// The node address table, the segment information table and the segment
// summary area (struct f2fs_nat_entry, f2fs_sit_entry, f2fs_summary_block
// and their journals, include/linux/f2fs_fs.h).

// NAT, SIT and SSA constants.
const (
	// natEntrySize is sizeof(struct f2fs_nat_entry): version, ino,
	// block_addr, packed.
	natEntrySize = 9
	// NatEntryPerBlock is NAT_ENTRY_PER_BLOCK.
	NatEntryPerBlock = BlockSize / natEntrySize
	// SitVblockMapSize is SIT_VBLOCK_MAP_SIZE.
	SitVblockMapSize = 64
	// sitEntrySize is sizeof(struct f2fs_sit_entry): vblocks, valid_map,
	// mtime.
	sitEntrySize = 2 + SitVblockMapSize + 8
	// SitEntryPerBlock is SIT_ENTRY_PER_BLOCK.
	SitEntryPerBlock = BlockSize / sitEntrySize
	// SitVblocksShift and SitVblocksMask split vblocks into the segment
	// type and the valid block count.
	SitVblocksShift = 10
	SitVblocksMask  = 1<<SitVblocksShift - 1
	// EntriesInSum is ENTRIES_IN_SUM.
	EntriesInSum = 512
	// SummarySize is SUMMARY_SIZE, sizeof(struct f2fs_summary).
	SummarySize = 7
	// SumFooterSize is SUM_FOOTER_SIZE.
	SumFooterSize = 5
	// SumEntrySize is SUM_ENTRY_SIZE.
	SumEntrySize = SummarySize * EntriesInSum
	// SumJournalSize is SUM_JOURNAL_SIZE.
	SumJournalSize = BlockSize - SumFooterSize - SumEntrySize
	// natJournalEntrySize is sizeof(struct nat_journal_entry).
	natJournalEntrySize = 4 + natEntrySize
	// NatJournalEntries is NAT_JOURNAL_ENTRIES.
	NatJournalEntries = (SumJournalSize - 2) / natJournalEntrySize
	// sitJournalEntrySize is sizeof(struct sit_journal_entry).
	sitJournalEntrySize = 4 + sitEntrySize
	// SitJournalEntries is SIT_JOURNAL_ENTRIES.
	SitJournalEntries = (SumJournalSize - 2) / sitJournalEntrySize
	// SumTypeNode and SumTypeData are the summary footer's entry_type.
	SumTypeNode = 1
	SumTypeData = 0
)

// NatEntry is struct f2fs_nat_entry (and struct node_info without the nid).
type NatEntry struct {
	Version   uint8
	Ino       uint32
	BlockAddr uint32
}

// decodeNatEntry reads a packed f2fs_nat_entry.
func decodeNatEntry(b []byte) NatEntry {
	return NatEntry{Version: b[0], Ino: binary.LittleEndian.Uint32(b[1:]), BlockAddr: binary.LittleEndian.Uint32(b[5:])}
}

// put writes the packed entry.
func (e NatEntry) put(b []byte) {
	b[0] = e.Version
	binary.LittleEndian.PutUint32(b[1:], e.Ino)
	binary.LittleEndian.PutUint32(b[5:], e.BlockAddr)
}

// SitEntry is struct f2fs_sit_entry.
type SitEntry struct {
	Vblocks  uint16
	ValidMap [SitVblockMapSize]byte
	Mtime    uint64
}

// ValidBlocks is GET_SIT_VBLOCKS.
func (e *SitEntry) ValidBlocks() uint32 { return uint32(e.Vblocks & SitVblocksMask) }

// Type is GET_SIT_TYPE.
func (e *SitEntry) Type() uint32 { return uint32(e.Vblocks >> SitVblocksShift) }

func decodeSitEntry(b []byte) SitEntry {
	var e SitEntry
	e.Vblocks = binary.LittleEndian.Uint16(b)
	copy(e.ValidMap[:], b[2:2+SitVblockMapSize])
	e.Mtime = binary.LittleEndian.Uint64(b[2+SitVblockMapSize:])
	return e
}

func (e *SitEntry) put(b []byte) {
	binary.LittleEndian.PutUint16(b, e.Vblocks)
	copy(b[2:], e.ValidMap[:])
	binary.LittleEndian.PutUint64(b[2+SitVblockMapSize:], e.Mtime)
}

// Summary is struct f2fs_summary: the node owning a block (the nid of
// the dnode for a data block, the node's own nid for a node block), the
// node's version and the block's index in the dnode.
type Summary struct {
	Nid       uint32
	Version   uint8
	OfsInNode uint16
}

func decodeSummary(b []byte) Summary {
	return Summary{Nid: binary.LittleEndian.Uint32(b), Version: b[4], OfsInNode: binary.LittleEndian.Uint16(b[5:])}
}

func (s Summary) put(b []byte) {
	binary.LittleEndian.PutUint32(b, s.Nid)
	b[4] = s.Version
	binary.LittleEndian.PutUint16(b[5:], s.OfsInNode)
}

// Journal is struct f2fs_journal, the spare area of a summary block (or
// of a compacted summary): NAT or SIT entries newer than their tables.
type Journal struct {
	Nats []NatJournalEntry
	Sits []SitJournalEntry
}

// NatJournalEntry is struct nat_journal_entry.
type NatJournalEntry struct {
	Nid uint32
	NatEntry
}

// SitJournalEntry is struct sit_journal_entry.
type SitJournalEntry struct {
	Segno uint32
	SitEntry
}

// decodeNatJournal reads a NAT journal (n_nats, then the entries) of
// SumJournalSize bytes; a count past NatJournalEntries is cut to it.
func decodeNatJournal(b []byte) []NatJournalEntry {
	n := int(binary.LittleEndian.Uint16(b))
	n = min(n, NatJournalEntries)
	out := make([]NatJournalEntry, n)
	for i := range out {
		p := b[2+i*natJournalEntrySize:]
		out[i] = NatJournalEntry{Nid: binary.LittleEndian.Uint32(p), NatEntry: decodeNatEntry(p[4:])}
	}
	return out
}

// encodeNatJournal writes a NAT journal into b (SumJournalSize bytes).
func encodeNatJournal(b []byte, js []NatJournalEntry) {
	clear(b[:SumJournalSize])
	binary.LittleEndian.PutUint16(b, uint16(len(js)))
	for i, j := range js {
		p := b[2+i*natJournalEntrySize:]
		binary.LittleEndian.PutUint32(p, j.Nid)
		j.NatEntry.put(p[4:])
	}
}

// decodeSitJournal reads a SIT journal of SumJournalSize bytes.
func decodeSitJournal(b []byte) []SitJournalEntry {
	n := int(binary.LittleEndian.Uint16(b))
	n = min(n, SitJournalEntries)
	out := make([]SitJournalEntry, n)
	for i := range out {
		p := b[2+i*sitJournalEntrySize:]
		out[i] = SitJournalEntry{Segno: binary.LittleEndian.Uint32(p), SitEntry: decodeSitEntry(p[4:])}
	}
	return out
}

// encodeSitJournal writes a SIT journal into b (SumJournalSize bytes).
func encodeSitJournal(b []byte, js []SitJournalEntry) {
	clear(b[:SumJournalSize])
	binary.LittleEndian.PutUint16(b, uint16(len(js)))
	for i := range js {
		p := b[2+i*sitJournalEntrySize:]
		binary.LittleEndian.PutUint32(p, js[i].Segno)
		js[i].SitEntry.put(p[4:])
	}
}

// SummaryBlock is struct f2fs_summary_block: 512 summaries, the journal
// (NAT for the hot data log, SIT for the cold data log), the footer.
type SummaryBlock struct {
	Entries   [EntriesInSum]Summary
	EntryType uint8
	CheckSum  uint32
	// Journal is the raw spare area (SumJournalSize bytes).
	Journal [SumJournalSize]byte
}

// DecodeSummaryBlock decodes a 4 KiB summary block.
func DecodeSummaryBlock(b []byte) *SummaryBlock {
	s := &SummaryBlock{}
	for i := range s.Entries {
		s.Entries[i] = decodeSummary(b[i*SummarySize:])
	}
	copy(s.Journal[:], b[SumEntrySize:SumEntrySize+SumJournalSize])
	s.EntryType = b[BlockSize-SumFooterSize]
	s.CheckSum = binary.LittleEndian.Uint32(b[BlockSize-SumFooterSize+1:])
	return s
}

// Encode writes the summary block into b (4 KiB).
func (s *SummaryBlock) Encode(b []byte) {
	for i := range s.Entries {
		s.Entries[i].put(b[i*SummarySize:])
	}
	copy(b[SumEntrySize:], s.Journal[:])
	b[BlockSize-SumFooterSize] = s.EntryType
	binary.LittleEndian.PutUint32(b[BlockSize-SumFooterSize+1:], s.CheckSum)
}
