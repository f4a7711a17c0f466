package ext4

import (
	"encoding/binary"
	"math/bits"

	"github.com/dchest/siphash"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// Directory hash versions, as stored in s_def_hash_version and dx_root_info.hash_version
// (DX_HASH_* in fs/ext4/ext4.h).
const (
	// DxHashLegacy is the original dx_hack_hash over signed chars (DX_HASH_LEGACY).
	DxHashLegacy uint8 = 0
	// DxHashHalfMD4 is the cut-down MD4 over 32-byte chunks of signed chars (DX_HASH_HALF_MD4).
	DxHashHalfMD4 uint8 = 1
	// DxHashTEA is the TEA transform over 16-byte chunks of signed chars (DX_HASH_TEA).
	DxHashTEA uint8 = 2
	// DxHashLegacyUnsigned is DxHashLegacy over unsigned chars (DX_HASH_LEGACY_UNSIGNED).
	DxHashLegacyUnsigned uint8 = 3
	// DxHashHalfMD4Unsigned is DxHashHalfMD4 over unsigned chars (DX_HASH_HALF_MD4_UNSIGNED).
	DxHashHalfMD4Unsigned uint8 = 4
	// DxHashTEAUnsigned is DxHashTEA over unsigned chars (DX_HASH_TEA_UNSIGNED).
	DxHashTEAUnsigned uint8 = 5
	// DxHashSiphash is SipHash-2-4 keyed by the directory's fscrypt dirhash key
	// (DX_HASH_SIPHASH); ext4 uses it exactly for encrypted and casefolded directories.
	DxHashSiphash uint8 = 6
	// DxHashLast is the highest defined hash version (DX_HASH_LAST).
	DxHashLast = DxHashSiphash
)

// End-of-directory markers for htree readdir positions (EXT4_HTREE_EOF_32BIT and
// EXT4_HTREE_EOF_64BIT in fs/ext4/ext4.h). No name hashes to HtreeEOF32Bit<<1: Ext4fsDirhash
// moves that value to (HtreeEOF32Bit-1)<<1.
const (
	HtreeEOF32Bit uint32 = 1<<31 - 1
	HtreeEOF64Bit uint64 = 1<<63 - 1
)

// Start values of the MD4 and TEA state when the superblock seed is all zero (the MD4
// initial chaining values, as in __ext4fs_dirhash).
var defaultHashSeed = [4]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}

// DxHashInfo mirrors struct dx_hash_info (fs/ext4/ext4.h): the input hash version and seed,
// and the output hash and minor hash of Ext4fsDirhash.
type DxHashInfo struct {
	// Hash is the major hash: always even and never HtreeEOF32Bit<<1.
	Hash uint32
	// MinorHash is the minor hash; 0 for the legacy versions.
	MinorHash uint32
	// HashVersion is one of the DxHash* constants. The kernel's dx_probe adds 3 to a signed
	// version (<= DxHashTEA) when the superblock carries EXT2_FLAGS_UNSIGNED_HASH; that choice
	// belongs to the caller.
	HashVersion uint8
	// Seed is s_hash_seed as four host-order words (see HashSeedWords). Nil or all zero selects
	// the default MD4 start values; any non-zero word selects the whole seed. The legacy and
	// siphash versions ignore it.
	Seed *[4]uint32
}

// HashSeedWords converts the 16 bytes of the superblock's s_hash_seed field into the four
// words the hash uses (le32_to_cpu of each __le32, as ext4_fill_super does).
func HashSeedWords(sHashSeed *[16]byte) [4]uint32 {
	var w [4]uint32
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(sHashSeed[4*i:])
	}
	return w
}

