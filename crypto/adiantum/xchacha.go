package adiantum

import (
	"encoding/binary"
	"math/bits"
)

// XChaCha12, the stream cipher of Adiantum.
//
// Linux implements it as the "xchacha12" skcipher (crypto/chacha.c and the
// ChaCha library in lib/crypto/chacha.c). Its 32-byte IV is the 24-byte
// XChaCha nonce followed by an 8-byte little-endian stream position: HChaCha12
// turns the key and the first 16 nonce bytes into a subkey, and ChaCha12 then
// runs with that subkey, the position in state words 12-13 and the last 8
// nonce bytes in state words 14-15. Only word 12 counts blocks, as in the
// kernel's chacha_block_generic.

const (
	chachaRounds    = 12
	chachaBlockSize = 64
	xchachaNonceLen = 24
)

// The "expand 32-byte k" constants of ChaCha.
const (
	sigma0 = 0x61707865
	sigma1 = 0x3320646e
	sigma2 = 0x79622d32
	sigma3 = 0x6b206574
)

// chachaDoubleRounds applies rounds/2 ChaCha double rounds (a column round then
// a diagonal round) to the state held in x.
func chachaDoubleRounds(x *[16]uint32, rounds int) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x4, x5, x6, x7 := x[4], x[5], x[6], x[7]
	x8, x9, x10, x11 := x[8], x[9], x[10], x[11]
	x12, x13, x14, x15 := x[12], x[13], x[14], x[15]
	for i := 0; i < rounds; i += 2 {
		// Columns.
		x0 += x4
		x12 = bits.RotateLeft32(x12^x0, 16)
		x8 += x12
		x4 = bits.RotateLeft32(x4^x8, 12)
		x0 += x4
		x12 = bits.RotateLeft32(x12^x0, 8)
		x8 += x12
		x4 = bits.RotateLeft32(x4^x8, 7)

		x1 += x5
		x13 = bits.RotateLeft32(x13^x1, 16)
		x9 += x13
		x5 = bits.RotateLeft32(x5^x9, 12)
		x1 += x5
		x13 = bits.RotateLeft32(x13^x1, 8)
		x9 += x13
		x5 = bits.RotateLeft32(x5^x9, 7)

		x2 += x6
		x14 = bits.RotateLeft32(x14^x2, 16)
		x10 += x14
		x6 = bits.RotateLeft32(x6^x10, 12)
		x2 += x6
		x14 = bits.RotateLeft32(x14^x2, 8)
		x10 += x14
		x6 = bits.RotateLeft32(x6^x10, 7)

		x3 += x7
		x15 = bits.RotateLeft32(x15^x3, 16)
		x11 += x15
		x7 = bits.RotateLeft32(x7^x11, 12)
		x3 += x7
		x15 = bits.RotateLeft32(x15^x3, 8)
		x11 += x15
		x7 = bits.RotateLeft32(x7^x11, 7)

		// Diagonals.
		x0 += x5
		x15 = bits.RotateLeft32(x15^x0, 16)
		x10 += x15
		x5 = bits.RotateLeft32(x5^x10, 12)
		x0 += x5
		x15 = bits.RotateLeft32(x15^x0, 8)
		x10 += x15
		x5 = bits.RotateLeft32(x5^x10, 7)

		x1 += x6
		x12 = bits.RotateLeft32(x12^x1, 16)
		x11 += x12
		x6 = bits.RotateLeft32(x6^x11, 12)
		x1 += x6
		x12 = bits.RotateLeft32(x12^x1, 8)
		x11 += x12
		x6 = bits.RotateLeft32(x6^x11, 7)

		x2 += x7
		x13 = bits.RotateLeft32(x13^x2, 16)
		x8 += x13
		x7 = bits.RotateLeft32(x7^x8, 12)
		x2 += x7
		x13 = bits.RotateLeft32(x13^x2, 8)
		x8 += x13
		x7 = bits.RotateLeft32(x7^x8, 7)

		x3 += x4
		x14 = bits.RotateLeft32(x14^x3, 16)
		x9 += x14
		x4 = bits.RotateLeft32(x4^x9, 12)
		x3 += x4
		x14 = bits.RotateLeft32(x14^x3, 8)
		x9 += x14
		x4 = bits.RotateLeft32(x4^x9, 7)
	}
	x[0], x[1], x[2], x[3] = x0, x1, x2, x3
	x[4], x[5], x[6], x[7] = x4, x5, x6, x7
	x[8], x[9], x[10], x[11] = x8, x9, x10, x11
	x[12], x[13], x[14], x[15] = x12, x13, x14, x15
}

// hchacha derives the XChaCha subkey from key and the first 16 nonce bytes
// (HChaCha: the ChaCha permutation without the final feed-forward, keeping
// state words 0-3 and 12-15; the kernel's hchacha_block_generic).
func hchacha(key *[8]uint32, nonce16 []byte, rounds int) [8]uint32 {
	var x [16]uint32
	x[0], x[1], x[2], x[3] = sigma0, sigma1, sigma2, sigma3
	copy(x[4:12], key[:])
	for i := 0; i < 4; i++ {
		x[12+i] = binary.LittleEndian.Uint32(nonce16[4*i:])
	}
	chachaDoubleRounds(&x, rounds)
	return [8]uint32{x[0], x[1], x[2], x[3], x[12], x[13], x[14], x[15]}
}

// xchachaStream is an XChaCha keystream positioned at a 64-byte block
// boundary; it lives on the caller's stack.
type xchachaStream struct {
	state  [16]uint32
	rounds int
}

// init sets up XChaCha with key, the 24-byte nonce and the starting block
// position (the kernel IV's trailing 8 bytes).
func (s *xchachaStream) init(key *[8]uint32, nonce *[xchachaNonceLen]byte, pos uint64, rounds int) {
	sub := hchacha(key, nonce[:16], rounds)
	s.rounds = rounds
	s.state[0], s.state[1], s.state[2], s.state[3] = sigma0, sigma1, sigma2, sigma3
	copy(s.state[4:12], sub[:])
	s.state[12] = uint32(pos)
	s.state[13] = uint32(pos >> 32)
	s.state[14] = binary.LittleEndian.Uint32(nonce[16:])
	s.state[15] = binary.LittleEndian.Uint32(nonce[20:])
}

// block writes the next 64 keystream bytes to out and advances the block
// counter (state word 12 only, as the kernel does).
func (s *xchachaStream) block(out *[chachaBlockSize]byte) {
	x := s.state
	chachaDoubleRounds(&x, s.rounds)
	for i := range x {
		binary.LittleEndian.PutUint32(out[4*i:], x[i]+s.state[i])
	}
	s.state[12]++
}

// xorKeyStream sets dst[i] = src[i] ^ keystream[i] for i < len(src); dst and
// src may be the same slice.
func (s *xchachaStream) xorKeyStream(dst, src []byte) {
	var ks [chachaBlockSize]byte
	for len(src) >= chachaBlockSize {
		s.block(&ks)
		d := dst[:chachaBlockSize]
		sr := src[:chachaBlockSize]
		for i := 0; i < chachaBlockSize; i += 8 {
			binary.LittleEndian.PutUint64(d[i:], binary.LittleEndian.Uint64(sr[i:])^binary.LittleEndian.Uint64(ks[i:]))
		}
		dst = dst[chachaBlockSize:]
		src = src[chachaBlockSize:]
	}
	if len(src) > 0 {
		s.block(&ks)
		for i := range src {
			dst[i] = src[i] ^ ks[i]
		}
	}
}
