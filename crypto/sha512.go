package crypto

import (
	"encoding/binary"
	"math/bits"
)

// SHA-512 and HMAC-SHA512 of the project's own (lib/crypto/sha512.c, FIPS
// 180-4, RFC 2104), because every byte of their state can be zeroed:
// Go's crypto/hmac keeps its keyed inner and outer states in memory the
// caller cannot reach, so a master key's HMAC would outlive its removal.
// The types follow include/crypto/sha2.h: a prepared key holds the
// states after the key's ipad and opad blocks (struct hmac_sha512_key),
// a context is one computation in progress. Nothing here allocates.

// SHA-512 sizes (include/crypto/sha2.h).
const (
	SHA512DigestSize = 64
	SHA512BlockSize  = 128
)

// sha512BlockState is struct sha512_block_state: the eight chaining words.
type sha512BlockState struct {
	h [8]uint64
}

// sha512IV is the initial hash value (FIPS 180-4 section 5.3.5).
var sha512IV = sha512BlockState{[8]uint64{
	0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
	0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
}}

// sha512K are the round constants (FIPS 180-4 section 4.2.3).
var sha512K = [80]uint64{
	0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc,
	0x3956c25bf348b538, 0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118,
	0xd807aa98a3030242, 0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
	0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235, 0xc19bf174cf692694,
	0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
	0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
	0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4,
	0xc6e00bf33da88fc2, 0xd5a79147930aa725, 0x06ca6351e003826f, 0x142929670a0e6e70,
	0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
	0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
	0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30,
	0xd192e819d6ef5218, 0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
	0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8,
	0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3,
	0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
	0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b,
	0xca273eceea26619c, 0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178,
	0x06f067aa72176fba, 0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
	0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc, 0x431d67c49c100d4c,
	0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
}

