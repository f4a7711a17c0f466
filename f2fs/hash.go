package f2fs

import (
	"github.com/dchest/siphash"
)

// Hash codes of the special entries (F2FS_DOT_HASH and F2FS_DDOT_HASH in
// include/linux/f2fs_fs.h).
const (
	DotHash  uint32 = 0
	DDotHash uint32 = DotHash
)

// isDotDotdot reports whether name is "." or ".." (is_dot_dotdot in fs/f2fs/f2fs.h).
func isDotDotdot(name []byte) bool {
	switch len(name) {
	case 1:
		return name[0] == '.'
	case 2:
		return name[0] == '.' && name[1] == '.'
	}
	return false
}

// F2fsDentryHash returns the hash_code f2fs stores for name in a directory that is not both
// encrypted and casefolded, as f2fs_hash_filename in fs/f2fs/hash.c computes it: DotHash for
// "." and "..", otherwise TEA_hash_name, the TEA transform over 16-byte chunks of the name
// (unsigned bytes, pad word len|len<<8|len<<16|len<<24, MD4 start values), whose first state
// word is the hash. Masking it with ~F2FS_HASH_COL_BIT (bit 63) leaves a 32-bit value
// unchanged, so every bit of that word is kept.
//
// The value is the CPU-order hash; on disk it is stored as __le32 (f2fs_hash_t).
//
// name is the exact byte string to hash. In a casefolded directory the kernel hashes the
// casefolded name and falls back to the raw name when folding fails (f2fs_init_casefolded_name
// in fs/f2fs/dir.c; strict-encoding superblocks reject the name with EINVAL instead). Folding
// goes into an F2FS_NAME_LEN (255) byte buffer and counts as failed when it returns <= 0, so
// invalid UTF-8, a folded form of 255 bytes or more (no room for the terminating NUL) and an
// empty folded form all hash the raw name. The "." and ".." test applies to the name as
// given. Folding is the caller's job: pass the folded name, or the raw one when folding
// failed.
//
// F2fsDentryHash does not allocate.
func F2fsDentryHash(name []byte) uint32 {
	if isDotDotdot(name) {
		return DotHash
	}
	return teaHashName(name)
}

// F2fsDentryHashSiphash returns the hash_code of name in an encrypted and casefolded
// directory, as f2fs_hash_filename computes it: DotHash for "." and "..", otherwise the low 32
// bits of fscrypt_fname_siphash, SipHash-2-4 of the name keyed by the directory's dirhash key
// (ci_dirhash_key: the 16 derived key bytes as two le64 words), with no bit masked.
//
// As for F2fsDentryHash, name must already be casefolded by the caller (the plaintext
// name, or the raw plaintext when folding failed). The kernel only takes this path once the
// directory's key is set up, so the key is a value, not an optional pointer.
//
// F2fsDentryHashSiphash does not allocate.
func F2fsDentryHashSiphash(name []byte, key [2]uint64) uint32 {
	if isDotDotdot(name) {
		return DotHash
	}
	return uint32(fscryptFnameSiphash(&key, name))
}

// fscryptFnameSiphash is fscrypt_fname_siphash (fs/crypto/fname.c): SipHash-2-4 of name
// under the directory's dirhash key.
func fscryptFnameSiphash(key *[2]uint64, name []byte) uint64 {
	return siphash.Hash(key[0], key[1], name)
}

// teaHashName is TEA_hash_name: unlike ext4's loop it transforms at least once, so an empty
// name hashes one chunk of pad words.
func teaHashName(name []byte) uint32 {
	buf := [4]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}
	var in [4]uint32
	p := name
	for {
		str2hashbuf(p, &in)
		teaTransform(&buf, &in)
		if len(p) <= 16 {
			break
		}
		p = p[16:]
	}
	return buf[0]
}

// str2hashbuf is f2fs's str2hashbuf with num = 4: it packs the first 16 bytes of msg
// big-endian into out, filling a short last word and the words past the end of msg with a pad
// derived from len(msg), the length still left to hash.
func str2hashbuf(msg []byte, out *[4]uint32) {
	n := uint32(len(msg))
	pad := n | n<<8
	pad |= pad << 16

	if len(msg) > 16 {
		msg = msg[:16]
	}
	k := 0
	for len(msg) >= 4 {
		out[k] = uint32(msg[0])<<24 | uint32(msg[1])<<16 | uint32(msg[2])<<8 | uint32(msg[3])
		k++
		msg = msg[4:]
	}
	if k < len(out) {
		val := pad
		for _, c := range msg {
			val = uint32(c) + val<<8
		}
		out[k] = val
		k++
	}
	for ; k < len(out); k++ {
		out[k] = pad
	}
}

// teaTransform is TEA_transform: 16 rounds of TEA mixing in into buf[0:2].
func teaTransform(buf *[4]uint32, in *[4]uint32) {
	const delta = 0x9E3779B9
	var sum uint32
	b0, b1 := buf[0], buf[1]
	a, b, c, d := in[0], in[1], in[2], in[3]
	for range 16 {
		sum += delta
		b0 += ((b1 << 4) + a) ^ (b1 + sum) ^ ((b1 >> 5) + b)
		b1 += ((b0 << 4) + c) ^ (b0 + sum) ^ ((b0 >> 5) + d)
	}
	buf[0] += b0
	buf[1] += b1
}
