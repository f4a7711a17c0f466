package fscrypt

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/vfslab/vfslab/errno"
)

// No-key name layout (fs/crypto/fname.c struct fscrypt_nokey_name):
// u32 dirhash[2]; u8 bytes[149]; u8 sha256[32].
const (
	nokeyDirhashSize = 8
	// NokeyNameBytes is the number of ciphertext bytes a no-key name
	// carries before it switches to a SHA-256 of the rest.
	NokeyNameBytes = 149
	// NokeyNameMax is FSCRYPT_NOKEY_NAME_MAX: the decoded size of a no-key
	// name that includes the SHA-256 field (189 bytes).
	NokeyNameMax = nokeyDirhashSize + NokeyNameBytes + sha256.Size
	// NokeyNameMaxEncoded is FSCRYPT_NOKEY_NAME_MAX_ENCODED (252).
	NokeyNameMaxEncoded = (NokeyNameMax*4 + 2) / 3
)

// NokeyName is struct fscrypt_nokey_name decoded: what a directory listing
// without the key presents for one entry, and what a lookup of such a name
// searches for.
type NokeyName struct {
	// Hash and MinorHash are the filesystem's dirhash of the entry (zero
	// when it has none).
	Hash, MinorHash uint32
	// Bytes holds the ciphertext when it is at most 149 bytes long, else
	// its first 149 bytes.
	Bytes []byte
	// SHA256 is the SHA-256 of the ciphertext beyond byte 149; meaningful
	// only when Digested.
	SHA256   [sha256.Size]byte
	Digested bool
}

// String is the canonical one-line dump.
func (n *NokeyName) String() string {
	s := fmt.Sprintf("nokey hash=0x%08x minor=0x%08x bytes=%s", n.Hash, n.MinorHash, hex.EncodeToString(n.Bytes))
	if n.Digested {
		s += " sha256=" + hex.EncodeToString(n.SHA256[:])
	}
	return s
}

const base64urlTable = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// base64urlEncode is fscrypt_base64url_encode: RFC 4648 base64url without
// '=' padding, appended to dst.
func base64urlEncode(dst, src []byte) []byte {
	var ac uint32
	bits := 0
	for _, c := range src {
		ac = ac<<8 | uint32(c)
		bits += 8
		for bits >= 6 {
			bits -= 6
			dst = append(dst, base64urlTable[(ac>>bits)&0x3f])
		}
	}
	if bits != 0 {
		dst = append(dst, base64urlTable[(ac<<(6-bits))&0x3f])
	}
	return dst
}

var base64urlIndex = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(base64urlTable); i++ {
		t[base64urlTable[i]] = int8(i)
	}
	return
}()

// base64urlDecode is fscrypt_base64url_decode: it decodes src into dst
// (which must have room for len(src)*3/4 bytes) and returns the length, or
// -1 for a character outside the alphabet or non-zero leftover bits.
func base64urlDecode(dst, src []byte) int {
	var ac uint32
	bits, n := 0, 0
	for _, c := range src {
		v := base64urlIndex[c]
		if v < 0 {
			return -1
		}
		ac = ac<<6 | uint32(v)
		bits += 6
		if bits >= 8 {
			bits -= 8
			dst[n] = byte(ac >> bits)
			n++
		}
	}
	if ac&(1<<bits-1) != 0 {
		return -1
	}
	return n
}

// EncodeNokeyName is the no-key half of fscrypt_fname_disk_to_usr: the
// presentable name of an on-disk ciphertext name (at least 16 bytes) with
// the given dirhash, appended to dst. Ciphertexts longer than 149 bytes keep
// their first 149 bytes and the SHA-256 of the rest, so the result is at
// most 252 characters.
func EncodeNokeyName(dst []byte, hash, minorHash uint32, ciphertext []byte) []byte {
	var raw [NokeyNameMax]byte
	binary.LittleEndian.PutUint32(raw[0:], hash)
	binary.LittleEndian.PutUint32(raw[4:], minorHash)
	size := 0
	if len(ciphertext) <= NokeyNameBytes {
		copy(raw[nokeyDirhashSize:], ciphertext)
		size = nokeyDirhashSize + len(ciphertext)
	} else {
		copy(raw[nokeyDirhashSize:], ciphertext[:NokeyNameBytes])
		sum := sha256.Sum256(ciphertext[NokeyNameBytes:])
		copy(raw[nokeyDirhashSize+NokeyNameBytes:], sum[:])
		size = NokeyNameMax
	}
	return base64urlEncode(dst, raw[:size])
}

// DecodeNokeyName is the decoding step of fscrypt_setup_filename for a
// lookup without the key. Errors: ENOENT for a name longer than 252
// characters, not base64url, or whose decoded length is not 9..157 or
// exactly 189 (the kernel's rules; such a name cannot match any entry).
func DecodeNokeyName(name []byte) (NokeyName, error) {
	var n NokeyName
	if len(name) > NokeyNameMaxEncoded {
		return n, errno.ENOENT
	}
	var raw [NokeyNameMax + 2]byte
	size := base64urlDecode(raw[:], name)
	if size < nokeyDirhashSize+1 || (size > nokeyDirhashSize+NokeyNameBytes && size != NokeyNameMax) {
		return n, errno.ENOENT
	}
	n.Hash = binary.LittleEndian.Uint32(raw[0:])
	n.MinorHash = binary.LittleEndian.Uint32(raw[4:])
	if size == NokeyNameMax {
		n.Bytes = append([]byte(nil), raw[nokeyDirhashSize:nokeyDirhashSize+NokeyNameBytes]...)
		copy(n.SHA256[:], raw[nokeyDirhashSize+NokeyNameBytes:NokeyNameMax])
		n.Digested = true
	} else {
		n.Bytes = append([]byte(nil), raw[nokeyDirhashSize:size]...)
	}
	return n, nil
}
