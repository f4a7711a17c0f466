package bare

import (
	"crypto/sha256"
	"encoding/binary"
)

func stream(seed string, n int) []byte {
	out := make([]byte, 0, n+sha256.Size)
	buf := make([]byte, len(seed)+4)
	copy(buf, seed)
	for j := uint32(0); len(out) < n; j++ {
		binary.LittleEndian.PutUint32(buf[len(seed):], j)
		s := sha256.Sum256(buf)
		out = append(out, s[:]...)
	}
	return out[:n]
}

// PlaintextStream returns n bytes of SHA-256(seed || le32(0)) ||
// SHA-256(seed || le32(1)) || ..., deterministic key material and the
// plaintext of the known-answer file contents.txt.
func PlaintextStream(seed string, n int) []byte {
	return stream(seed, n)
}
