package fsunicode

import "unicode/utf8"

// Results of cursor.mapped.
const (
	stOK      = iota // a character
	stBarrier        // an ignorable: no character, but it ends a run
	stEnd            // end of the name (its length or a NUL byte)
	stInvalid        // not valid UTF-8 at this point
)

// runInline is how many characters of a run of non-starters a cursor
// orders without allocating.
const runInline = 32

// strayCCC marks an entry that is a stray UTF-8 continuation byte rather
// than a character (CCC values end at 254).
const strayCCC = 0xFF

func (e entry) stray() bool { return e.ccc() == strayCCC }

// cursor streams the normalized bytes of a name, the model of struct
// utf8cursor and utf8byte (fs/unicode/utf8-norm.c).
//
// utf8byte emits a character with CCC 0 (a "stopper") as soon as it reaches
// it. When it reaches a character with a non-zero CCC it first scans ahead to
// the next stopper, ignorable or end, looking every character up, and then
// rescans that run once per CCC present, in ascending order, emitting the
// characters of that class; then it goes on with the stopper. A character
// that is not valid UTF-8 makes it return -1 where it looks the character
// up, so an invalid sequence right after a run of combining marks is
// reported before any character of that run.
//
// utf8byte also has a quirk this cursor reproduces: a UTF-8 continuation
// byte (10xxxxxx) where a character should start is returned as it is,
// because utf8byte takes it for the rest of the character it just emitted.
// Only utf8ncursor rejects a name that starts with one. Inside a run such a
// stray byte is returned on every scan: once during the first scan and again
// in every per-class pass, in its place among the characters of that class.
//
// The cursor gathers the run into a buffer (returning stray bytes as the
// first scan meets them) and then replays the passes over the buffer. Its
// output and error points, and so the results of the comparison functions
// that stop early, are the kernel's.
//
// All state is held in integers and arrays, never in pointers into the
// cursor itself, so a cursor declared in a function stays on its stack.
type cursor struct {
	f     *form
	src   []byte
	pos   int  // next byte of src to decode
	start bool // pos 0 is the start of the name (utf8ncursor's check)

	// Rest of the current code point's mapping: f.maps[moff:mend], or for a
	// Hangul syllable hang[hi:hn].
	moff, mend int
	hang       [3]entry
	hi, hn     int

	// The current run: run[:rn], or spill when it did not fit in run.
	run   [runInline]entry
	rn    int
	spill []entry
	// gathering is set while the first scan of a run is in progress.
	gathering bool
	// Replay of a gathered run: the pass for class pcc is at index ri.
	// After the last pass comes the stopper that ended the run, if held.
	pcc     uint8
	ri      int
	replay  bool
	held    entry
	hasHeld bool

	// UTF-8 bytes of the character being emitted: b[bi:bn].
	b      [utf8.UTFMax]byte
	bi, bn int
}

// newCursor returns a cursor over a whole name, as utf8ncursor sets it up.
func newCursor(f *form, name []byte) cursor {
	return cursor{f: f, src: name, start: true}
}

// resumeCursor returns a cursor over the rest of a name from a point that
// follows a stopper.
func resumeCursor(f *form, rest []byte) cursor {
	return cursor{f: f, src: rest}
}

// mapped returns the next character of the name after mapping each code
// point (its decomposition or case folding), before canonical ordering, or
// a stray continuation byte.
func (c *cursor) mapped() (entry, int) {
	if c.hi < c.hn {
		e := c.hang[c.hi]
		c.hi++
		return e, stOK
	}
	if c.moff < c.mend {
		e := c.f.maps[c.moff]
		c.moff++
		return e, stOK
	}
	if c.pos >= len(c.src) {
		return 0, stEnd
	}
	b := c.src[c.pos]
	if b < utf8.RuneSelf {
		if b == 0 {
			return 0, stEnd
		}
		c.pos++
		return entry(c.f.ascii[b]) << 8, stOK
	}
	if b&0xC0 == 0x80 {
		if c.start && c.pos == 0 {
			return 0, stInvalid
		}
		c.pos++
		return entry(b)<<8 | strayCCC, stOK
	}
	r, n := utf8.DecodeRune(c.src[c.pos:])
	if r == utf8.RuneError && n == 1 {
		return 0, stInvalid
	}
	c.pos += n
	p := c.f.lookup(r)
	switch p.kind() {
	case kindPass:
		return mkEntry(r, p.ccc()), stOK
	case kindMap:
		c.moff = p.off()
		c.mend = c.moff + p.length()
		e := c.f.maps[c.moff]
		c.moff++
		return e, stOK
	case kindIgnore:
		return 0, stBarrier
	}
	l, v, t := hangulDecompose(r)
	c.hang[0], c.hang[1], c.hang[2] = mkEntry(l, 0), mkEntry(v, 0), mkEntry(t, 0)
	c.hi, c.hn = 1, 2
	if t != 0 {
		c.hn = 3
	}
	return c.hang[0], stOK
}

