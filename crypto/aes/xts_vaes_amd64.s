//go:build amd64 && !purego

// AES-XTS bulk functions of the x86 XTS drivers that
// arch/x86/crypto/aesni-intel_glue.c registers beside xts-aes-aesni, after
// the design of arch/x86/crypto/aes-xts-avx-x86_64.S: one body
// (xts_vaes_amd64.h) instantiated for three vector lengths,
//
//	xts-aes-aesni-avx     xmm, 1 block per vector, VEX-coded AES-NI
//	xts-aes-vaes-avx2     ymm, 2 blocks per vector, VAES + VPCLMULQDQ
//	xts-aes-vaes-avx512   zmm, 4 blocks per vector, VAES + VPCLMULQDQ
//	                      (EVEX), all round keys held in Z16-Z30
//
// each processing four vectors per iteration with the tweaks computed by
// vector multiplication by x^k in GF(2^128). Every function takes
// (nr int, xk *uint32, dst, src *byte, nblocks int, t *[16]byte) like
// xtsEncAsm in aes_amd64.s.

#include "textflag.h"

// xtsPoly is the reduction constant of x^128 + x^7 + x^2 + x + 1 in the
// low qword of a 128-bit lane (gf128mul_x_ble's 0x87), broadcast to every
// lane by BCAST.
DATA xtsPoly<>+0x00(SB)/8, $0x0000000000000087
DATA xtsPoly<>+0x08(SB)/8, $0x0000000000000000
GLOBL xtsPoly<>(SB), RODATA|NOPTR, $16

// xtsMul16, xtsMul8 and xtsMul4 are MULXK_CLMUL's constants for the zmm,
// ymm and xmm loops: x^(4*NB) in the low qword, 0x87 in the high one.
DATA xtsMul16<>+0x00(SB)/8, $0x0000000000010000
DATA xtsMul16<>+0x08(SB)/8, $0x0000000000000087
GLOBL xtsMul16<>(SB), RODATA|NOPTR, $16
DATA xtsMul8<>+0x00(SB)/8, $0x0000000000000100
DATA xtsMul8<>+0x08(SB)/8, $0x0000000000000087
GLOBL xtsMul8<>(SB), RODATA|NOPTR, $16
DATA xtsMul4<>+0x00(SB)/8, $0x0000000000000010
DATA xtsMul4<>+0x08(SB)/8, $0x0000000000000087
GLOBL xtsMul4<>(SB), RODATA|NOPTR, $16

// xtsDblMask is aes_amd64.s's xtsMask for XDOUBLE: 0x87 into dword 0 when
// bit 127 is shifted out, the carry into dwords 1-3.
DATA xtsDblMask<>+0x00(SB)/4, $0x00000087
DATA xtsDblMask<>+0x04(SB)/4, $0x00000001
DATA xtsDblMask<>+0x08(SB)/4, $0x00000001
DATA xtsDblMask<>+0x0c(SB)/4, $0x00000001
GLOBL xtsDblMask<>(SB), RODATA|NOPTR, $16

// XDOUBLE(T): T = T·x for one tweak in an xmm register, VEX-coded (X9
// scratch); the same computation as GF128_DOUBLE in
// aes_amd64.s, whose legacy-SSE encoding would mix badly with dirty upper
// vector state.
#define XDOUBLE(T) \
	VPSHUFD $0x93, T, X9; \
	VPSRAD  $31, X9, X9;  \
	VPAND   xtsDblMask<>(SB), X9, X9; \
	VPSLLD  $1, T, T;     \
	VPXOR   X9, T, T

// MULXK(K, W): every 128-bit lane of W times x^K (1 <= K <= 16): the lane
// shifted left by K bits across its two qwords, and the K bits shifted out
// of the top multiplied by 0x87 (VPCLMULQDQ of the high qword of S0 with
// the low qword of POLY) folded into the bottom.
#define MULXK(K, W) \
	VPSRLQ     $(64-K), W, S0;  \
	VPSLLQ     $K, W, W;        \
	VPCLMULQDQ $0x01, POLY, S0, S1; \
	VPSLLDQ    $8, S0, S0;      \
	XOR3(S0, S1, W)

