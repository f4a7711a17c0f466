package aes

import (
	"encoding/binary"
	"math/bits"
)

// The portable implementation. Like lib/crypto/aes.c it works on four
// 32-bit column words per state (byte r of a column in bits 8r..8r+7, the
// little-endian load of the block), uses the 256-byte S-box and its inverse
// for SubBytes/ShiftRows and computes MixColumns arithmetically, so it needs
// no 4 KiB T-tables. The S-boxes are derived at start-up from their
// FIPS-197 definition (multiplicative inverse in GF(2^8) followed by the
// affine map) rather than typed in; the FIPS-197 known-answer tests pin the
// result.

var (
	sbox    [256]byte
	invSbox [256]byte
)

func init() {
	// exp/log tables of GF(2^8) with the generator x+1 (0x03).
	var exp [256]byte
	var log [256]byte
	v := byte(1)
	for i := 0; i < 255; i++ {
		exp[i] = v
		log[v] = byte(i)
		v ^= xtime(v) // v *= 3
	}
	for x := 0; x < 256; x++ {
		var inv byte
		if x != 0 {
			inv = exp[(255-int(log[x]))%255]
		}
		s := inv ^ bits.RotateLeft8(inv, 1) ^ bits.RotateLeft8(inv, 2) ^
			bits.RotateLeft8(inv, 3) ^ bits.RotateLeft8(inv, 4) ^ 0x63
		sbox[x] = s
		invSbox[s] = byte(x)
	}
}

// xtime multiplies a GF(2^8) element by x modulo x^8+x^4+x^3+x+1.
func xtime(b byte) byte {
	return b<<1 ^ (b>>7)*0x1b
}

// xtime4 multiplies each of the four bytes of w by x.
func xtime4(w uint32) uint32 {
	return (w&0x7f7f7f7f)<<1 ^ ((w>>7)&0x01010101)*0x1b
}

// mixColumn applies MixColumns to one column word: with a_i the byte in row
// i, row i becomes 2·a_i ^ 3·a_(i+1) ^ a_(i+2) ^ a_(i+3), computed as
// 2·(a_i ^ a_(i+1)) ^ a_(i+1) ^ a_(i+2) ^ a_(i+3).
func mixColumn(w uint32) uint32 {
	r1 := bits.RotateLeft32(w, -8) // row i holds a_(i+1)
	r2 := bits.RotateLeft32(w, -16)
	r3 := bits.RotateLeft32(w, -24)
	return xtime4(w^r1) ^ r1 ^ r2 ^ r3
}

// xtime4x2 multiplies each of the four bytes of w by x^2: bit 7 of a byte
// wraps around as x·0x1b = 0x36, bit 6 as 0x1b.
func xtime4x2(w uint32) uint32 {
	return (w&0x3f3f3f3f)<<2 ^ ((w>>7)&0x01010101)*0x36 ^ ((w>>6)&0x01010101)*0x1b
}

// invMixColumn applies InvMixColumns to one column word. The inverse matrix
// circ(14, 11, 13, 9) factors as circ(2, 3, 1, 1) · circ(5, 0, 4, 0), so the
// column is first replaced by a_i ^ 4·(a_i ^ a_(i+2)) and then mixed.
func invMixColumn(w uint32) uint32 {
	return mixColumn(w ^ xtime4x2(w^bits.RotateLeft32(w, -16)))
}

// subWord applies the S-box to the four bytes of w.
func subWord(w uint32) uint32 {
	return uint32(sbox[byte(w)]) | uint32(sbox[byte(w>>8)])<<8 |
		uint32(sbox[byte(w>>16)])<<16 | uint32(sbox[byte(w>>24)])<<24
}

