package hctr2

import (
	"encoding/binary"
	"math/bits"
	"syscall"
)

// POLYVAL (RFC 8452 section 3; Linux "polyval" shash, crypto/polyval-generic.c
// and lib/crypto/polyval.c). Field elements are 16-byte strings read as
// little-endian 128-bit polynomials over GF(2) (bit i is the coefficient of
// x^i), reduced modulo x^128 + x^127 + x^126 + x^121 + 1, and
//
//	POLYVAL(H, X_1..X_n) = S_n, S_0 = 0, S_j = dot(S_{j-1} + X_j, H),
//	dot(a, b) = a * b * x^-128.
//
// Multiplication is carry-less multiplication built from integer multiplies
// with spaced-out bits (constant time), followed by a Montgomery reduction by
// x^128. The Linux generic code instead goes through the GHASH field with a
// 4 KiB table; the results are identical.

const (
	// PolyvalBlockSize is POLYVAL_BLOCK_SIZE.
	PolyvalBlockSize = 16
	// PolyvalDigestSize is POLYVAL_DIGEST_SIZE.
	PolyvalDigestSize = 16
	// PolyvalKeySize is the only key length polyval_setkey accepts.
	PolyvalKeySize = 16
)

// fieldElement is a POLYVAL field element: lo holds bytes 0-7 and hi bytes
// 8-15 of its little-endian encoding.
type fieldElement struct {
	lo, hi uint64
}

func loadElement(b []byte) fieldElement {
	return fieldElement{binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[8:16])}
}

func (e fieldElement) store(b []byte) {
	binary.LittleEndian.PutUint64(b[0:8], e.lo)
	binary.LittleEndian.PutUint64(b[8:16], e.hi)
}

// Bit-class masks: bit i of a word belongs to class i mod 4.
const (
	m0 = 0x1111111111111111
	m1 = 0x2222222222222222
	m2 = 0x4444444444444444
	m3 = 0x8888888888888888
)

// splitClasses splits y into its four bit classes.
func splitClasses(y uint64) [4]uint64 {
	return [4]uint64{y & m0, y & m1, y & m2, y & m3}
}

// clmulLow64 returns the low 64 bits of the carry-less product of x and the
// word whose bit classes are y. With every operand split into four bit
// classes, each integer product sums at most 15 terms into any output bit
// below bit 64, which fits in the 3-bit gaps between bits of one class, so the
// integer carries never reach a kept bit. The multiplications do not depend
// on the data, so this is constant time.
func clmulLow64(x uint64, y *[4]uint64) uint64 {
	x0, x1, x2, x3 := x&m0, x&m1, x&m2, x&m3
	z0 := x0*y[0] ^ x1*y[3] ^ x2*y[2] ^ x3*y[1]
	z1 := x0*y[1] ^ x1*y[0] ^ x2*y[3] ^ x3*y[2]
	z2 := x0*y[2] ^ x1*y[1] ^ x2*y[0] ^ x3*y[3]
	z3 := x0*y[3] ^ x1*y[2] ^ x2*y[1] ^ x3*y[0]
	return z0&m0 | z1&m1 | z2&m2 | z3&m3
}

// keyPower is a multiplier with the bit classes of its words, and of their
// bit reversals, split out ahead of time.
type keyPower struct {
	// y[0], y[1], y[2]: classes of lo, hi and lo^hi;
	// r[0], r[1], r[2]: the same for the bit-reversed words.
	y, r [3][4]uint64
}

func (p *keyPower) set(e fieldElement) {
	words := [3]uint64{e.lo, e.hi, e.lo ^ e.hi}
	for i, w := range words {
		p.y[i] = splitClasses(w)
		p.r[i] = splitClasses(bits.Reverse64(w))
	}
}

// mul returns the 256-bit carry-less product of a and the multiplier as
// c3:c2:c1:c0, by Karatsuba on 64-bit halves. The low half of each 64x64
// product comes directly; the high half is the bit reversal of the low half
// of the product of the reversed operands (which holds product bits 126..63),
// shifted right by one. Reversal is linear, so the Karatsuba middle term needs
// only one reversal.
func (p *keyPower) mul(a fieldElement) (c0, c1, c2, c3 uint64) {
	alo, ahi := a.lo, a.hi
	l0 := clmulLow64(alo, &p.y[0])
	l2 := clmulLow64(ahi, &p.y[1])
	l1 := clmulLow64(alo^ahi, &p.y[2]) ^ l0 ^ l2
	ralo, rahi := bits.Reverse64(alo), bits.Reverse64(ahi)
	r0 := clmulLow64(ralo, &p.r[0])
	r2 := clmulLow64(rahi, &p.r[1])
	r1 := clmulLow64(ralo^rahi, &p.r[2]) ^ r0 ^ r2
	h0 := bits.Reverse64(r0) >> 1
	h2 := bits.Reverse64(r2) >> 1
	h1 := bits.Reverse64(r1) >> 1
	return l0, h0 ^ l1, l2 ^ h1, h2
}

