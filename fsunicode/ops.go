package fsunicode

import (
	"bytes"
	"syscall"
	"unicode/utf8"
)

// Validate reports whether name is valid UTF-8 as the kernel checks it:
// every code point before the end of name or its first NUL byte is the
// shortest UTF-8 form of a Unicode scalar value (any, assigned or not, other
// than the surrogates). It returns nil or EINVAL.
//
// Model of utf8_validate (fs/unicode/utf8-core.c), which returns 0 or -1
// from utf8nlen(um, UTF8_NFDI, ...); its callers (generic_ci_validate_strict_name,
// ext4 and f2fs under sb_has_strict_encoding) turn -1 into EINVAL.
func (um *Map) Validate(name []byte) error {
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	if !utf8.Valid(name) {
		return errInvalid
	}
	return nil
}

// Casefold writes the casefolded (nfdicf) form of name into dst followed by
// a NUL byte and returns its length, which is at most len(dst)-1. It fails
// with EINVAL if the kernel's cursor rejects name (see "Invalid UTF-8" in
// the package documentation: a stray continuation byte after the first byte
// is passed through, not rejected) or if the folded name and its NUL do not
// fit in dst; dst may then hold a partial result.
//
// Model of utf8_casefold (fs/unicode/utf8-core.c), with len(dst) as dlen.
// ext4 (ext4_fname_setup_ci_filename) and f2fs (f2fs_init_casefolded_name)
// fold into MaxNameLen-byte buffers, so a name whose folded form is 255
// bytes or longer cannot be folded, and they fall back to the raw name.
func (um *Map) Casefold(dst, name []byte) (int, error) {
	return um.t.nfdicf.apply(dst, name)
}

// Normalize writes the normalized (nfdi) form of name into dst followed by a
// NUL byte and returns its length, with the same rules and errors as
// Casefold.
//
// Model of utf8_normalize, which fs/unicode/utf8-core.c carried next to
// utf8_casefold, with the same loop over the UTF8_NFDI table, until it was
// removed for lack of callers.
func (um *Map) Normalize(dst, name []byte) (int, error) {
	return um.t.nfdi.apply(dst, name)
}

// apply is utf8_casefold's loop: at most len(dst) bytes including the NUL.
func (f *form) apply(dst, name []byte) (int, error) {
	n := 0
	for i, b := range name {
		if b >= utf8.RuneSelf {
			return f.applySlow(dst, name, i, n)
		}
		if n >= len(dst) {
			return 0, errInvalid
		}
		dst[n] = f.ascii[b]
		if b == 0 {
			return n, nil
		}
		n++
	}
	if n >= len(dst) {
		return 0, errInvalid
	}
	dst[n] = 0
	return n, nil
}

// applySlow continues apply from the first non-ASCII byte, name[i], having
// written n bytes.
//
//go:noinline
func (f *form) applySlow(dst, name []byte, i, n int) (int, error) {
	c := cursorAt(f, name, i)
	for {
		e, st := c.nextEntry()
		switch {
		case st == stInvalid:
			return 0, errInvalid
		case st == stEnd:
			if n >= len(dst) {
				return 0, errInvalid
			}
			dst[n] = 0
			return n, nil
		case e.stray() || e.rune() < utf8.RuneSelf:
			if n >= len(dst) {
				return 0, errInvalid
			}
			dst[n] = byte(e.rune())
			n++
		default:
			if n+utf8.RuneLen(e.rune()) > len(dst) {
				return 0, errInvalid
			}
			n += utf8.EncodeRune(dst[n:], e.rune())
		}
	}
}

// cursorAt returns a cursor over name that starts at name[i], where i is 0
// or follows an ASCII character. Every ASCII character is a stopper that
// utf8byte emits as soon as it reaches it, so the kernel's cursor is then in
// the same state as a fresh one, except that it no longer checks for a
// leading continuation byte.
func cursorAt(f *form, name []byte, i int) cursor {
	if i == 0 {
		return newCursor(f, name)
	}
	return resumeCursor(f, name[i:])
}

// CasefoldHash returns the dcache hash of the casefolded name:
// init_name_hash(salt), partial_name_hash of every byte of the nfdicf form,
// end_name_hash (include/linux/stringhash.h). It fails with EINVAL where
// Casefold would reject name.
//
// Model of utf8_casefold_hash (fs/unicode/utf8-core.c), which
// generic_ci_d_hash (fs/libfs.c) calls with the dentry's address as salt;
// in strict mode generic_ci_d_hash returns its EINVAL, otherwise it keeps
// the hash the VFS computed from the raw name.
func (um *Map) CasefoldHash(salt uint64, name []byte) (uint32, error) {
	f := &um.t.nfdicf
	hash := salt // init_name_hash
	for i, b := range name {
		if b >= utf8.RuneSelf {
			return f.hashSlow(hash, name, i)
		}
		if b == 0 {
			break
		}
		hash = partialNameHash(uint64(f.ascii[b]), hash)
	}
	return endNameHash(hash), nil
}

// hashSlow continues CasefoldHash from name[i] with a cursor.
//
//go:noinline
func (f *form) hashSlow(hash uint64, name []byte, i int) (uint32, error) {
	c := cursorAt(f, name, i)
	var b [utf8.UTFMax]byte
	for {
		e, st := c.nextEntry()
		switch {
		case st == stInvalid:
			return 0, errInvalid
		case st == stEnd:
			return endNameHash(hash), nil
		case e.stray() || e.rune() < utf8.RuneSelf:
			hash = partialNameHash(uint64(e.rune()), hash)
		default:
			for _, x := range b[:utf8.EncodeRune(b[:], e.rune())] {
				hash = partialNameHash(uint64(x), hash)
			}
		}
	}
}