// push appends an entry to the current run. (The spill slice is grown by
// hand: a new array, then self-slicing, so that nothing the cursor points
// to is seen as escaping.)
func (c *cursor) push(e entry) {
	if c.spill == nil && c.rn < len(c.run) {
		c.run[c.rn] = e
		c.rn++
		return
	}
	if c.spill == nil || len(c.spill) == cap(c.spill) {
		old := c.runEntries()
		grown := make([]entry, len(old), 4*len(old))
		copy(grown, old)
		c.spill = grown
	}
	n := len(c.spill)
	c.spill = c.spill[:n+1]
	c.spill[n] = e
}

// runEntries returns the current run.
func (c *cursor) runEntries() []entry {
	if c.spill != nil {
		return c.spill
	}
	return c.run[:c.rn]
}

// replayNext returns the next entry of the replayed passes over the run,
// then the held stopper; ok is false when the replay is over.
func (c *cursor) replayNext() (entry, bool) {
	run := c.runEntries()
	for {
		for c.ri < len(run) {
			e := run[c.ri]
			c.ri++
			if e.stray() || e.ccc() == c.pcc {
				return e, true
			}
		}
		// Next pass: the smallest class above the current one.
		next := uint8(strayCCC)
		for _, e := range run {
			if cc := e.ccc(); cc > c.pcc && cc < next {
				next = cc
			}
		}
		if next == strayCCC {
			break
		}
		c.pcc, c.ri = next, 0
	}
	c.replay = false
	c.rn, c.spill = 0, nil
	if c.hasHeld {
		c.hasHeld = false
		return c.held, true
	}
	return 0, false
}

// nextEntry returns the next entry in the kernel's output order.
func (c *cursor) nextEntry() (entry, int) {
	if c.replay {
		if e, ok := c.replayNext(); ok {
			return e, stOK
		}
	}
	if !c.gathering {
		e, st := c.mapped()
		for st == stBarrier {
			e, st = c.mapped()
		}
		if st != stOK || e.stray() || e.ccc() == 0 {
			return e, st
		}
		c.gathering = true
		c.push(e)
	}
	for {
		e, st := c.mapped()
		switch {
		case st == stInvalid:
			return 0, stInvalid
		case st == stOK && e.stray():
			c.push(e)
			return e, stOK // emitted by the first scan too
		case st == stOK && e.ccc() != 0:
			c.push(e)
			continue
		}
		// A stopper, an ignorable or the end ends the run.
		c.gathering = false
		c.held, c.hasHeld = e, st == stOK
		c.replay, c.pcc, c.ri = true, 0, len(c.runEntries())
		if e, ok := c.replayNext(); ok {
			return e, stOK
		}
		return 0, st // not reached: the run holds at least one character
	}
}

// next returns the next byte of the normalized name, 0 at its end, or -1 if
// the name is not valid UTF-8 at this point: utf8byte's contract.
func (c *cursor) next() int {
	if c.bi < c.bn {
		b := c.b[c.bi]
		c.bi++
		return int(b)
	}
	e, st := c.nextEntry()
	switch st {
	case stEnd:
		return 0
	case stInvalid:
		return -1
	}
	r := e.rune()
	if r < utf8.RuneSelf || e.stray() {
		return int(r)
	}
	c.bn = utf8.EncodeRune(c.b[:], r)
	c.bi = 1
	return int(c.b[0])
}