// sha512Blocks is sha512_blocks_generic: the compression function over
// whole 128-byte blocks of p. The message schedule lives on the stack and
// is zeroed before returning.
func sha512Blocks(s *sha512BlockState, p []byte) {
	var w [80]uint64
	h0, h1, h2, h3, h4, h5, h6, h7 := s.h[0], s.h[1], s.h[2], s.h[3], s.h[4], s.h[5], s.h[6], s.h[7]
	for len(p) >= SHA512BlockSize {
		blk := (*[SHA512BlockSize]byte)(p)
		for i := 0; i < 16; i++ {
			w[i] = binary.BigEndian.Uint64(blk[8*i:])
		}
		for i := 16; i < 80; i++ {
			v1, v2 := w[i-2], w[i-15]
			s1 := bits.RotateLeft64(v1, -19) ^ bits.RotateLeft64(v1, -61) ^ (v1 >> 6)
			s0 := bits.RotateLeft64(v2, -1) ^ bits.RotateLeft64(v2, -8) ^ (v2 >> 7)
			w[i] = s1 + w[i-7] + s0 + w[i-16]
		}
		a, b, c, d, e, f, g, h := h0, h1, h2, h3, h4, h5, h6, h7
		// Eight rounds per iteration, the variables renamed instead of
		// shifted (FIPS 180-4 section 6.4.2).
		for i := 0; i < 80; i += 8 {
			kk := (*[8]uint64)(sha512K[i : i+8])
			ww := (*[8]uint64)(w[i : i+8])
			h += (bits.RotateLeft64(e, -14) ^ bits.RotateLeft64(e, -18) ^ bits.RotateLeft64(e, -41)) + ((e & f) ^ (^e & g)) + kk[0] + ww[0]
			d += h
			h += (bits.RotateLeft64(a, -28) ^ bits.RotateLeft64(a, -34) ^ bits.RotateLeft64(a, -39)) + ((a & b) ^ (a & c) ^ (b & c))
			g += (bits.RotateLeft64(d, -14) ^ bits.RotateLeft64(d, -18) ^ bits.RotateLeft64(d, -41)) + ((d & e) ^ (^d & f)) + kk[1] + ww[1]
			c += g
			g += (bits.RotateLeft64(h, -28) ^ bits.RotateLeft64(h, -34) ^ bits.RotateLeft64(h, -39)) + ((h & a) ^ (h & b) ^ (a & b))
			f += (bits.RotateLeft64(c, -14) ^ bits.RotateLeft64(c, -18) ^ bits.RotateLeft64(c, -41)) + ((c & d) ^ (^c & e)) + kk[2] + ww[2]
			b += f
			f += (bits.RotateLeft64(g, -28) ^ bits.RotateLeft64(g, -34) ^ bits.RotateLeft64(g, -39)) + ((g & h) ^ (g & a) ^ (h & a))
			e += (bits.RotateLeft64(b, -14) ^ bits.RotateLeft64(b, -18) ^ bits.RotateLeft64(b, -41)) + ((b & c) ^ (^b & d)) + kk[3] + ww[3]
			a += e
			e += (bits.RotateLeft64(f, -28) ^ bits.RotateLeft64(f, -34) ^ bits.RotateLeft64(f, -39)) + ((f & g) ^ (f & h) ^ (g & h))
			d += (bits.RotateLeft64(a, -14) ^ bits.RotateLeft64(a, -18) ^ bits.RotateLeft64(a, -41)) + ((a & b) ^ (^a & c)) + kk[4] + ww[4]
			h += d
			d += (bits.RotateLeft64(e, -28) ^ bits.RotateLeft64(e, -34) ^ bits.RotateLeft64(e, -39)) + ((e & f) ^ (e & g) ^ (f & g))
			c += (bits.RotateLeft64(h, -14) ^ bits.RotateLeft64(h, -18) ^ bits.RotateLeft64(h, -41)) + ((h & a) ^ (^h & b)) + kk[5] + ww[5]
			g += c
			c += (bits.RotateLeft64(d, -28) ^ bits.RotateLeft64(d, -34) ^ bits.RotateLeft64(d, -39)) + ((d & e) ^ (d & f) ^ (e & f))
			b += (bits.RotateLeft64(g, -14) ^ bits.RotateLeft64(g, -18) ^ bits.RotateLeft64(g, -41)) + ((g & h) ^ (^g & a)) + kk[6] + ww[6]
			f += b
			b += (bits.RotateLeft64(c, -28) ^ bits.RotateLeft64(c, -34) ^ bits.RotateLeft64(c, -39)) + ((c & d) ^ (c & e) ^ (d & e))
			a += (bits.RotateLeft64(f, -14) ^ bits.RotateLeft64(f, -18) ^ bits.RotateLeft64(f, -41)) + ((f & g) ^ (^f & h)) + kk[7] + ww[7]
			e += a
			a += (bits.RotateLeft64(b, -28) ^ bits.RotateLeft64(b, -34) ^ bits.RotateLeft64(b, -39)) + ((b & c) ^ (b & d) ^ (c & d))
		}
		h0 += a
		h1 += b
		h2 += c
		h3 += d
		h4 += e
		h5 += f
		h6 += g
		h7 += h
		p = p[SHA512BlockSize:]
	}
	s.h = [8]uint64{h0, h1, h2, h3, h4, h5, h6, h7}
	clear(w[:])
}

// SHA512Ctx is struct sha512_ctx: a SHA-512 computation in progress.
type SHA512Ctx struct {
	state     sha512BlockState
	bytecount uint64 // bytecount_lo; inputs here stay below 2^64 bytes
	buf       [SHA512BlockSize]byte
}

// SHA512Init is sha512_init.
func SHA512Init(ctx *SHA512Ctx) {
	ctx.state = sha512IV
	ctx.bytecount = 0
}

// SHA512Update is sha512_update: hash data.
func SHA512Update(ctx *SHA512Ctx, data []byte) {
	partial := int(ctx.bytecount % SHA512BlockSize)
	ctx.bytecount += uint64(len(data))
	if partial > 0 {
		n := copy(ctx.buf[partial:], data)
		data = data[n:]
		if partial+n < SHA512BlockSize {
			return
		}
		sha512Blocks(&ctx.state, ctx.buf[:])
	}
	if n := len(data) &^ (SHA512BlockSize - 1); n > 0 {
		sha512Blocks(&ctx.state, data[:n])
		data = data[n:]
	}
	copy(ctx.buf[:], data)
}