// expandKeyGeneric computes both key schedules of a 16, 24 or 32-byte key
// (FIPS-197 section 5.2 and 5.3.5), words stored as little-endian loads.
func expandKeyGeneric(c *Ctx, key []byte) {
	nk := len(key) / 4
	nr := nk + 6
	total := 4 * (nr + 1)
	enc := c.KeyEnc[:total]
	for i := 0; i < nk; i++ {
		enc[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	// One step per nk new words: the first takes SubWord(RotWord(·)) ^ Rcon
	// of the word before it (RotWord moves byte 1 to byte 0, a right
	// rotation of the little-endian word; Rcon goes into byte 0), the fifth
	// of a 256-bit schedule SubWord(·), the others the plain word before.
	rcon := byte(1)
	for i := nk; i < total; i += nk {
		enc[i] = enc[i-nk] ^ subWord(bits.RotateLeft32(enc[i-1], -8)) ^ uint32(rcon)
		rcon = xtime(rcon)
		for j := i + 1; j < i+nk && j < total; j++ {
			t := enc[j-1]
			if nk == 8 && j-i == 4 {
				t = subWord(t)
			}
			enc[j] = enc[j-nk] ^ t
		}
	}

	dec := c.KeyDec[:total]
	copy(dec[:4], enc[4*nr:])
	for r := 1; r < nr; r++ {
		src := enc[4*(nr-r):]
		dst := dec[4*r:]
		dst[0] = invMixColumn(src[0])
		dst[1] = invMixColumn(src[1])
		dst[2] = invMixColumn(src[2])
		dst[3] = invMixColumn(src[3])
	}
	copy(dec[4*nr:], enc[:4])
}

// encryptBlockGeneric encrypts src[:16] into dst[:16].
func encryptBlockGeneric(c *Ctx, dst, src []byte) {
	nr := c.rounds()
	rk := c.KeyEnc[:4*(nr+1)]
	_ = src[15]
	s0 := binary.LittleEndian.Uint32(src[0:]) ^ rk[0]
	s1 := binary.LittleEndian.Uint32(src[4:]) ^ rk[1]
	s2 := binary.LittleEndian.Uint32(src[8:]) ^ rk[2]
	s3 := binary.LittleEndian.Uint32(src[12:]) ^ rk[3]
	for r := 1; r < nr; r++ {
		k := rk[4*r : 4*r+4]
		t0, t1, t2, t3 := subShift(s0, s1, s2, s3)
		s0 = mixColumn(t0) ^ k[0]
		s1 = mixColumn(t1) ^ k[1]
		s2 = mixColumn(t2) ^ k[2]
		s3 = mixColumn(t3) ^ k[3]
	}
	k := rk[4*nr : 4*nr+4]
	t0, t1, t2, t3 := subShift(s0, s1, s2, s3)
	_ = dst[15]
	binary.LittleEndian.PutUint32(dst[0:], t0^k[0])
	binary.LittleEndian.PutUint32(dst[4:], t1^k[1])
	binary.LittleEndian.PutUint32(dst[8:], t2^k[2])
	binary.LittleEndian.PutUint32(dst[12:], t3^k[3])
}

// subShift is SubBytes followed by ShiftRows: row r of output column j is
// the substituted row r of input column j+r (mod 4).
func subShift(s0, s1, s2, s3 uint32) (t0, t1, t2, t3 uint32) {
	t0 = uint32(sbox[byte(s0)]) | uint32(sbox[byte(s1>>8)])<<8 |
		uint32(sbox[byte(s2>>16)])<<16 | uint32(sbox[byte(s3>>24)])<<24
	t1 = uint32(sbox[byte(s1)]) | uint32(sbox[byte(s2>>8)])<<8 |
		uint32(sbox[byte(s3>>16)])<<16 | uint32(sbox[byte(s0>>24)])<<24
	t2 = uint32(sbox[byte(s2)]) | uint32(sbox[byte(s3>>8)])<<8 |
		uint32(sbox[byte(s0>>16)])<<16 | uint32(sbox[byte(s1>>24)])<<24
	t3 = uint32(sbox[byte(s3)]) | uint32(sbox[byte(s0>>8)])<<8 |
		uint32(sbox[byte(s1>>16)])<<16 | uint32(sbox[byte(s2>>24)])<<24
	return
}

// invSubShift is InvSubBytes followed by InvShiftRows: row r of output
// column j is the inverse-substituted row r of input column j-r (mod 4).
func invSubShift(s0, s1, s2, s3 uint32) (t0, t1, t2, t3 uint32) {
	t0 = uint32(invSbox[byte(s0)]) | uint32(invSbox[byte(s3>>8)])<<8 |
		uint32(invSbox[byte(s2>>16)])<<16 | uint32(invSbox[byte(s1>>24)])<<24
	t1 = uint32(invSbox[byte(s1)]) | uint32(invSbox[byte(s0>>8)])<<8 |
		uint32(invSbox[byte(s3>>16)])<<16 | uint32(invSbox[byte(s2>>24)])<<24
	t2 = uint32(invSbox[byte(s2)]) | uint32(invSbox[byte(s1>>8)])<<8 |
		uint32(invSbox[byte(s0>>16)])<<16 | uint32(invSbox[byte(s3>>24)])<<24
	t3 = uint32(invSbox[byte(s3)]) | uint32(invSbox[byte(s2>>8)])<<8 |
		uint32(invSbox[byte(s1>>16)])<<16 | uint32(invSbox[byte(s0>>24)])<<24
	return
}

// decryptBlockGeneric decrypts src[:16] into dst[:16] with the Equivalent
// Inverse Cipher (FIPS-197 section 5.3.5).
func decryptBlockGeneric(c *Ctx, dst, src []byte) {
	nr := c.rounds()
	rk := c.KeyDec[:4*(nr+1)]
	_ = src[15]
	s0 := binary.LittleEndian.Uint32(src[0:]) ^ rk[0]
	s1 := binary.LittleEndian.Uint32(src[4:]) ^ rk[1]
	s2 := binary.LittleEndian.Uint32(src[8:]) ^ rk[2]
	s3 := binary.LittleEndian.Uint32(src[12:]) ^ rk[3]
	for r := 1; r < nr; r++ {
		k := rk[4*r : 4*r+4]
		t0, t1, t2, t3 := invSubShift(s0, s1, s2, s3)
		s0 = invMixColumn(t0) ^ k[0]
		s1 = invMixColumn(t1) ^ k[1]
		s2 = invMixColumn(t2) ^ k[2]
		s3 = invMixColumn(t3) ^ k[3]
	}
	k := rk[4*nr : 4*nr+4]
	t0, t1, t2, t3 := invSubShift(s0, s1, s2, s3)
	_ = dst[15]
	binary.LittleEndian.PutUint32(dst[0:], t0^k[0])
	binary.LittleEndian.PutUint32(dst[4:], t1^k[1])
	binary.LittleEndian.PutUint32(dst[8:], t2^k[2])
	binary.LittleEndian.PutUint32(dst[12:], t3^k[3])
}

// xorBlock sets dst[:16] = a[:16] ^ b[:16].
func xorBlock(dst, a, b []byte) {
	x := binary.LittleEndian.Uint64(a[0:]) ^ binary.LittleEndian.Uint64(b[0:])
	y := binary.LittleEndian.Uint64(a[8:]) ^ binary.LittleEndian.Uint64(b[8:])
	binary.LittleEndian.PutUint64(dst[0:], x)
	binary.LittleEndian.PutUint64(dst[8:], y)
}

// ecbEncryptGeneric encrypts len(src)/16 blocks.
func ecbEncryptGeneric(c *Ctx, dst, src []byte) {
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		encryptBlockGeneric(c, dst[i:i+BlockSize], src[i:i+BlockSize])
	}
}

// ecbDecryptGeneric decrypts len(src)/16 blocks.
func ecbDecryptGeneric(c *Ctx, dst, src []byte) {
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		decryptBlockGeneric(c, dst[i:i+BlockSize], src[i:i+BlockSize])
	}
}

