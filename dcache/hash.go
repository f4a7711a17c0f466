package dcache

import (
	"fmt"
	"math/bits"
)

// GoldenRatio64 is GOLDEN_RATIO_64 (include/linux/hash.h).
const GoldenRatio64 = 0x61C8864680B583EB

// Qstr is struct qstr, a "quick string": a name with its hash. The length
// is len(Name). Hash is the dcache hash of Name salted with the parent
// dentry (FullNameHash), or what the parent's d_hash operation made of it.
type Qstr struct {
	Hash uint32
	Name string
}

// HashLen returns the name's hash and length packed as the kernel's
// qstr.hash_len (hashlen_create: len in the high 32 bits).
func (q Qstr) HashLen() uint64 { return HashlenCreate(q.Hash, uint32(len(q.Name))) }

// String renders the qstr as `"name"/0x1234abcd`.
func (q Qstr) String() string { return fmt.Sprintf("%q/%#08x", q.Name, q.Hash) }

// HashlenCreate packs a hash and a length (hashlen_create).
func HashlenCreate(hash, length uint32) uint64 { return uint64(length)<<32 | uint64(hash) }

// HashlenHash returns the hash half of a hash_len (hashlen_hash).
func HashlenHash(hl uint64) uint32 { return uint32(hl) }

// HashlenLen returns the length half of a hash_len (hashlen_len).
func HashlenLen(hl uint64) uint32 { return uint32(hl >> 32) }

// hashMix is HASH_MIX for 64-bit longs (fs/namei.c, CONFIG_DCACHE_WORD_ACCESS
// on x86-64): two state words, rotations 12 and 45, a multiplication by 9.
func hashMix(x, y, a uint64) (uint64, uint64) {
	x ^= a
	y ^= x
	x = bits.RotateLeft64(x, 12)
	x += y
	y = bits.RotateLeft64(y, 45)
	y *= 9
	return x, y
}

// foldHash is fold_hash (fs/namei.c, 64-bit): the two state words folded
// into the high 32 bits of a golden-ratio product.
func foldHash(x, y uint64) uint32 {
	y ^= x * GoldenRatio64
	y *= GoldenRatio64
	return uint32(y >> 32)
}

// load64 reads the 8 bytes of s at i as a little-endian word (the
// compiler merges the byte loads into one).
func load64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// loadTail reads the n < 8 bytes of s at i as a little-endian word with the
// missing high bytes zero: load_unaligned_zeropad masked with
// bytemask_from_count(n).
func loadTail(s string, i, n int) uint64 {
	var a uint64
	for k := n - 1; k >= 0; k-- {
		a = a<<8 | uint64(s[i+k])
	}
	return a
}

// FullNameHash is full_name_hash (fs/namei.c) as x86-64 computes it with
// word-at-a-time loads: name is consumed 8 bytes at a time, little-endian,
// through HASH_MIX with the salt as the initial y, the last partial word
// masked to its length and xored into x, and fold_hash gives 32 bits. The
// dcache salts names with the parent dentry's address (Dentry.Salt).
//
// The value is exactly the kernel's for the same salt; it is never stored
// on disk, and the model's dentry addresses are synthetic, so what matters
// is that every path to a dentry (d_alloc_name's hashlen_string, the path
// walk's hash_name, a filesystem's full_name_hash) agrees.
func FullNameHash(salt uint64, name string) uint32 {
	x, y := uint64(0), salt
	i, n := 0, len(name)
	for n >= 8 {
		x, y = hashMix(x, y, load64(name, i))
		i += 8
		n -= 8
	}
	if n > 0 {
		x ^= loadTail(name, i, n)
	}
	return foldHash(x, y)
}

// HashlenString is hashlen_string (fs/namei.c): the hash and length of a
// NUL-terminated name, packed as a hash_len. The name ends at its first NUL
// byte or at the end of s.
func HashlenString(salt uint64, s string) uint64 {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			n = i
			break
		}
	}
	return HashlenCreate(FullNameHash(salt, s[:n]), uint32(n))
}

// HashName is hash_name (fs/namei.c) as the path walk uses it: the hash and
// length of the component at the start of path, which ends at the first '/'
// or NUL byte or at the end of path.
func HashName(salt uint64, path string) uint64 {
	n := len(path)
	for i := 0; i < len(path); i++ {
		if c := path[i]; c == '/' || c == 0 {
			n = i
			break
		}
	}
	return HashlenCreate(FullNameHash(salt, path[:n]), uint32(n))
}

// InitNameHash is init_name_hash (include/linux/stringhash.h): the salt is
// the initial state of a byte-at-a-time hash.
func InitNameHash(salt uint64) uint64 { return salt }

// PartialNameHash is partial_name_hash (include/linux/stringhash.h):
// (prevhash + (c << 4) + (c >> 4)) * 11 on an unsigned long.
func PartialNameHash(c, prevhash uint64) uint64 { return (prevhash + c<<4 + c>>4) * 11 }

// GoldenRatio32 is GOLDEN_RATIO_32 (include/linux/hash.h).
const GoldenRatio32 = 0x61C88647

// EndNameHash is end_name_hash (include/linux/stringhash.h):
// __hash_32((unsigned int)hash), the low 32 bits multiplied by
// GOLDEN_RATIO_32 (hash.h's generic __hash_32, which x86 does not
// override). Older kernels used hash_long(hash, 32).
func EndNameHash(hash uint64) uint32 { return uint32(hash) * GoldenRatio32 }
