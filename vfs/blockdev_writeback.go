package vfs

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/vfslab/vfslab/errno"
)

// Atomic write-back of an attached image.
//
// Sync writes only the blocks that changed since the last write-back, in
// place, behind a write-ahead record kept beside the image (IMAGE plus
// WALSuffix), as a journalling filesystem commits a transaction:
//
//  1. every changed block (its number and contents, or a mark for a block
//     that became zeroes) goes to the record, which ends with a CRC32C of
//     all of it; the record is flushed (fsync) and its directory too;
//  2. the blocks are written in place in the image (a block of zeroes
//     punches a hole, so that the image stays sparse), and the image is
//     flushed;
//  3. the record is removed (and the directory flushed).
//
// Killed at any moment, the image is its state before the write-back (the
// record is incomplete or absent: nothing was written in place) or after
// it (the record is complete: OpenImage replays it, which is idempotent).
// The image file is never truncated or replaced, so its owner, mode, links
// and holes stay.

// WALSuffix is the suffix of the write-ahead record kept beside an image
// while it is written back.
const WALSuffix = ".vfslab-wal"

// The record's layout (little-endian): a 32-byte header (walMagic, the
// version, PageSize, the image's size, the number of entries), then each
// entry (the block number, its kind, 4 bytes of padding and, for a data
// block, PageSize bytes), then the CRC32C of everything before it and
// walEnd.
const (
	walMagic   = "VFSLABWB"
	walEnd     = "VFSLBEND"
	walVersion = 1
	walData    = 0
	walZero    = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// imageFile is a host image attached as a device: its path and open,
// locked file.
type imageFile struct {
	path     string
	f        *os.File
	writable bool
	unlock   func()
}

// walEntry is one block of a write-back.
type walEntry struct {
	addr uint32
	zero bool
}

// Sync writes a writable attached image back to its host file: the
// blocks changed since the last write-back, atomically (see above). It
// does nothing for a device with no backing file or one set read-only.
func (d *BlockDevice) Sync() error {
	if d.backing == "" || d.readOnly || d.img == nil || d.img.f == nil {
		return nil
	}
	if err := d.writeBack(); err != nil {
		return fmt.Errorf("%s: write-back: %w", d.backing, err)
	}
	return nil
}

// pageLen is the number of bytes of page addr inside the image.
func (d *BlockDevice) pageLen(addr uint32) int {
	return int(min(PageSize, d.imageSize-int64(addr)*PageSize))
}

// pageNow copies page addr's contents in memory into p; false when it was
// never read from the file (nothing changed).
func (d *BlockDevice) pageNow(addr uint32, p []byte) bool {
	pg, file := d.sp.peek(addr)
	if file {
		return false
	}
	if pg == nil {
		clear(p)
	} else {
		copy(p, pg)
	}
	return true
}

func (d *BlockDevice) writeBack() error {
	var cur, old [PageSize]byte
	var changes []walEntry
	// dataFrom is where the file's next data may start (SEEK_DATA): a
	// page of zeroes over a hole of the file has not changed, and is not
	// read (mkfs.f2fs discards every block of the device).
	dataFrom := int64(-1)
	err := d.sp.dirtyPages(func(a uint32) error {
		if a >= d.sp.n || !d.pageNow(a, cur[:]) {
			return nil
		}
		m := d.pageLen(a)
		off := int64(a) * PageSize
		if allZero(cur[:m]) {
			if off >= dataFrom {
				dataFrom = off
				if next, err := d.img.f.Seek(off, seekData); err == nil {
					dataFrom = next
				} else if errors.Is(err, errno.ENXIO) {
					dataFrom = d.imageSize // no data after off
				}
			}
			if off+int64(m) <= dataFrom {
				return nil
			}
		}
		if err := d.sp.readFilePage(a, old[:]); err != nil {
			return err
		}
		if string(cur[:m]) == string(old[:m]) {
			return nil
		}
		changes = append(changes, walEntry{a, allZero(cur[:m])})
		return nil
	})
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		d.sp.cleanAll()
		return nil
	}
	wal := d.img.path + WALSuffix
	if err := d.writeRecord(wal, changes); err != nil {
		os.Remove(wal)
		return err
	}
	f := d.img.f
	for _, c := range changes {
		off, m := int64(c.addr)*PageSize, d.pageLen(c.addr)
		if c.zero {
			err = zeroRange(f, off, int64(m))
		} else {
			d.pageNow(c.addr, cur[:])
			_, err = f.WriteAt(cur[:m], off)
		}
		if err != nil {
			// The record stays: the next attach completes the
			// write-back.
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := os.Remove(wal); err != nil {
		return err
	}
	d.sp.cleanAll()
	return syncDir(filepath.Dir(wal))
}

// writeRecord writes and flushes the write-ahead record of changes.
func (d *BlockDevice) writeRecord(path string, changes []walEntry) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	crc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	var hdr [32]byte
	copy(hdr[:8], walMagic)
	binary.LittleEndian.PutUint32(hdr[8:], walVersion)
	binary.LittleEndian.PutUint32(hdr[12:], PageSize)
	binary.LittleEndian.PutUint64(hdr[16:], uint64(d.imageSize))
	binary.LittleEndian.PutUint64(hdr[24:], uint64(len(changes)))
	w.Write(hdr[:])
	var page [PageSize]byte
	for _, c := range changes {
		var e [16]byte
		binary.LittleEndian.PutUint64(e[:], uint64(c.addr))
		if c.zero {
			binary.LittleEndian.PutUint32(e[8:], walZero)
			w.Write(e[:])
			continue
		}
		w.Write(e[:])
		d.pageNow(c.addr, page[:])
		w.Write(page[:])
	}
	if err := w.Flush(); err != nil {
		return err
	}
	var tail [12]byte
	binary.LittleEndian.PutUint32(tail[:], crc.Sum32())
	copy(tail[4:], walEnd)
	if _, err := f.Write(tail[:]); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// errTornRecord is a write-ahead record that is incomplete or not for
// this image: its write-back never began.
var errTornRecord = errors.New("torn write-ahead record")

// scanRecord reads the record r for an image of size bytes, calling fn
// for each entry (data nil for a block of zeroes) when apply is set; it
// returns errTornRecord for a record that does not check.
func scanRecord(r io.Reader, size int64, apply bool, fn func(addr uint32, data []byte) error) error {
	crc := crc32.New(castagnoli)
	br := bufio.NewReaderSize(r, 1<<20)
	tr := io.TeeReader(br, crc)
	var hdr [32]byte
	if _, err := io.ReadFull(tr, hdr[:]); err != nil {
		return errTornRecord
	}
	if string(hdr[:8]) != walMagic || binary.LittleEndian.Uint32(hdr[8:]) != walVersion ||
		binary.LittleEndian.Uint32(hdr[12:]) != PageSize || int64(binary.LittleEndian.Uint64(hdr[16:])) != size {
		return errTornRecord
	}
	n := binary.LittleEndian.Uint64(hdr[24:])
	nblocks := uint64((size + PageSize - 1) / PageSize)
	if n > nblocks {
		return errTornRecord
	}
	var page [PageSize]byte
	for i := uint64(0); i < n; i++ {
		var e [16]byte
		if _, err := io.ReadFull(tr, e[:]); err != nil {
			return errTornRecord
		}
		addr := binary.LittleEndian.Uint64(e[:])
		kind := binary.LittleEndian.Uint32(e[8:])
		if addr >= nblocks || kind > walZero {
			return errTornRecord
		}
		var data []byte
		if kind == walData {
			if _, err := io.ReadFull(tr, page[:]); err != nil {
				return errTornRecord
			}
			data = page[:]
		}
		if apply {
			if err := fn(uint32(addr), data); err != nil {
				return err
			}
		}
	}
	sum := crc.Sum32()
	var tail [12]byte
	if _, err := io.ReadFull(br, tail[:]); err != nil {
		return errTornRecord
	}
	if binary.LittleEndian.Uint32(tail[:]) != sum || string(tail[4:]) != walEnd {
		return errTornRecord
	}
	return nil
}

// recover completes or discards the write-back a leftover record stands
// for, when an image is attached: a complete record is replayed into the
// file (writable) or over the device's memory (read-only); a torn one is
// removed (writable) or ignored.
func (d *BlockDevice) recover() error {
	wal := d.img.path + WALSuffix
	pass := func(apply bool, fn func(addr uint32, data []byte) error) error {
		r, err := os.Open(wal)
		if err != nil {
			return err
		}
		defer r.Close()
		return scanRecord(r, d.imageSize, apply, fn)
	}
	err := pass(false, nil)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err == errTornRecord:
		if d.img.writable {
			if err := os.Remove(wal); err != nil {
				return err
			}
			return syncDir(filepath.Dir(wal))
		}
		return nil
	case err != nil:
		return err
	}
	if !d.img.writable {
		// Read the completed write-back over the file, in memory.
		return pass(true, func(addr uint32, data []byte) error {
			if data == nil {
				d.sp.discard(addr)
			} else if b := d.sp.page(addr, true); b != nil {
				copy(b, data)
			}
			return nil
		})
	}
	f := d.img.f
	err = pass(true, func(addr uint32, data []byte) error {
		off, m := int64(addr)*PageSize, d.pageLen(addr)
		if data == nil {
			return zeroRange(f, off, int64(m))
		}
		_, err := f.WriteAt(data[:m], off)
		return err
	})
	if err != nil {
		return fmt.Errorf("replaying %s: %w", wal, err)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := os.Remove(wal); err != nil {
		return err
	}
	return syncDir(filepath.Dir(wal))
}

// zeroRange makes length bytes at off of f zeroes: a hole punched where
// the host's filesystem can (fallocate FALLOC_FL_PUNCH_HOLE), zeroes
// written otherwise.
func zeroRange(f *os.File, off, length int64) error {
	if punchHole(f, off, length) == nil {
		return nil
	}
	_, err := f.WriteAt(make([]byte, length), off)
	return err
}

// seekData is lseek's SEEK_DATA (Linux, the BSDs, Solaris): elsewhere the
// seek fails and every page is read.
const seekData = 3

// errImageLocked is another process's lock on an image.
var errImageLocked = fmt.Errorf("the image is in use by another process (flock): %w", errno.EBUSY)
