//go:build amd64 && !purego

package aes

import "golang.org/x/sys/cpu"

// hasAESNI selects the assembly in aes_amd64.s. It needs the AES-NI
// instructions (X86_FEATURE_AES, which the kernel's aesni_init requires) and
// SSSE3's PSHUFB for the key schedule; every CPU with AES-NI has SSSE3.
var hasAESNI = cpu.X86.HasAES && cpu.X86.HasSSSE3

// The assembly routines take the round count nr (10, 12 or 14), a pointer
// to the first round-key word (KeyEnc or KeyDec) and raw block pointers;
// the Go callers check lengths and aliasing. nblocks counts 16-byte blocks
// and is at least 1.

// expandKeyAsm fills enc with the 4*(nr+1) encryption round-key words of
// the key at key (4*(nr-6) bytes) and dec with the Equivalent Inverse Cipher
// schedule, using AESENCLAST for SubWord and AESIMC for InvMixColumns.
//
//go:noescape
func expandKeyAsm(nr int, key *byte, enc *uint32, dec *uint32)

// encryptBlockAsm encrypts the block at src into dst.
//
//go:noescape
func encryptBlockAsm(nr int, xk *uint32, dst, src *byte)

// decryptBlockAsm decrypts the block at src into dst with the decryption
// schedule xk.
//
//go:noescape
func decryptBlockAsm(nr int, xk *uint32, dst, src *byte)

// ecbEncAsm encrypts nblocks blocks, eight at a time.
//
//go:noescape
func ecbEncAsm(nr int, xk *uint32, dst, src *byte, nblocks int)

// ecbDecAsm decrypts nblocks blocks, eight at a time.
//
//go:noescape
func ecbDecAsm(nr int, xk *uint32, dst, src *byte, nblocks int)

// cbcEncAsm CBC-encrypts nblocks blocks from the chaining value *iv and
// stores the last ciphertext block in *iv.
//
//go:noescape
func cbcEncAsm(nr int, xk *uint32, dst, src *byte, nblocks int, iv *[BlockSize]byte)

// cbcDecAsm CBC-decrypts nblocks blocks, eight at a time, from the chaining
// value *iv and stores the last ciphertext block in *iv. dst may equal src.
//
//go:noescape
func cbcDecAsm(nr int, xk *uint32, dst, src *byte, nblocks int, iv *[BlockSize]byte)

// xtsEncAsm XTS-encrypts nblocks whole blocks, eight at a time, starting
// with the (already encrypted) tweak *t, and leaves the tweak of the next
// block in *t.
//
//go:noescape
func xtsEncAsm(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte)

// xtsDecAsm is xtsEncAsm's inverse, with the decryption schedule xk.
//
//go:noescape
func xtsDecAsm(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte)