// partialNameHash is partial_name_hash (include/linux/stringhash.h) with a
// 64-bit unsigned long.
func partialNameHash(c, prevhash uint64) uint64 {
	return (prevhash + c<<4 + c>>4) * 11
}

// endNameHash is end_name_hash: __hash_32 of the low 32 bits, that is a
// multiplication by GOLDEN_RATIO_32 (include/linux/hash.h).
func endNameHash(hash uint64) uint32 {
	return uint32(hash) * 0x61C88647
}

// compareResult is the kernel's int result with its Go error.
func compareResult(r int) (int, error) {
	if r < 0 {
		return -int(syscall.EINVAL), errInvalid
	}
	return r, nil
}

// Strncmp compares the nfdi forms of two names: 0 if they are equal, 1 if
// not, or -EINVAL (as an int, with the error EINVAL) if the kernel's cursor
// rejects either name at or before the first byte where the forms differ.
//
// Model of utf8_strncmp (fs/unicode/utf8-core.c). The names are streamed a
// byte at a time, as the kernel's two utf8cursors do, so an invalid sequence
// after the first difference is never seen.
func (um *Map) Strncmp(s1, s2 []byte) (int, error) {
	return compareResult(um.t.nfdi.strncmp(s1, s2))
}

// Strncasecmp compares the nfdicf (casefolded) forms of two names, with the
// results of Strncmp.
//
// Model of utf8_strncasecmp (fs/unicode/utf8-core.c), used by
// generic_ci_d_compare and generic_ci_match (fs/libfs.c) when no folded
// name is at hand. In strict mode their callers treat -EINVAL as no match
// (d_compare returns it); otherwise generic_ci_d_compare falls back to an
// exact byte comparison.
func (um *Map) Strncasecmp(s1, s2 []byte) (int, error) {
	return compareResult(um.t.nfdicf.strncmp(s1, s2))
}

// strncmp is the loop of utf8_strncmp and utf8_strncasecmp. Its ASCII fast
// path compares the common ASCII prefix directly (the end of a name and a
// NUL byte both read as 0, like utf8byte's end): ASCII characters are
// stoppers, so the kernel emits them at the same positions and cannot fail
// before them.
func (f *form) strncmp(s1, s2 []byte) int {
	n := min(len(s1), len(s2))
	p1, p2 := s1[:n], s2[:n]
	i := 0
	for ; i < n; i++ {
		a, b := p1[i], p2[i]
		if a|b >= utf8.RuneSelf {
			return f.strncmpSlow(s1, s2, i)
		}
		if f.ascii[a] != f.ascii[b] {
			return 1
		}
		if a == 0 {
			return 0
		}
	}
	// One name has ended (or both): it reads as 0 from here.
	rest := s1[n:]
	if len(rest) == 0 {
		rest = s2[n:]
	}
	if len(rest) == 0 || rest[0] == 0 {
		return 0
	}
	if rest[0] < utf8.RuneSelf {
		return 1
	}
	return f.strncmpSlow(s1, s2, i)
}

// strncmpSlow continues strncmp from offset i with two cursors. It is kept
// out of line so that the ASCII path does not pay for clearing them.
//
//go:noinline
func (f *form) strncmpSlow(s1, s2 []byte, i int) int {
	c1 := cursorAt(f, s1, i)
	c2 := cursorAt(f, s2, i)
	for {
		b1 := c1.next()
		b2 := c2.next()
		if b1 < 0 || b2 < 0 {
			return -1
		}
		if b1 != b2 {
			return 1
		}
		if b1 == 0 {
			return 0
		}
	}
}

// StrncasecmpFolded compares an already casefolded name cf (the output of
// Casefold, read up to its end or NUL byte) with the casefolded form of
// name: 0 if equal, 1 if not, -EINVAL (with EINVAL) if the kernel's cursor
// rejects name at or before the first difference. Only name is normalized.
//
// Model of utf8_strncasecmp_folded (fs/unicode/utf8-core.c), which
// generic_ci_match (fs/libfs.c) calls for every directory entry a lookup in
// a casefolded ext4 or f2fs directory compares. The kernel reads cf up to
// its NUL terminator; here the end of the slice counts as that NUL.
func (um *Map) StrncasecmpFolded(cf, name []byte) (int, error) {
	f := &um.t.nfdicf
	n := min(len(cf), len(name))
	pc, pn := cf[:n], name[:n]
	i := 0
	for ; i < n; i++ {
		b := pn[i]
		if b >= utf8.RuneSelf {
			return compareResult(f.foldedSlow(cf, name, i))
		}
		if f.ascii[b] != pc[i] {
			return 1, nil
		}
		if b == 0 {
			return 0, nil
		}
	}
	// cf or name has ended; an ended cf reads as NUL.
	if i < len(name) && name[i] < utf8.RuneSelf {
		if name[i] == 0 {
			return 0, nil
		}
		return 1, nil
	}
	if i == len(name) {
		if i == len(cf) || cf[i] == 0 {
			return 0, nil
		}
		return 1, nil
	}
	return compareResult(f.foldedSlow(cf, name, i))
}

// foldedSlow continues StrncasecmpFolded from offset i, out of line like
// strncmpSlow.
//
//go:noinline
func (f *form) foldedSlow(cf, name []byte, i int) int {
	c := cursorAt(f, name, i)
	for ; ; i++ {
		b1 := c.next()
		b2 := 0
		if i < len(cf) {
			b2 = int(cf[i])
		}
		if b1 < 0 {
			return -1
		}
		if b1 != b2 {
			return 1
		}
		if b1 == 0 {
			return 0
		}
	}
}
