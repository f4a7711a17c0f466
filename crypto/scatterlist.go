package crypto

import "fmt"

// Scatterlist is one entry of a struct scatterlist table
// (include/linux/scatterlist.h). The kernel describes memory as page +
// offset + length; the model holds the bytes as a slice. A table is a Go
// slice of entries; like sg_mark_end, End on an entry ends the table there
// even if the slice is longer.
//
// A request may span several entries and a cipher block may be split across
// two of them; the walk (see skcipher_walk in crypto/skcipher.c) handles
// that. Entries are plain values: declare them on the stack
// (`var sg [2]crypto.Scatterlist`) and they stay there. The memory an entry
// covers is stored through a pointer, so Go keeps it on the heap (as the
// page cache and kmalloc'd buffers the kernel hands to the Crypto API are).
type Scatterlist struct {
	buf []byte
	end bool
}

// SgInitOne is sg_init_one: a one-entry table over buf.
func SgInitOne(sg *Scatterlist, buf []byte) {
	*sg = Scatterlist{buf: buf, end: true}
}

// SgInitTable is sg_init_table: it clears the entries and marks the last one
// as the end.
func SgInitTable(sgl []Scatterlist) {
	clear(sgl)
	if len(sgl) > 0 {
		sgl[len(sgl)-1].end = true
	}
}

// SgSetBuf is sg_set_buf: the entry covers buf (its end mark is kept).
func SgSetBuf(sg *Scatterlist, buf []byte) {
	sg.buf = buf
}

// SgMarkEnd is sg_mark_end: the table ends at sg.
func SgMarkEnd(sg *Scatterlist) { sg.end = true }

// SgUnmarkEnd is sg_unmark_end.
func SgUnmarkEnd(sg *Scatterlist) { sg.end = false }

// Buf returns the memory the entry covers (sg_virt with its length).
func (sg *Scatterlist) Buf() []byte { return sg.buf }

// Len returns sg->length.
func (sg *Scatterlist) Len() int { return len(sg.buf) }

// IsLast is sg_is_last.
func (sg *Scatterlist) IsLast() bool { return sg.end }

// String is the canonical one-line dump: "sg{len=16 end}".
func (sg *Scatterlist) String() string {
	if sg.end {
		return fmt.Sprintf("sg{len=%d end}", len(sg.buf))
	}
	return fmt.Sprintf("sg{len=%d}", len(sg.buf))
}

// SgNents is sg_nents: the number of entries up to and including the one
// marked as the end (or the whole slice).
func SgNents(sgl []Scatterlist) int {
	for i := range sgl {
		if sgl[i].end {
			return i + 1
		}
	}
	return len(sgl)
}

// sgTotal returns the number of bytes the table covers.
func sgTotal(sgl []Scatterlist) int {
	n := 0
	for i := range sgl {
		n += len(sgl[i].buf)
		if sgl[i].end {
			break
		}
	}
	return n
}

// sgCopyToBuf gathers the first len(buf) bytes of the table into buf
// (scatterwalk_map_and_copy, out == 0). The caller checked the table is
// long enough.
func sgCopyToBuf(buf []byte, sgl []Scatterlist) {
	off := 0
	for i := 0; i < len(sgl) && off < len(buf); i++ {
		off += copy(buf[off:], sgl[i].buf)
		if sgl[i].end {
			break
		}
	}
}

// sgCopyFromBuf scatters buf into the table (scatterwalk_map_and_copy,
// out == 1).
func sgCopyFromBuf(sgl []Scatterlist, buf []byte) {
	off := 0
	for i := 0; i < len(sgl) && off < len(buf); i++ {
		off += copy(sgl[i].buf, buf[off:])
		if sgl[i].end {
			break
		}
	}
}
