package adiantum

import (
	"encoding/binary"
	"math/bits"
)

// Poly1305 as an ε-almost-∆-universal hash: the polynomial evaluation modulo
// 2^130-5 without the final addition of a one-time pad. This is what Linux's
// poly1305_core_setkey / poly1305_core_blocks / poly1305_core_emit (with a NULL
// nonce) compute, and what Adiantum needs for both the header hash and the
// outer layer of NHPoly1305.

const poly1305BlockSize = 16

// poly1305Key is a clamped Poly1305 multiplier r, as two 64-bit limbs.
type poly1305Key struct {
	r0, r1 uint64
}

// setKey clamps the 16-byte r (poly1305_core_setkey).
func (k *poly1305Key) setKey(raw []byte) {
	k.r0 = binary.LittleEndian.Uint64(raw[0:8]) & 0x0ffffffc0fffffff
	k.r1 = binary.LittleEndian.Uint64(raw[8:16]) & 0x0ffffffc0ffffffc
}

// poly1305State is the accumulator h, kept partially reduced (h < 2^131).
type poly1305State struct {
	h0, h1, h2 uint64
}

// blocks absorbs whole 16-byte blocks of msg, each with the 2^128 pad bit
// (poly1305_core_blocks with hibit 1). len(msg) must be a multiple of 16.
func (s *poly1305State) blocks(k *poly1305Key, msg []byte) {
	for len(msg) >= poly1305BlockSize {
		s.absorb(k, binary.LittleEndian.Uint64(msg[0:8]), binary.LittleEndian.Uint64(msg[8:16]), 1)
		msg = msg[poly1305BlockSize:]
	}
}

// partial absorbs a final block shorter than 16 bytes: the bytes, then a 1
// byte, then zeros, with no 2^128 pad bit (the standard Poly1305 rule; Linux
// never needs it for Adiantum's 32-byte tweak but the Adiantum specification
// allows other tweak lengths).
func (s *poly1305State) partial(k *poly1305Key, msg []byte) {
	var b [poly1305BlockSize]byte
	n := copy(b[:], msg)
	b[n] = 1
	s.absorb(k, binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[8:16]), 0)
}

// absorb computes h = (h + m + hibit*2^128) * r mod 2^130-5, partially
// reduced.
func (s *poly1305State) absorb(k *poly1305Key, m0, m1, hibit uint64) {
	h0, c := bits.Add64(s.h0, m0, 0)
	h1, c := bits.Add64(s.h1, m1, c)
	h2 := s.h2 + c + hibit

	// h is below 2^131 + 2^129 and r0, r1 are below 2^60, so h2*r0 and h2*r1
	// fit in 64 bits.
	r0, r1 := k.r0, k.r1
	hi00, lo00 := bits.Mul64(h0, r0)
	hi10, lo10 := bits.Mul64(h1, r0)
	hi01, lo01 := bits.Mul64(h0, r1)
	hi11, lo11 := bits.Mul64(h1, r1)

	// t = h*r as four 64-bit words t0..t3.
	t0 := lo00
	t1, c := bits.Add64(hi00, lo10, 0)
	t2, c2 := bits.Add64(hi10, lo11, c)
	t3 := hi11 + c2
	t1, c = bits.Add64(t1, lo01, 0)
	t2, c = bits.Add64(t2, hi01, c)
	t3 += c
	t2, c = bits.Add64(t2, h2*r0, 0)
	t3 += c + h2*r1

	// t = L + H*2^130 with L = t mod 2^130; since 2^130 = 5 (mod p),
	// t = L + 4H + H, where 4H is t with its low 130 bits cleared.
	h0, h1, h2 = t0, t1, t2&3
	fourH0, fourH1 := t2&^3, t3
	h0, c = bits.Add64(h0, fourH0, 0)
	h1, c = bits.Add64(h1, fourH1, c)
	h2 += c
	oneH0, oneH1 := t2>>2|t3<<62, t3>>2
	h0, c = bits.Add64(h0, oneH0, 0)
	h1, c = bits.Add64(h1, oneH1, c)
	h2 += c
	s.h0, s.h1, s.h2 = h0, h1, h2
}

// emit fully reduces h modulo 2^130-5 and returns its low 128 bits as two
// little-endian 64-bit words (poly1305_core_emit without a nonce).
func (s *poly1305State) emit() (lo, hi uint64) {
	// h < 2p here, so one conditional subtraction of p suffices: compute
	// g = h + 5 and keep it (mod 2^130) when it reaches 2^130.
	g0, c := bits.Add64(s.h0, 5, 0)
	g1, c := bits.Add64(s.h1, 0, c)
	g2 := s.h2 + c
	mask := -(g2 >> 2) // all ones when h + 5 >= 2^130 (g2 is at most 5)
	lo = s.h0&^mask | g0&mask
	hi = s.h1&^mask | g1&mask
	return lo, hi
}