// SHA512Final is sha512_final: pad, write the digest to out and zero ctx
// (the kernel's memzero_explicit of the context).
func SHA512Final(ctx *SHA512Ctx, out *[SHA512DigestSize]byte) {
	bitcount := ctx.bytecount << 3
	partial := int(ctx.bytecount % SHA512BlockSize)
	ctx.buf[partial] = 0x80
	partial++
	if partial > SHA512BlockSize-16 {
		clear(ctx.buf[partial:])
		sha512Blocks(&ctx.state, ctx.buf[:])
		partial = 0
	}
	clear(ctx.buf[partial : SHA512BlockSize-16])
	binary.BigEndian.PutUint64(ctx.buf[SHA512BlockSize-16:], ctx.bytecount>>61)
	binary.BigEndian.PutUint64(ctx.buf[SHA512BlockSize-8:], bitcount)
	sha512Blocks(&ctx.state, ctx.buf[:])
	for i, h := range ctx.state.h {
		binary.BigEndian.PutUint64(out[8*i:], h)
	}
	*ctx = SHA512Ctx{}
}

// SHA512Sum is sha512(): the digest of data, with nothing left behind.
func SHA512Sum(data []byte) (out [SHA512DigestSize]byte) {
	var ctx SHA512Ctx
	SHA512Init(&ctx)
	SHA512Update(&ctx, data)
	SHA512Final(&ctx, &out)
	return out
}

// HMACSHA512Key is struct hmac_sha512_key: a key prepared for HMAC-SHA512,
// the chaining states after one block of key^ipad and of key^opad. It is
// key material: Wipe it when done.
type HMACSHA512Key struct {
	istate, ostate sha512BlockState
}

// HMACSHA512PrepareKey is hmac_sha512_preparekey: a key longer than a
// block is hashed first (RFC 2104); the padded blocks are zeroed after
// use.
func HMACSHA512PrepareKey(key *HMACSHA512Key, raw []byte) {
	var k [SHA512BlockSize]byte
	if len(raw) > SHA512BlockSize {
		d := SHA512Sum(raw)
		copy(k[:], d[:])
		clear(d[:])
	} else {
		copy(k[:], raw)
	}
	for i := range k {
		k[i] ^= 0x36
	}
	key.istate = sha512IV
	sha512Blocks(&key.istate, k[:])
	for i := range k {
		k[i] ^= 0x36 ^ 0x5c
	}
	key.ostate = sha512IV
	sha512Blocks(&key.ostate, k[:])
	clear(k[:])
}

// Wipe zeroes the prepared key (memzero_explicit of the hmac_sha512_key).
func (key *HMACSHA512Key) Wipe() { *key = HMACSHA512Key{} }

// IsZero reports whether every byte of the prepared key is zero (after
// Wipe): a test of key wiping looks at it.
func (key *HMACSHA512Key) IsZero() bool { return *key == HMACSHA512Key{} }

// HMACSHA512Ctx is struct hmac_sha512_ctx: one HMAC computation, the inner
// hash in progress and the outer state to finish with.
type HMACSHA512Ctx struct {
	sha    SHA512Ctx
	ostate sha512BlockState
}

// HMACSHA512Init is hmac_sha512_init: start an HMAC under a prepared key.
func HMACSHA512Init(ctx *HMACSHA512Ctx, key *HMACSHA512Key) {
	ctx.sha.state = key.istate
	ctx.sha.bytecount = SHA512BlockSize
	ctx.ostate = key.ostate
}

// HMACSHA512Update is hmac_sha512_update.
func HMACSHA512Update(ctx *HMACSHA512Ctx, data []byte) { SHA512Update(&ctx.sha, data) }

// HMACSHA512Final is hmac_sha512_final: write the MAC to out and zero ctx.
func HMACSHA512Final(ctx *HMACSHA512Ctx, out *[SHA512DigestSize]byte) {
	SHA512Final(&ctx.sha, out)
	ctx.sha.state = ctx.ostate
	ctx.sha.bytecount = SHA512BlockSize
	SHA512Update(&ctx.sha, out[:])
	SHA512Final(&ctx.sha, out)
	*ctx = HMACSHA512Ctx{}
}

// HMACSHA512Prepared is hmac_sha512: the MAC of data under a prepared key.
func HMACSHA512Prepared(key *HMACSHA512Key, data []byte) (out [SHA512DigestSize]byte) {
	var ctx HMACSHA512Ctx
	HMACSHA512Init(&ctx, key)
	HMACSHA512Update(&ctx, data)
	HMACSHA512Final(&ctx, &out)
	return out
}
