package adiantum

import (
	"encoding/binary"
)

// NHPoly1305, the ε-∆U hash Adiantum applies to the bulk of the message
// (Linux crypto/nhpoly1305.c with crypto/nh_generic semantics; the
// "nhpoly1305" shash).
//
// The message is cut into 1024-byte chunks. Each chunk, zero-padded to a
// multiple of 16 bytes, is hashed by NH into 32 bytes, and the NH hashes are
// absorbed by Poly1305 (as two full blocks each). The result is the unmasked
// Poly1305 value.

const (
	// nhMessageBytes is the NH chunk size (NH_MESSAGE_BYTES).
	nhMessageBytes = 1024
	// nhMessageUnit is the NH stride (NH_MESSAGE_UNIT).
	nhMessageUnit = 16
	// nhPasses is the number of NH passes (NH_NUM_PASSES).
	nhPasses = 4
	// nhKeyWords is the NH key length in 32-bit words (NH_KEY_WORDS): one word
	// per 4 message bytes plus 4 words for each pass after the first.
	nhKeyWords = nhMessageBytes/4 + 4*(nhPasses-1)
	// nhKeyBytes is the NH key length in bytes (NH_KEY_BYTES, 1072).
	nhKeyBytes = nhKeyWords * 4
	// nhpolyKeySize is the NHPoly1305 key length (NHPOLY1305_KEY_SIZE): a
	// Poly1305 key followed by the NH key.
	nhpolyKeySize = poly1305BlockSize + nhKeyBytes
)

// nhpolyKey is an expanded NHPoly1305 key.
type nhpolyKey struct {
	poly poly1305Key
	nh   [nhKeyWords]uint32
}

// setKey loads a 1088-byte NHPoly1305 key (nhpoly1305_setkey).
func (k *nhpolyKey) setKey(raw []byte) {
	k.poly.setKey(raw[:poly1305BlockSize])
	raw = raw[poly1305BlockSize:]
	for i := range k.nh {
		k.nh[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
}

// nh hashes msg (at most 1024 bytes, a multiple of 16) with key and returns
// the four 64-bit pass sums. Additions are modulo 2^32 before each 32x32->64
// multiplication and modulo 2^64 after, as in the kernel's nh_generic.
func nh(key *[nhKeyWords]uint32, msg []byte) [nhPasses]uint64 {
	var s0, s1, s2, s3 uint64
	k := key[:]
	for len(msg) >= nhMessageUnit {
		m0 := binary.LittleEndian.Uint32(msg[0:])
		m1 := binary.LittleEndian.Uint32(msg[4:])
		m2 := binary.LittleEndian.Uint32(msg[8:])
		m3 := binary.LittleEndian.Uint32(msg[12:])
		kk := k[:16]
		s0 += uint64(m0+kk[0])*uint64(m2+kk[2]) + uint64(m1+kk[1])*uint64(m3+kk[3])
		s1 += uint64(m0+kk[4])*uint64(m2+kk[6]) + uint64(m1+kk[5])*uint64(m3+kk[7])
		s2 += uint64(m0+kk[8])*uint64(m2+kk[10]) + uint64(m1+kk[9])*uint64(m3+kk[11])
		s3 += uint64(m0+kk[12])*uint64(m2+kk[14]) + uint64(m1+kk[13])*uint64(m3+kk[15])
		k = k[4:]
		msg = msg[nhMessageUnit:]
	}
	return [nhPasses]uint64{s0, s1, s2, s3}
}

// nhpoly1305 returns NHPoly1305(key, msg) as two little-endian 64-bit words
// (the 16-byte digest of nhpoly1305_final).
func nhpoly1305(key *nhpolyKey, msg []byte) (lo, hi uint64) {
	var st poly1305State
	for len(msg) > 0 {
		n := min(len(msg), nhMessageBytes)
		chunk := msg[:n]
		var sums [nhPasses]uint64
		if tail := n % nhMessageUnit; tail != 0 {
			// Zero-pad the final partial unit on the stack.
			sums = nh(&key.nh, chunk[:n-tail])
			var pad [nhMessageUnit]byte
			copy(pad[:], chunk[n-tail:])
			last := nhTail(&key.nh, (n-tail)/4, pad[:])
			for i := range sums {
				sums[i] += last[i]
			}
		} else {
			sums = nh(&key.nh, chunk)
		}
		st.absorb(&key.poly, sums[0], sums[1], 1)
		st.absorb(&key.poly, sums[2], sums[3], 1)
		msg = msg[n:]
	}
	return st.emit()
}

// nhTail hashes one 16-byte unit that sits at key word offset off within its
// chunk, returning its contribution to the four pass sums.
func nhTail(key *[nhKeyWords]uint32, off int, unit []byte) [nhPasses]uint64 {
	m0 := binary.LittleEndian.Uint32(unit[0:])
	m1 := binary.LittleEndian.Uint32(unit[4:])
	m2 := binary.LittleEndian.Uint32(unit[8:])
	m3 := binary.LittleEndian.Uint32(unit[12:])
	kk := key[off : off+16]
	return [nhPasses]uint64{
		uint64(m0+kk[0])*uint64(m2+kk[2]) + uint64(m1+kk[1])*uint64(m3+kk[3]),
		uint64(m0+kk[4])*uint64(m2+kk[6]) + uint64(m1+kk[5])*uint64(m3+kk[7]),
		uint64(m0+kk[8])*uint64(m2+kk[10]) + uint64(m1+kk[9])*uint64(m3+kk[11]),
		uint64(m0+kk[12])*uint64(m2+kk[14]) + uint64(m1+kk[13])*uint64(m3+kk[15]),
	}
}
