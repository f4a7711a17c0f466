package crypto

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"hash"

	"github.com/dchest/siphash"
	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// The crypto library functions (lib/crypto/, include/crypto/): direct calls
// with no tfm, no request and no allocation, which is what seed 002 moves
// fscrypt's v1 key derivation to.

// The AES library of Linux 7.0 and later (the libcrypto merge
// 13d83ea9d81d) has an x86 backend, lib/crypto/x86/aes.h: on a CPU with
// AES-NI, aes_preparekey_arch expands AES-128 and AES-256 keys with AES-NI
// and aes_encrypt_arch encrypts each block with it, each call in its own
// kernel_fpu_begin/kernel_fpu_end section (AES-192 keys, and everything
// on a CPU without AES-NI, take the generic C code, which uses no FPU).
// The model counts those sections (EvFPUBegin) when aes.Accelerated.

// AESExpandKey is aes_expandkey / aes_prepareenckey (lib/crypto/aes.c)
// through package crypto/aes, counting one key expansion, and the
// kernel_fpu section the x86 backend enters for a 16- or 32-byte key.
// Errors: EINVAL unless the key is 16, 24 or 32 bytes.
func AESExpandKey(t *kernel.Task, ctx *aes.Ctx, key []byte) error {
	if err := aes.ExpandKey(ctx, key); err != nil {
		return err
	}
	t.Inc(EvKeyExpansion)
	if aes.Accelerated() && len(key) != 24 {
		t.Inc(EvFPUBegin)
	}
	return nil
}

// AESEncryptBlocks encrypts src into dst one 16-byte block at a time with
// aes_encrypt, as a library user's loop does (fscrypt's derive_key_aes in
// Linux 7.1), counting len(src)/16 block operations once, and as many
// kernel_fpu sections on a CPU with AES-NI (one per aes_encrypt call).
// Errors: EINVAL unless len(src) is a multiple of 16 and dst is as long.
func AESEncryptBlocks(t *kernel.Task, ctx *aes.Ctx, dst, src []byte) error {
	if len(src)%aes.BlockSize != 0 || len(dst) < len(src) {
		return errno.EINVAL
	}
	for i := 0; i < len(src); i += aes.BlockSize {
		ctx.Encrypt(dst[i:i+aes.BlockSize], src[i:i+aes.BlockSize])
	}
	n := uint64(len(src) / aes.BlockSize)
	t.Add(EvAESBlocks, n)
	if aes.Accelerated() {
		t.Add(EvFPUBegin, n)
	}
	return nil
}

// SHA256 is sha256() (lib/crypto/sha256.c).
func SHA256(data []byte) [sha256.Size]byte { return sha256.Sum256(data) }

// SHA512 is sha512() (lib/crypto/sha512.c).
func SHA512(data []byte) [sha512.Size]byte { return sha512.Sum512(data) }

// HMACSHA512 is hmac_sha512_usingrawkey (lib/crypto/sha512.c): HMAC-SHA512
// of data under key (RFC 2104, RFC 4231), through the project's own
// HMAC (sha512.go), whose prepared key is wiped before returning.
func HMACSHA512(key, data []byte) [sha512.Size]byte {
	var k HMACSHA512Key
	HMACSHA512PrepareKey(&k, key)
	out := HMACSHA512Prepared(&k, data)
	k.Wipe()
	return out
}

// HKDFExtract is hkdf_extract (crypto/hkdf.c, RFC 5869 section 2.2): PRK =
// HMAC-Hash(salt, IKM), with a salt of HashLen zero bytes when salt is
// empty. fscrypt (fs/crypto/hkdf.c) extracts with SHA-512 and no salt.
// It runs on Go's crypto/hmac, whose keyed state cannot be wiped: key
// material that must be zeroed goes through HKDFExtractSHA512 and
// HKDFExpandSHA512 instead.
func HKDFExtract(h func() hash.Hash, salt, ikm []byte) []byte {
	if len(salt) == 0 {
		salt = make([]byte, h().Size())
	}
	m := hmac.New(h, salt)
	m.Write(ikm)
	return m.Sum(nil)
}