// MULXK_CLMUL(W): every 128-bit lane of W times x^K, K = 4*NB, with
// carry-less multiplications, for the main loop: on Intel cores the vector
// bit shifts MULXK uses compete with VAESENC for its ports, VPCLMULQDQ and
// the byte shift do not (measured on Sapphire Rapids: the zmm loop 12-15%
// faster than with MULXK). MULC holds x^K in the low and 0x87 in the high
// qword of each lane: W·x^K = lo·x^K + ((hi·x^K) mod x^64)·x^64 +
// (hi·x^K div x^64)·0x87.
#define MULXK_CLMUL(W) \
	VPCLMULQDQ $0x00, MULC, W, S0; \
	VPCLMULQDQ $0x01, MULC, W, S1; \
	VPSLLDQ    $8, S1, W;          \
	VPCLMULQDQ $0x11, MULC, S1, S1; \
	XOR3(S0, S1, W)

#define AESR4(K) \
	AESR K, D0, D0; \
	AESR K, D1, D1; \
	AESR K, D2, D2; \
	AESR K, D3, D3

// ---------------------------------------------------------------------
// zmm: xts-aes-vaes-avx512.

#define D0 Z0
#define D1 Z1
#define D2 Z2
#define D3 Z3
#define W0 Z4
#define W1 Z5
#define W2 Z6
#define W3 Z7
#define S0 Z8
#define S1 Z9
#define POLY Z10
#define K0 Z11
#define KT Z12
#define KLAST Z30
#define VMOVU VMOVDQU64
#define VMOVA VMOVDQA64
#define VXOR VPXORQ
#define BCAST VBROADCASTI32X4
#define XOR3(a, b, d) VPTERNLOGQ $0x96, a, b, d
#define NB 4
#define VBYTES 64
#define NB4
#define CACHEKEYS
#define MULC Z15
#define MULCONST xtsMul16<>(SB)
#define ROUND4(off, zk) AESR4(zk)
#define ROUND1(off, zk) AESR zk, D0, D0

#define AESR VAESENC
#define AESRL VAESENCLAST
// func xtsEncVAESAVX512(nr int, xk *uint32, dst, src *byte, nblocks int, t *[16]byte)
TEXT ·xtsEncVAESAVX512(SB), NOSPLIT, $0-48
#include "xts_vaes_amd64.h"
#undef AESR
#undef AESRL

#define AESR VAESDEC
#define AESRL VAESDECLAST
// func xtsDecVAESAVX512(nr int, xk *uint32, dst, src *byte, nblocks int, t *[16]byte)
TEXT ·xtsDecVAESAVX512(SB), NOSPLIT, $0-48
#include "xts_vaes_amd64.h"
#undef AESR
#undef AESRL

#undef D0
#undef D1
#undef D2
#undef D3
#undef W0
#undef W1
#undef W2
#undef W3
#undef S0
#undef S1
#undef POLY
#undef K0
#undef KT
#undef KLAST
#undef VMOVU
#undef VMOVA
#undef VXOR
#undef BCAST
#undef XOR3
#undef NB
#undef VBYTES
#undef NB4
#undef CACHEKEYS
#undef MULC
#undef MULCONST
#undef ROUND4
#undef ROUND1

// ---------------------------------------------------------------------
// ymm: xts-aes-vaes-avx2. Sixteen registers: the middle round keys are
// broadcast from memory into KT each round.