// cbcEncryptGeneric is crypto/cbc.c's encryption loop: each plaintext block
// is XORed with the previous ciphertext block (the IV for the first) and
// encrypted; iv is left holding the last ciphertext block.
func cbcEncryptGeneric(c *Ctx, dst, src []byte, iv *[BlockSize]byte) {
	chain := *iv
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		xorBlock(chain[:], chain[:], src[i:])
		encryptBlockGeneric(c, chain[:], chain[:])
		copy(dst[i:i+BlockSize], chain[:])
	}
	*iv = chain
}

// cbcDecryptGeneric is crypto/cbc.c's decryption loop; iv is left holding the
// last ciphertext block. In-place requests work because each ciphertext
// block is saved before its plaintext overwrites it.
func cbcDecryptGeneric(c *Ctx, dst, src []byte, iv *[BlockSize]byte) {
	chain := *iv
	var ct [BlockSize]byte
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		copy(ct[:], src[i:i+BlockSize])
		decryptBlockGeneric(c, dst[i:i+BlockSize], ct[:])
		xorBlock(dst[i:], dst[i:], chain[:])
		chain = ct
	}
	*iv = chain
}

// gf128Double multiplies an XTS tweak by the primitive element x of
// GF(2^128) modulo x^128+x^7+x^2+x+1, in the little-endian convention of
// IEEE 1619 (gf128mul_x_ble in include/crypto/gf128mul.h): bit 0 of byte 0
// is the constant term.
func gf128Double(t *[BlockSize]byte) {
	lo := binary.LittleEndian.Uint64(t[0:])
	hi := binary.LittleEndian.Uint64(t[8:])
	carry := hi >> 63
	hi = hi<<1 | lo>>63
	lo = lo<<1 ^ carry*0x87
	binary.LittleEndian.PutUint64(t[0:], lo)
	binary.LittleEndian.PutUint64(t[8:], hi)
}

// xtsEncryptGeneric encrypts len(src)/16 whole blocks with the tweak
// sequence starting at *t, leaving *t at the tweak of the next block.
func xtsEncryptGeneric(c *Ctx, dst, src []byte, t *[BlockSize]byte) {
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		b := dst[i : i+BlockSize]
		xorBlock(b, src[i:], t[:])
		encryptBlockGeneric(c, b, b)
		xorBlock(b, b, t[:])
		gf128Double(t)
	}
}

// xtsDecryptGeneric decrypts len(src)/16 whole blocks, like
// xtsEncryptGeneric.
func xtsDecryptGeneric(c *Ctx, dst, src []byte, t *[BlockSize]byte) {
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		b := dst[i : i+BlockSize]
		xorBlock(b, src[i:], t[:])
		decryptBlockGeneric(c, b, b)
		xorBlock(b, b, t[:])
		gf128Double(t)
	}
}