// HKDFExpand is hkdf_expand (crypto/hkdf.c, RFC 5869 section 2.3): it fills
// okm with T(1) || T(2) || ..., T(i) = HMAC-Hash(PRK, T(i-1) || info || i).
// Errors: EINVAL when okm is longer than 255 * HashLen or prk shorter than
// HashLen.
func HKDFExpand(h func() hash.Hash, prk, info, okm []byte) error {
	m := hmac.New(h, prk)
	hl := m.Size()
	if len(okm) > 255*hl || len(prk) < hl {
		return errno.EINVAL
	}
	var prev []byte
	var ctr [1]byte
	for off := 0; off < len(okm); off += hl {
		ctr[0]++
		m.Reset()
		m.Write(prev)
		m.Write(info)
		m.Write(ctr[:])
		prev = m.Sum(prev[:0])
		copy(okm[off:], prev)
	}
	clear(prev)
	return nil
}

// HKDFExtractSHA512 is HKDFExtract with SHA-512 (fscrypt_init_hkdf),
// computed with the project's HMAC-SHA512 (sha512.go), which leaves no
// keyed state behind.
func HKDFExtractSHA512(salt, ikm []byte) [sha512.Size]byte {
	var zero [SHA512DigestSize]byte
	if len(salt) == 0 {
		salt = zero[:]
	}
	return HMACSHA512(salt, ikm)
}

// HKDFExpandSHA512 is HKDFExpand with SHA-512 (fscrypt_hkdf_expand, which
// passes info = "fscrypt\0" || context || info), with the project's
// HMAC-SHA512; the prepared key is wiped before returning. Errors: as
// HKDFExpand.
func HKDFExpandSHA512(prk, info, okm []byte) error {
	if len(okm) > 255*SHA512DigestSize || len(prk) < SHA512DigestSize {
		return errno.EINVAL
	}
	var k HMACSHA512Key
	HMACSHA512PrepareKey(&k, prk)
	HKDFExpandPrepared(&k, info, okm)
	k.Wipe()
	return nil
}

// HKDFExpandPrepared is the loop of hkdf_expand under a prepared
// HMAC-SHA512 key (fs/crypto/hkdf.c fscrypt_hkdf_expand since Linux
// 6.16): T(i) = HMAC(PRK, T(i-1) || info || i). okm must be at most
// 255*64 bytes. It allocates nothing and zeroes its intermediate blocks.
func HKDFExpandPrepared(key *HMACSHA512Key, info, okm []byte) {
	var ctx HMACSHA512Ctx
	var t [SHA512DigestSize]byte
	ctr := [1]byte{0}
	for off := 0; off < len(okm); off += SHA512DigestSize {
		HMACSHA512Init(&ctx, key)
		if off > 0 {
			HMACSHA512Update(&ctx, t[:])
		}
		HMACSHA512Update(&ctx, info)
		ctr[0]++
		HMACSHA512Update(&ctx, ctr[:])
		HMACSHA512Final(&ctx, &t)
		copy(okm[off:], t[:])
	}
	clear(t[:])
}

// SiphashKey is siphash_key_t (include/linux/siphash.h): two 64-bit words.
// A 16-byte key in memory (fscrypt's dirhash key, ext4's s_hash_seed for
// siphash) is read as two little-endian words.
type SiphashKey struct {
	Key [2]uint64
}

// SiphashKeyFromBytes reads a 16-byte key as two little-endian words, as
// fscrypt stores its dirhash key.
func SiphashKeyFromBytes(b *[16]byte) SiphashKey {
	return SiphashKey{Key: [2]uint64{binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:])}}
}

// Siphash is siphash(data, len, key) (lib/siphash.c): SipHash-2-4.
func Siphash(data []byte, key *SiphashKey) uint64 {
	return siphash.Hash(key.Key[0], key.Key[1], data)
}

// Siphash1u64 is siphash_1u64: SipHash-2-4 of the 8-byte little-endian
// encoding of first (fscrypt_hash_inode_number hashes the inode number so).
func Siphash1u64(first uint64, key *SiphashKey) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], first)
	return siphash.Hash(key.Key[0], key.Key[1], b[:])
}

// Siphash2u64 is siphash_2u64: SipHash-2-4 of two little-endian words.
func Siphash2u64(first, second uint64, key *SiphashKey) uint64 {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:], first)
	binary.LittleEndian.PutUint64(b[8:], second)
	return siphash.Hash(key.Key[0], key.Key[1], b[:])
}