// reduce returns c * x^-128 mod P for a 256-bit c (Montgomery reduction).
// With P = x^128 + 1 + D, D = x^121 + x^126 + x^127, q = c_low * (1 + D) mod
// x^128 makes c + q*P divisible by x^128 (D^2 vanishes mod x^128), and
// (c + q*P) / x^128 = c_high + q + (q*D) / x^128.
func reduce(c0, c1, c2, c3 uint64) fieldElement {
	q0 := c0
	q1 := c1 ^ c0<<57 ^ c0<<62 ^ c0<<63
	lo := c2 ^ q0 ^ (q0>>1 | q1<<63) ^ (q0>>2 | q1<<62) ^ (q0>>7 | q1<<57)
	hi := c3 ^ q1 ^ q1>>1 ^ q1>>2 ^ q1>>7
	return fieldElement{lo, hi}
}

// polyvalKey is a POLYVAL hash key H, expanded for multiplication.
type polyvalKey struct {
	h keyPower
}

// setKey expands H.
func (k *polyvalKey) setKey(h fieldElement) {
	k.h.set(h)
}

// dot returns a * H * x^-128 in the POLYVAL field.
func (k *polyvalKey) dot(a fieldElement) fieldElement {
	return reduce(k.h.mul(a))
}

// polyvalAcc is a running POLYVAL accumulator over whole blocks.
type polyvalAcc struct {
	s fieldElement
}

// block absorbs one 16-byte block: S = dot(S + X, H).
func (a *polyvalAcc) block(k *polyvalKey, x fieldElement) {
	a.s = k.dot(fieldElement{a.s.lo ^ x.lo, a.s.hi ^ x.hi})
}

// blocks absorbs the whole blocks of msg (len(msg) must be a multiple of 16).
func (a *polyvalAcc) blocks(k *polyvalKey, msg []byte) {
	for len(msg) >= PolyvalBlockSize {
		a.block(k, loadElement(msg))
		msg = msg[PolyvalBlockSize:]
	}
}

// Polyval is a keyed POLYVAL hash, the analogue of a "polyval" shash
// descriptor. It implements hash.Hash: Write feeds data, and Sum zero-pads a
// trailing partial block, as polyval_final does, without changing the state.
// The zero value computes POLYVAL under the all-zero key; use NewPolyval or
// SetKey.
type Polyval struct {
	key polyvalKey
	acc polyvalAcc
	buf [PolyvalBlockSize]byte
	n   int // bytes buffered in buf
}

// NewPolyval returns a Polyval keyed with the 16-byte key H.
func NewPolyval(key []byte) (*Polyval, error) {
	p := new(Polyval)
	if err := p.SetKey(key); err != nil {
		return nil, err
	}
	return p, nil
}

// SetKey sets H and resets the state (polyval_setkey then init). A key that
// is not 16 bytes yields syscall.EINVAL and leaves the hash unchanged.
func (p *Polyval) SetKey(key []byte) error {
	if len(key) != PolyvalKeySize {
		return syscall.EINVAL
	}
	p.key.setKey(loadElement(key))
	p.Reset()
	return nil
}

// Reset restarts the hash with the same key (polyval_init).
func (p *Polyval) Reset() {
	p.acc = polyvalAcc{}
	p.buf = [PolyvalBlockSize]byte{}
	p.n = 0
}

// Size returns PolyvalDigestSize.
func (p *Polyval) Size() int { return PolyvalDigestSize }

// BlockSize returns PolyvalBlockSize.
func (p *Polyval) BlockSize() int { return PolyvalBlockSize }

// Write absorbs data (polyval_update); it never fails.
func (p *Polyval) Write(data []byte) (int, error) {
	n := len(data)
	if p.n > 0 {
		c := copy(p.buf[p.n:], data)
		p.n += c
		data = data[c:]
		if p.n < PolyvalBlockSize {
			return n, nil
		}
		p.acc.block(&p.key, loadElement(p.buf[:]))
		p.n = 0
	}
	full := len(data) &^ (PolyvalBlockSize - 1)
	p.acc.blocks(&p.key, data[:full])
	p.n = copy(p.buf[:], data[full:])
	return n, nil
}

// Sum appends the digest to b (polyval_final on a copy of the state): a
// trailing partial block is zero-padded.
func (p *Polyval) Sum(b []byte) []byte {
	acc := p.acc
	if p.n > 0 {
		var last [PolyvalBlockSize]byte
		copy(last[:], p.buf[:p.n])
		acc.block(&p.key, loadElement(last[:]))
	}
	var out [PolyvalDigestSize]byte
	acc.s.store(out[:])
	return append(b, out[:]...)
}
