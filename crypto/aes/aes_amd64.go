//go:build amd64 && !purego

package aes

import "golang.org/x/sys/cpu"

// hasAESNI selects the assembly in aes_amd64.s. It needs the AES-NI
// instructions (X86_FEATURE_AES, which the kernel's aesni_init requires) and
// SSSE3's PSHUFB for the key schedule; every CPU with AES-NI has SSSE3.
var hasAESNI = cpu.X86.HasAES && cpu.X86.HasSSSE3

// The XTS drivers beyond xts-aes-aesni, with the CPU features
// register_xts_algs (arch/x86/crypto/aesni-intel_glue.c) checks before
// registering each:
//
//	xts-aes-aesni-avx    AVX (x/sys/cpu reports it only when the OS saves
//	                     the ymm state)
//	xts-aes-vaes-avx2    AVX2, VAES, VPCLMULQDQ, PCLMULQDQ and the ymm state
//	xts-aes-vaes-avx512  in addition AVX512BW, AVX512VL, BMI2 and the
//	                     AVX-512 state (x/sys/cpu's HasAVX512* fields are
//	                     only set when the OS saves the opmask and zmm
//	                     state)
//
// x/sys/cpu reports VAES and VPCLMULQDQ only together with AVX-512
// (HasAVX512VAES, HasAVX512VPCLMULQDQ), so the AVX2 driver reads CPUID
// leaf 7 itself. The kernel also lowers the avx512 driver's priority on
// CPUs it marks X86_FEATURE_PREFER_YMM (zmm downclocking on some older
// Intel models); the model does not keep that model list.
var (
	hasAESNIAVX   = hasAESNI && cpu.X86.HasAVX && cpu.X86.HasPCLMULQDQ
	hasVAESAVX2   = hasAESNIAVX && cpu.X86.HasAVX2 && cpuHasVAES()
	hasVAESAVX512 = hasVAESAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW &&
		cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VAES && cpu.X86.HasAVX512VPCLMULQDQ && cpu.X86.HasBMI2
)

// cpuHasVAES reports CPUID.(EAX=7,ECX=0):ECX.VAES[bit 9] and
// .VPCLMULQDQ[bit 10].
func cpuHasVAES() bool {
	var ecx uint32
	cpuid7(&ecx)
	return ecx&(1<<9) != 0 && ecx&(1<<10) != 0
}

// cpuid7 stores ECX of CPUID leaf 7, subleaf 0, in *ecx.
//
//go:noescape
func cpuid7(ecx *uint32)

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

// The bulk functions of xts_vaes_amd64.s: the contract of xtsEncAsm and
// xtsDecAsm, with wider vectors.

// xtsEncAESNIAVX is xts-aes-aesni-avx's encryption (xmm, VEX-coded).
//
//go:noescape
func xtsEncAESNIAVX(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte)

// xtsDecAESNIAVX is xts-aes-aesni-avx's decryption.
//
//go:noescape
func xtsDecAESNIAVX(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte)

// xtsEncVAESAVX2 is xts-aes-vaes-avx2's encryption (ymm, VAES).
//
//go:noescape
func xtsEncVAESAVX2(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte)

// xtsDecVAESAVX2 is xts-aes-vaes-avx2's decryption.
//
//go:noescape
func xtsDecVAESAVX2(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte)

// xtsEncVAESAVX512 is xts-aes-vaes-avx512's encryption (zmm, VAES).
//
//go:noescape
func xtsEncVAESAVX512(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte)

// xtsDecVAESAVX512 is xts-aes-vaes-avx512's decryption.
//
//go:noescape
func xtsDecVAESAVX512(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte)