// Ext4fsDirhash computes the htree hash of name into hinfo.Hash and hinfo.MinorHash, as
// __ext4fs_dirhash in fs/ext4/hash.c does.
//
// name is the exact byte string to hash. In a casefolded directory whose key (if encrypted)
// is available, the kernel's ext4fs_dirhash first casefolds a non-empty name (utf8_casefold
// into a PATH_MAX buffer) and hashes the raw bytes only when folding fails (returns < 0); a
// name that folds to nothing hashes as the empty string. This holds for DxHashSiphash too:
// ext4_fname_setup_ci_filename's own fold into an EXT4_NAME_LEN buffer only chooses the
// string handed to ext4fs_dirhash, which folds it again. That folding is the caller's job:
// pass the folded name here, or the raw one when folding failed.
//
// sipKey is the directory's fscrypt dirhash key (ci_dirhash_key: the 16 derived key bytes as
// two le64 words), used only by DxHashSiphash, which computes SipHash-2-4 of name as
// fscrypt_fname_siphash does and splits it into hash = high 32 bits and minor = low 32 bits.
// A nil sipKey means the key is not available.
//
// Errors, as the kernel returns them (values from package errno):
//   - errno.EINVAL for a hash version the kernel does not know; Hash and MinorHash are
//     zeroed ("invalid/unsupported hash tree version").
//   - errno.EPERM for DxHashSiphash without a key: the kernel returns -1 ("Siphash requires
//     key"), which callers propagate as -EPERM; hinfo is left unchanged.
//   - errno.EINVAL for a nil hinfo (a simulator-only check).
//
// Ext4fsDirhash does not allocate.
func Ext4fsDirhash(name []byte, hinfo *DxHashInfo, sipKey *[2]uint64) error {
	if hinfo == nil {
		return errno.EINVAL
	}
	buf := defaultHashSeed
	if s := hinfo.Seed; s != nil && (s[0]|s[1]|s[2]|s[3]) != 0 {
		buf = *s
	}

	var hash, minor uint32
	switch hinfo.HashVersion {
	case DxHashLegacyUnsigned:
		hash = dxHackHash(name, false)
	case DxHashLegacy:
		hash = dxHackHash(name, true)
	case DxHashHalfMD4, DxHashHalfMD4Unsigned:
		signed := hinfo.HashVersion == DxHashHalfMD4
		var in [8]uint32
		for p := name; len(p) > 0; {
			str2hashbuf(p, in[:], signed)
			halfMD4Transform(&buf, &in)
			if len(p) <= 32 {
				break
			}
			p = p[32:]
		}
		hash, minor = buf[1], buf[2]
	case DxHashTEA, DxHashTEAUnsigned:
		signed := hinfo.HashVersion == DxHashTEA
		var in [4]uint32
		for p := name; len(p) > 0; {
			str2hashbuf(p, in[:], signed)
			teaTransform(&buf, &in)
			if len(p) <= 16 {
				break
			}
			p = p[16:]
		}
		hash, minor = buf[0], buf[1]
	case DxHashSiphash:
		if sipKey == nil {
			return errno.EPERM
		}
		h := fscryptFnameSiphash(sipKey, name)
		hash, minor = uint32(h>>32), uint32(h)
	default:
		hinfo.Hash, hinfo.MinorHash = 0, 0
		return errno.EINVAL
	}
	hash &^= 1
	if hash == HtreeEOF32Bit<<1 {
		hash = (HtreeEOF32Bit - 1) << 1
	}
	hinfo.Hash, hinfo.MinorHash = hash, minor
	return nil
}

// fscryptFnameSiphash is fscrypt_fname_siphash (fs/crypto/fname.c): SipHash-2-4 of name
// under the directory's dirhash key.
func fscryptFnameSiphash(key *[2]uint64, name []byte) uint64 {
	return siphash.Hash(key[0], key[1], name)
}

// charVal widens one name byte the way the C code does: through signed char for the signed
// hash versions (bytes >= 0x80 become negative), through unsigned char otherwise.
func charVal(c byte, signed bool) uint32 {
	if signed {
		return uint32(int32(int8(c)))
	}
	return uint32(c)
}

// dxHackHash is dx_hack_hash_signed / dx_hack_hash_unsigned, the legacy hash.
func dxHackHash(name []byte, signed bool) uint32 {
	hash0, hash1 := uint32(0x12a3fe2d), uint32(0x37abe8f9)
	for _, c := range name {
		// The product fits in a C int for every byte value, so no overflow question arises.
		h := hash1 + (hash0 ^ charVal(c, signed)*7152373)
		if h&0x80000000 != 0 {
			h -= 0x7fffffff
		}
		hash1, hash0 = hash0, h
	}
	return hash0 << 1
}

// str2hashbuf is str2hashbuf_signed / str2hashbuf_unsigned: it packs the first 4*len(out)
// bytes of msg big-endian into the words of out, filling a short last word and the words past
// the end of msg with a pad derived from len(msg), the length still left to hash.
func str2hashbuf(msg []byte, out []uint32, signed bool) {
	n := uint32(len(msg))
	pad := n | n<<8
	pad |= pad << 16

	if len(msg) > 4*len(out) {
		msg = msg[:4*len(out)]
	}
	k := 0
	for len(msg) >= 4 {
		out[k] = charVal(msg[0], signed)<<24 + charVal(msg[1], signed)<<16 +
			charVal(msg[2], signed)<<8 + charVal(msg[3], signed)
		k++
		msg = msg[4:]
	}
	if k < len(out) {
		val := pad
		for _, c := range msg {
			val = charVal(c, signed) + val<<8
		}
		out[k] = val
		k++
	}
	for ; k < len(out); k++ {
		out[k] = pad
	}
}