#define D0 Y0
#define D1 Y1
#define D2 Y2
#define D3 Y3
#define W0 Y4
#define W1 Y5
#define W2 Y6
#define W3 Y7
#define S0 Y8
#define S1 Y9
#define POLY Y10
#define K0 Y11
#define KT Y12
#define KLAST Y13
#define VMOVU VMOVDQU
#define VMOVA VMOVDQA
#define VXOR VPXOR
#define BCAST VBROADCASTI128
#define XOR3(a, b, d) VPXOR a, d, d; VPXOR b, d, d
#define NB 2
#define VBYTES 32
#define NB2
#define MULC Y14
#define MULCONST xtsMul8<>(SB)
#define ROUND4(off, zk) BCAST off(R12), KT; AESR4(KT)
#define ROUND1(off, zk) BCAST off(R12), KT; AESR KT, D0, D0

#define AESR VAESENC
#define AESRL VAESENCLAST
// func xtsEncVAESAVX2(nr int, xk *uint32, dst, src *byte, nblocks int, t *[16]byte)
TEXT ·xtsEncVAESAVX2(SB), NOSPLIT, $0-48
#include "xts_vaes_amd64.h"
#undef AESR
#undef AESRL

#define AESR VAESDEC
#define AESRL VAESDECLAST
// func xtsDecVAESAVX2(nr int, xk *uint32, dst, src *byte, nblocks int, t *[16]byte)
TEXT ·xtsDecVAESAVX2(SB), NOSPLIT, $0-48
#include "xts_vaes_amd64.h"
#undef AESR
#undef AESRL

#undef D0
#undef D1
#undef D2
#undef D3
#undef W0
#undef W1
#undef W2
#undef W3
#undef S0
#undef S1
#undef POLY
#undef K0
#undef KT
#undef KLAST
#undef VMOVU
#undef VMOVA
#undef VXOR
#undef BCAST
#undef XOR3
#undef NB
#undef VBYTES
#undef NB2
#undef MULC
#undef MULCONST
#undef ROUND4
#undef ROUND1

// ---------------------------------------------------------------------
// xmm: xts-aes-aesni-avx, one block per vector with VEX-coded AES-NI and
// PCLMULQDQ.

#define D0 X0
#define D1 X1
#define D2 X2
#define D3 X3
#define W0 X4
#define W1 X5
#define W2 X6
#define W3 X7
#define S0 X8
#define S1 X9
#define POLY X10
#define K0 X11
#define KT X12
#define KLAST X13
#define VMOVU VMOVDQU
#define VMOVA VMOVDQA
#define VXOR VPXOR
#define BCAST VMOVDQU
#define XOR3(a, b, d) VPXOR a, d, d; VPXOR b, d, d
#define NB 1
#define VBYTES 16
#define MULC X14
#define MULCONST xtsMul4<>(SB)
#define ROUND4(off, zk) BCAST off(R12), KT; AESR4(KT)
#define ROUND1(off, zk) BCAST off(R12), KT; AESR KT, D0, D0

#define AESR VAESENC
#define AESRL VAESENCLAST
// func xtsEncAESNIAVX(nr int, xk *uint32, dst, src *byte, nblocks int, t *[16]byte)
TEXT ·xtsEncAESNIAVX(SB), NOSPLIT, $0-48
#include "xts_vaes_amd64.h"
#undef AESR
#undef AESRL

#define AESR VAESDEC
#define AESRL VAESDECLAST
// func xtsDecAESNIAVX(nr int, xk *uint32, dst, src *byte, nblocks int, t *[16]byte)
TEXT ·xtsDecAESNIAVX(SB), NOSPLIT, $0-48
#include "xts_vaes_amd64.h"

// func cpuid7(ecx *uint32)
// CPUID leaf 7, subleaf 0: ECX bit 9 is VAES, bit 10 VPCLMULQDQ, which
// golang.org/x/sys/cpu only reports together with AVX-512.
TEXT ·cpuid7(SB), NOSPLIT, $0-8
	MOVL $7, AX
	XORL CX, CX
	CPUID
	MOVQ ecx+0(FP), AX
	MOVL CX, (AX)
	RET