// teaTransform is TEA_transform: 16 rounds of TEA mixing in[0:4] into buf[0:2].
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

// halfMD4Transform is half_md4_transform: three reduced MD4 rounds over eight input words.
func halfMD4Transform(buf *[4]uint32, in *[8]uint32) {
	const (
		k2 = 0x5A827999 // 013240474631
		k3 = 0x6ED9EBA1 // 015666365641
	)
	f := func(x, y, z uint32) uint32 { return z ^ (x & (y ^ z)) }
	g := func(x, y, z uint32) uint32 { return (x & y) + ((x ^ y) & z) }
	h := func(x, y, z uint32) uint32 { return x ^ y ^ z }
	rl := bits.RotateLeft32
	a, b, c, d := buf[0], buf[1], buf[2], buf[3]

	a = rl(a+f(b, c, d)+in[0], 3)
	d = rl(d+f(a, b, c)+in[1], 7)
	c = rl(c+f(d, a, b)+in[2], 11)
	b = rl(b+f(c, d, a)+in[3], 19)
	a = rl(a+f(b, c, d)+in[4], 3)
	d = rl(d+f(a, b, c)+in[5], 7)
	c = rl(c+f(d, a, b)+in[6], 11)
	b = rl(b+f(c, d, a)+in[7], 19)

	a = rl(a+g(b, c, d)+in[1]+k2, 3)
	d = rl(d+g(a, b, c)+in[3]+k2, 5)
	c = rl(c+g(d, a, b)+in[5]+k2, 9)
	b = rl(b+g(c, d, a)+in[7]+k2, 13)
	a = rl(a+g(b, c, d)+in[0]+k2, 3)
	d = rl(d+g(a, b, c)+in[2]+k2, 5)
	c = rl(c+g(d, a, b)+in[4]+k2, 9)
	b = rl(b+g(c, d, a)+in[6]+k2, 13)

	a = rl(a+h(b, c, d)+in[3]+k3, 3)
	d = rl(d+h(a, b, c)+in[7]+k3, 9)
	c = rl(c+h(d, a, b)+in[2]+k3, 11)
	b = rl(b+h(c, d, a)+in[6]+k3, 15)
	a = rl(a+h(b, c, d)+in[1]+k3, 3)
	d = rl(d+h(a, b, c)+in[5]+k3, 9)
	c = rl(c+h(d, a, b)+in[0]+k3, 11)
	b = rl(b+h(c, d, a)+in[4]+k3, 15)

	buf[0] += a
	buf[1] += b
	buf[2] += c
	buf[3] += d
}

// Dirhash is ext4fs_dirhash (fs/ext4/hash.c) for a name in dir: FoldDirhash
// with the directory's encoding when it is casefolded and its key (if
// encrypted) is present, and its SipHash key when it is encrypted and
// casefolded.
func Dirhash(t *kernel.Task, dir *Inode, name []byte, hinfo *DxHashInfo) error {
	var key *[2]uint64
	hasKey := true
	if dir.IsEncrypted() {
		hasKey = dir.hasKey()
		if k, ok := dir.dirhashKey(); ok && dir.IsCasefolded() {
			key = &k
		}
	}
	var enc Encoding
	if dir.IsCasefolded() && hasKey {
		enc = dir.SB.Encoding
	}
	return FoldDirhash(t, enc, name, hinfo, key)
}

// FoldDirhash is ext4fs_dirhash given what it reads from the directory:
// with enc (the encoding of a casefolded directory whose key, if
// encrypted, is present; nil otherwise) a non-empty name is casefolded into
// a kzalloc'd PATH_MAX buffer first (the raw name is hashed when folding
// fails); then __ext4fs_dirhash, with sipKey for DX_HASH_SIPHASH. Errors:
// ENOMEM, and Ext4fsDirhash's.
func FoldDirhash(t *kernel.Task, enc Encoding, name []byte, hinfo *DxHashInfo, sipKey *[2]uint64) error {
	if len(name) > 0 && enc != nil {
		buff, err := t.Kzalloc(siteDirhashBuff, pathMax, kmem.GFPKernel)
		if err != nil {
			return errno.ENOMEM
		}
		n, ferr := enc.Casefold(buff, name)
		if ferr == nil {
			err = Ext4fsDirhash(buff[:n], hinfo, sipKey)
			t.Kfree(siteDirhashBuff, buff)
			return err
		}
		t.Kfree(siteDirhashBuff, buff)
	}
	return Ext4fsDirhash(name, hinfo, sipKey)
}
