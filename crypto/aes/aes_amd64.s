//go:build amd64 && !purego

// AES-NI implementation of the AES library and of the ECB, CBC and XTS
// drivers, in the spirit of the kernel's arch/x86/crypto/aesni-intel_asm.S
// and aes-xts-avx-x86_64.S: the parallel modes keep eight independent blocks
// in flight (X0-X7) so that the pipelined AESENC/AESDEC units stay busy,
// CBC encryption runs its inherently serial chain block by block, and XTS
// computes the tweak sequence in registers with shifts, a dword shuffle and
// an AND mask (no PCLMULQDQ).
//
// Round keys are the words of struct crypto_aes_ctx (KeyEnc or KeyDec); in
// memory each 16-byte round key is exactly the byte string AESENC/AESDEC
// expect. All memory operands are loaded with unaligned moves: legacy-SSE
// AES and PXOR instructions would fault on unaligned memory operands.
//
// Register use in the block loops: CX = nr-1 (middle rounds), AX = round
// keys, R12 = last round key, SI = src, DI = dst, R9 = blocks left, R8/R10 =
// round loop of the one- and four-block paths (the eight-block paths are
// unrolled), X0-X7 = blocks, X8 = chaining value or tweak, X9-X11 = scratch
// and round key.

#include "textflag.h"

// XTS tweak doubling mask: dword 0 receives the reduction 0x87 when bit 127
// is shifted out, dwords 1-3 the carry from the dword below.
DATA xtsMask<>+0x00(SB)/4, $0x00000087
DATA xtsMask<>+0x04(SB)/4, $0x00000001
DATA xtsMask<>+0x08(SB)/4, $0x00000001
DATA xtsMask<>+0x0c(SB)/4, $0x00000001
GLOBL xtsMask<>(SB), RODATA|NOPTR, $16

// GF128_DOUBLE(T, MASK, TMP): T = T·x in GF(2^128), IEEE 1619 byte order.
// TMP gets the dwords of T rotated up by one (dword i+1 <- dword i, dword 0
// <- dword 3); an arithmetic shift turns each top bit into an all-ones
// dword, the mask keeps the carry (or 0x87 for the bit leaving dword 3), and
// the carries are XORed into T shifted left by one bit per dword.
#define GF128_DOUBLE(T, MASK, TMP) \
	PSHUFD $0x93, T, TMP; \
	PSRAL  $31, TMP;      \
	PAND   MASK, TMP;     \
	PSLLL  $1, T;         \
	PXOR   TMP, T

// PREFIX_XOR(X, TMP): dword i of X becomes the XOR of dwords 0..i, the
// running XOR of the key-schedule recurrence w[i] = w[i-Nk] ^ w[i-1].
#define PREFIX_XOR(X, TMP) \
	MOVO  X, TMP;   \
	PSLLO $4, TMP;  \
	PXOR  TMP, X;   \
	MOVO  X, TMP;   \
	PSLLO $8, TMP;  \
	PXOR  TMP, X

#define PXOR8(K) \
	PXOR K, X0; PXOR K, X1; PXOR K, X2; PXOR K, X3; \
	PXOR K, X4; PXOR K, X5; PXOR K, X6; PXOR K, X7

#define AESENC8(K) \
	AESENC K, X0; AESENC K, X1; AESENC K, X2; AESENC K, X3; \
	AESENC K, X4; AESENC K, X5; AESENC K, X6; AESENC K, X7

#define AESENCLAST8(K) \
	AESENCLAST K, X0; AESENCLAST K, X1; AESENCLAST K, X2; AESENCLAST K, X3; \
	AESENCLAST K, X4; AESENCLAST K, X5; AESENCLAST K, X6; AESENCLAST K, X7

#define AESDEC8(K) \
	AESDEC K, X0; AESDEC K, X1; AESDEC K, X2; AESDEC K, X3; \
	AESDEC K, X4; AESDEC K, X5; AESDEC K, X6; AESDEC K, X7

#define AESDECLAST8(K) \
	AESDECLAST K, X0; AESDECLAST K, X1; AESDECLAST K, X2; AESDECLAST K, X3; \
	AESDECLAST K, X4; AESDECLAST K, X5; AESDECLAST K, X6; AESDECLAST K, X7

// Unrolled middle rounds of the eight-block loops. R12 points at the last
// round key (xk + 16*nr), so round r of an nr-round schedule is at
// 16*(r-nr)(R12): the 14-round schedule enters at -208, the 12-round one at
// -176 and the 10-round one at -144, and all share the tail.
#define ENC8_ROUND(OFF) MOVOU OFF(R12), X11; AESENC8(X11)
#define DEC8_ROUND(OFF) MOVOU OFF(R12), X11; AESDEC8(X11)

#define LOAD8 \
	MOVOU 0(SI), X0; MOVOU 16(SI), X1; MOVOU 32(SI), X2; MOVOU 48(SI), X3; \
	MOVOU 64(SI), X4; MOVOU 80(SI), X5; MOVOU 96(SI), X6; MOVOU 112(SI), X7

#define STORE8 \
	MOVOU X0, 0(DI); MOVOU X1, 16(DI); MOVOU X2, 32(DI); MOVOU X3, 48(DI); \
	MOVOU X4, 64(DI); MOVOU X5, 80(DI); MOVOU X6, 96(DI); MOVOU X7, 112(DI)

// Key schedule. SubWord is computed with AESENCLAST rather than
// AESKEYGENASSIST, whose latency is several times longer on recent Intel
// cores: when all four columns of the state hold the same word, ShiftRows
// only moves equal bytes around, so AESENCLAST(broadcast(w), broadcast(k))
// is broadcast(SubWord(w) ^ k). PSHUFB (SSSE3) broadcasts the word, rotated
// for RotWord where the recurrence needs it; the round key operand supplies
// Rcon.
//
// X0 holds the last four schedule words (X2 the two or four words after them
// for 192 and 256-bit keys), BX points at the next free round-key slot, X5
// and X6 are the broadcast masks, X7 is zero.

DATA rotBcast3<>+0x00(SB)/4, $0x0c0f0e0d // bytes 13,14,15,12: RotWord(dword 3)
DATA rotBcast3<>+0x04(SB)/4, $0x0c0f0e0d
DATA rotBcast3<>+0x08(SB)/4, $0x0c0f0e0d
DATA rotBcast3<>+0x0c(SB)/4, $0x0c0f0e0d
GLOBL rotBcast3<>(SB), RODATA|NOPTR, $16

DATA rotBcast1<>+0x00(SB)/4, $0x04070605 // bytes 5,6,7,4: RotWord(dword 1)
DATA rotBcast1<>+0x04(SB)/4, $0x04070605
DATA rotBcast1<>+0x08(SB)/4, $0x04070605
DATA rotBcast1<>+0x0c(SB)/4, $0x04070605
GLOBL rotBcast1<>(SB), RODATA|NOPTR, $16

// Rcon values 01 02 04 08 10 20 40 80 1b 36, each in every dword.
#define RCON(i, v) \
	DATA rcon<>+(16*i+0x00)(SB)/4, $v; \
	DATA rcon<>+(16*i+0x04)(SB)/4, $v; \
	DATA rcon<>+(16*i+0x08)(SB)/4, $v; \
	DATA rcon<>+(16*i+0x0c)(SB)/4, $v

RCON(0, 0x01)
RCON(1, 0x02)
RCON(2, 0x04)
RCON(3, 0x08)
RCON(4, 0x10)
RCON(5, 0x20)
RCON(6, 0x40)
RCON(7, 0x80)
RCON(8, 0x1b)
RCON(9, 0x36)
GLOBL rcon<>(SB), RODATA|NOPTR, $160

// AES-128 step i: w[4i+4..4i+7] = running XOR of w[4i..4i+3], each XORed
// with SubWord(RotWord(w[4i+3])) ^ Rcon[i].
#define KEY128(I) \
	MOVO       X0, X1;                 \
	PSHUFB     X5, X1;                 \
	MOVOU      rcon<>+(16*I)(SB), X4;  \
	AESENCLAST X4, X1;                 \
	PREFIX_XOR(X0, X3);                \
	PXOR       X1, X0;                 \
	MOVOU      X0, (BX);               \
	ADDQ       $16, BX

// AES-192 step i: six words. X2 holds w[6i+4], w[6i+5] in dwords 0-1
// (dwords 2-3 are don't-care). The first four new words continue the
// running XOR of X0 with SubWord(RotWord(w[6i+5])) ^ Rcon[i], the last two
// that of X2 seeded with the new fourth word.
#define KEY192(I) \
	MOVO       X2, X1;                 \
	PSHUFB     X6, X1;                 \
	MOVOU      rcon<>+(16*I)(SB), X4;  \
	AESENCLAST X4, X1;                 \
	PREFIX_XOR(X0, X3);                \
	PXOR       X1, X0;                 \
	PSHUFD     $0xff, X0, X1;          \
	MOVO       X2, X3;                 \
	PSLLO      $4, X3;                 \
	PXOR       X3, X2;                 \
	PXOR       X1, X2;                 \
	MOVOU      X0, (BX);               \
	MOVQ       X2, 16(BX);             \
	ADDQ       $24, BX

// The last AES-192 step only needs the first four words (w[48..51]).
#define KEY192LAST(I) \
	MOVO       X2, X1;                 \
	PSHUFB     X6, X1;                 \
	MOVOU      rcon<>+(16*I)(SB), X4;  \
	AESENCLAST X4, X1;                 \
	PREFIX_XOR(X0, X3);                \
	PXOR       X1, X0;                 \
	MOVOU      X0, (BX)

// AES-256 even step i: w[8i+8..8i+11] from X0 = w[8i..8i+3] and
// SubWord(RotWord(w[8i+7])) ^ Rcon[i], w[8i+7] being dword 3 of X2.
#define KEY256A(I) \
	MOVO       X2, X1;                 \
	PSHUFB     X5, X1;                 \
	MOVOU      rcon<>+(16*I)(SB), X4;  \
	AESENCLAST X4, X1;                 \
	PREFIX_XOR(X0, X3);                \
	PXOR       X1, X0;                 \
	MOVOU      X0, (BX);               \
	ADDQ       $16, BX

// AES-256 odd step: w[8i+12..8i+15] from X2 and SubWord(w[8i+11]) (dword 3
// of X0, no rotation, no Rcon).
#define KEY256B \
	PSHUFD     $0xff, X0, X1;          \
	AESENCLAST X7, X1;                 \
	PREFIX_XOR(X2, X3);                \
	PXOR       X1, X2;                 \
	MOVOU      X2, (BX);               \
	ADDQ       $16, BX

// func expandKeyAsm(nr int, key *byte, enc *uint32, dec *uint32)
TEXT ·expandKeyAsm(SB), NOSPLIT, $0-32
	MOVQ  nr+0(FP), CX
	MOVQ  key+8(FP), AX
	MOVQ  enc+16(FP), BX
	MOVQ  dec+24(FP), DX
	MOVOU rotBcast3<>(SB), X5
	MOVOU rotBcast1<>(SB), X6
	PXOR  X7, X7
	MOVOU (AX), X0
	MOVOU X0, (BX)
	CMPQ  CX, $12
	JEQ   exp192
	JHI   exp256

	ADDQ $16, BX
	KEY128(0)
	KEY128(1)
	KEY128(2)
	KEY128(3)
	KEY128(4)
	KEY128(5)
	KEY128(6)
	KEY128(7)
	KEY128(8)
	KEY128(9)
	JMP  invert

exp192:
	MOVQ 16(AX), X2
	MOVQ X2, 16(BX)
	ADDQ $24, BX
	KEY192(0)
	KEY192(1)
	KEY192(2)
	KEY192(3)
	KEY192(4)
	KEY192(5)
	KEY192(6)
	KEY192LAST(7)
	JMP  invert

exp256:
	MOVOU 16(AX), X2
	MOVOU X2, 16(BX)
	ADDQ  $32, BX
	KEY256A(0)
	KEY256B
	KEY256A(1)
	KEY256B
	KEY256A(2)
	KEY256B
	KEY256A(3)
	KEY256B
	KEY256A(4)
	KEY256B
	KEY256A(5)
	KEY256B
	KEY256A(6)

invert:
	// Decryption schedule: dec[0] = enc[nr], dec[i] = InvMixColumns(enc[nr-i])
	// for 0 < i < nr, dec[nr] = enc[0] (16-byte round keys).
	MOVQ  enc+16(FP), BX
	MOVQ  CX, R8
	SHLQ  $4, R8
	MOVOU (BX)(R8*1), X0
	MOVOU X0, (DX)
	ADDQ  $16, DX
	SUBQ  $16, R8

invert_loop:
	MOVOU  (BX)(R8*1), X0
	AESIMC X0, X1
	MOVOU  X1, (DX)
	ADDQ   $16, DX
	SUBQ   $16, R8
	JNE    invert_loop
	MOVOU  (BX), X0
	MOVOU  X0, (DX)
	RET

// func encryptBlockAsm(nr int, xk *uint32, dst, src *byte)
TEXT ·encryptBlockAsm(SB), NOSPLIT, $0-32
	MOVQ  nr+0(FP), CX
	MOVQ  xk+8(FP), AX
	MOVQ  dst+16(FP), DI
	MOVQ  src+24(FP), SI
	MOVOU (SI), X0
	MOVOU (AX), X1
	PXOR  X1, X0
	ADDQ  $16, AX
	DECQ  CX

enc1_round:
	MOVOU  (AX), X1
	AESENC X1, X0
	ADDQ   $16, AX
	DECQ   CX
	JNE    enc1_round
	MOVOU      (AX), X1
	AESENCLAST X1, X0
	MOVOU      X0, (DI)
	RET

// func decryptBlockAsm(nr int, xk *uint32, dst, src *byte)
TEXT ·decryptBlockAsm(SB), NOSPLIT, $0-32
	MOVQ  nr+0(FP), CX
	MOVQ  xk+8(FP), AX
	MOVQ  dst+16(FP), DI
	MOVQ  src+24(FP), SI
	MOVOU (SI), X0
	MOVOU (AX), X1
	PXOR  X1, X0
	ADDQ  $16, AX
	DECQ  CX

dec1_round:
	MOVOU  (AX), X1
	AESDEC X1, X0
	ADDQ   $16, AX
	DECQ   CX
	JNE    dec1_round
	MOVOU      (AX), X1
	AESDECLAST X1, X0
	MOVOU      X0, (DI)
	RET

// func ecbEncAsm(nr int, xk *uint32, dst, src *byte, nblocks int)
TEXT ·ecbEncAsm(SB), NOSPLIT, $0-40
	MOVQ nr+0(FP), CX
	MOVQ xk+8(FP), AX
	MOVQ dst+16(FP), DI
	MOVQ src+24(FP), SI
	MOVQ nblocks+32(FP), R9
	MOVQ  CX, R12
	SHLQ  $4, R12
	ADDQ  AX, R12
	DECQ CX
	CMPQ R9, $8
	JCS  ecbenc_4

ecbenc_8:
	MOVOU (AX), X8
	LOAD8
	PXOR8(X8)
	CMPQ  CX, $11
	JCS   ecbenc_8_r10
	JEQ   ecbenc_8_r12
	ENC8_ROUND(-208)
	ENC8_ROUND(-192)

ecbenc_8_r12:
	ENC8_ROUND(-176)
	ENC8_ROUND(-160)

ecbenc_8_r10:
	ENC8_ROUND(-144)
	ENC8_ROUND(-128)
	ENC8_ROUND(-112)
	ENC8_ROUND(-96)
	ENC8_ROUND(-80)
	ENC8_ROUND(-64)
	ENC8_ROUND(-48)
	ENC8_ROUND(-32)
	ENC8_ROUND(-16)
	MOVOU (R12), X11
	AESENCLAST8(X11)
	STORE8
	ADDQ  $128, SI
	ADDQ  $128, DI
	SUBQ  $8, R9
	CMPQ  R9, $8
	JCC   ecbenc_8

ecbenc_4:
	CMPQ  R9, $4
	JCS   ecbenc_1
	MOVOU (AX), X8
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	PXOR  X8, X0
	PXOR  X8, X1
	PXOR  X8, X2
	PXOR  X8, X3
	LEAQ  16(AX), R8
	MOVQ  CX, R10

ecbenc_4_round:
	MOVOU  (R8), X8
	AESENC X8, X0
	AESENC X8, X1
	AESENC X8, X2
	AESENC X8, X3
	ADDQ   $16, R8
	DECQ   R10
	JNE    ecbenc_4_round
	MOVOU      (R8), X8
	AESENCLAST X8, X0
	AESENCLAST X8, X1
	AESENCLAST X8, X2
	AESENCLAST X8, X3
	MOVOU      X0, 0(DI)
	MOVOU      X1, 16(DI)
	MOVOU      X2, 32(DI)
	MOVOU      X3, 48(DI)
	ADDQ       $64, SI
	ADDQ       $64, DI
	SUBQ       $4, R9

ecbenc_1:
	TESTQ R9, R9
	JEQ   ecbenc_done

ecbenc_1_loop:
	MOVOU (SI), X0
	MOVOU (AX), X8
	PXOR  X8, X0
	LEAQ  16(AX), R8
	MOVQ  CX, R10

ecbenc_1_round:
	MOVOU  (R8), X8
	AESENC X8, X0
	ADDQ   $16, R8
	DECQ   R10
	JNE    ecbenc_1_round
	MOVOU      (R8), X8
	AESENCLAST X8, X0
	MOVOU      X0, (DI)
	ADDQ       $16, SI
	ADDQ       $16, DI
	DECQ       R9
	JNE        ecbenc_1_loop

ecbenc_done:
	RET

// func ecbDecAsm(nr int, xk *uint32, dst, src *byte, nblocks int)
TEXT ·ecbDecAsm(SB), NOSPLIT, $0-40
	MOVQ nr+0(FP), CX
	MOVQ xk+8(FP), AX
	MOVQ dst+16(FP), DI
	MOVQ src+24(FP), SI
	MOVQ nblocks+32(FP), R9
	MOVQ  CX, R12
	SHLQ  $4, R12
	ADDQ  AX, R12
	DECQ CX
	CMPQ R9, $8
	JCS  ecbdec_4

ecbdec_8:
	MOVOU (AX), X8
	LOAD8
	PXOR8(X8)
	CMPQ  CX, $11
	JCS   ecbdec_8_r10
	JEQ   ecbdec_8_r12
	DEC8_ROUND(-208)
	DEC8_ROUND(-192)

ecbdec_8_r12:
	DEC8_ROUND(-176)
	DEC8_ROUND(-160)

ecbdec_8_r10:
	DEC8_ROUND(-144)
	DEC8_ROUND(-128)
	DEC8_ROUND(-112)
	DEC8_ROUND(-96)
	DEC8_ROUND(-80)
	DEC8_ROUND(-64)
	DEC8_ROUND(-48)
	DEC8_ROUND(-32)
	DEC8_ROUND(-16)
	MOVOU (R12), X11
	AESDECLAST8(X11)
	STORE8
	ADDQ  $128, SI
	ADDQ  $128, DI
	SUBQ  $8, R9
	CMPQ  R9, $8
	JCC   ecbdec_8

ecbdec_4:
	CMPQ  R9, $4
	JCS   ecbdec_1
	MOVOU (AX), X8
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	PXOR  X8, X0
	PXOR  X8, X1
	PXOR  X8, X2
	PXOR  X8, X3
	LEAQ  16(AX), R8
	MOVQ  CX, R10

ecbdec_4_round:
	MOVOU  (R8), X8
	AESDEC X8, X0
	AESDEC X8, X1
	AESDEC X8, X2
	AESDEC X8, X3
	ADDQ   $16, R8
	DECQ   R10
	JNE    ecbdec_4_round
	MOVOU      (R8), X8
	AESDECLAST X8, X0
	AESDECLAST X8, X1
	AESDECLAST X8, X2
	AESDECLAST X8, X3
	MOVOU      X0, 0(DI)
	MOVOU      X1, 16(DI)
	MOVOU      X2, 32(DI)
	MOVOU      X3, 48(DI)
	ADDQ       $64, SI
	ADDQ       $64, DI
	SUBQ       $4, R9

ecbdec_1:
	TESTQ R9, R9
	JEQ   ecbdec_done

ecbdec_1_loop:
	MOVOU (SI), X0
	MOVOU (AX), X8
	PXOR  X8, X0
	LEAQ  16(AX), R8
	MOVQ  CX, R10

ecbdec_1_round:
	MOVOU  (R8), X8
	AESDEC X8, X0
	ADDQ   $16, R8
	DECQ   R10
	JNE    ecbdec_1_round
	MOVOU      (R8), X8
	AESDECLAST X8, X0
	MOVOU      X0, (DI)
	ADDQ       $16, SI
	ADDQ       $16, DI
	DECQ       R9
	JNE        ecbdec_1_loop

ecbdec_done:
	RET

// func cbcEncAsm(nr int, xk *uint32, dst, src *byte, nblocks int, iv *[16]byte)
TEXT ·cbcEncAsm(SB), NOSPLIT, $0-48
	MOVQ  nr+0(FP), CX
	MOVQ  xk+8(FP), AX
	MOVQ  dst+16(FP), DI
	MOVQ  src+24(FP), SI
	MOVQ  nblocks+32(FP), R9
	MOVQ  iv+40(FP), R11
	MOVOU (R11), X0
	MOVOU (AX), X9
	DECQ  CX

cbcenc_loop:
	// The whitening XOR of the plaintext is off the chain's critical path.
	MOVOU (SI), X1
	PXOR  X9, X1
	PXOR  X1, X0
	LEAQ  16(AX), R8
	MOVQ  CX, R10

cbcenc_round:
	MOVOU  (R8), X8
	AESENC X8, X0
	ADDQ   $16, R8
	DECQ   R10
	JNE    cbcenc_round
	MOVOU      (R8), X8
	AESENCLAST X8, X0
	MOVOU      X0, (DI)
	ADDQ       $16, SI
	ADDQ       $16, DI
	DECQ       R9
	JNE        cbcenc_loop
	MOVOU      X0, (R11)
	RET

// func cbcDecAsm(nr int, xk *uint32, dst, src *byte, nblocks int, iv *[16]byte)
TEXT ·cbcDecAsm(SB), NOSPLIT, $0-48
	MOVQ  nr+0(FP), CX
	MOVQ  xk+8(FP), AX
	MOVQ  dst+16(FP), DI
	MOVQ  src+24(FP), SI
	MOVQ  nblocks+32(FP), R9
	MOVQ  iv+40(FP), R11
	MOVOU (R11), X8
	MOVQ  CX, R12
	SHLQ  $4, R12
	ADDQ  AX, R12
	DECQ  CX
	CMPQ  R9, $8
	JCS   cbcdec_1

cbcdec_8:
	MOVOU (AX), X11
	LOAD8
	PXOR8(X11)
	CMPQ  CX, $11
	JCS   cbcdec_8_r10
	JEQ   cbcdec_8_r12
	DEC8_ROUND(-208)
	DEC8_ROUND(-192)

cbcdec_8_r12:
	DEC8_ROUND(-176)
	DEC8_ROUND(-160)

cbcdec_8_r10:
	DEC8_ROUND(-144)
	DEC8_ROUND(-128)
	DEC8_ROUND(-112)
	DEC8_ROUND(-96)
	DEC8_ROUND(-80)
	DEC8_ROUND(-64)
	DEC8_ROUND(-48)
	DEC8_ROUND(-32)
	DEC8_ROUND(-16)
	MOVOU (R12), X11
	AESDECLAST8(X11)

	// XOR each block with the ciphertext block before it, from the last
	// block down, so that an in-place store of block i only overwrites
	// ciphertext already consumed. The next chaining value is saved first.
	MOVOU 112(SI), X9
	MOVOU 96(SI), X10
	PXOR  X10, X7
	MOVOU X7, 112(DI)
	MOVOU 80(SI), X10
	PXOR  X10, X6
	MOVOU X6, 96(DI)
	MOVOU 64(SI), X10
	PXOR  X10, X5
	MOVOU X5, 80(DI)
	MOVOU 48(SI), X10
	PXOR  X10, X4
	MOVOU X4, 64(DI)
	MOVOU 32(SI), X10
	PXOR  X10, X3
	MOVOU X3, 48(DI)
	MOVOU 16(SI), X10
	PXOR  X10, X2
	MOVOU X2, 32(DI)
	MOVOU 0(SI), X10
	PXOR  X10, X1
	MOVOU X1, 16(DI)
	PXOR  X8, X0
	MOVOU X0, 0(DI)
	MOVO  X9, X8
	ADDQ  $128, SI
	ADDQ  $128, DI
	SUBQ  $8, R9
	CMPQ  R9, $8
	JCC   cbcdec_8

cbcdec_1:
	TESTQ R9, R9
	JEQ   cbcdec_done

cbcdec_1_loop:
	MOVOU (SI), X1
	MOVOU (AX), X11
	MOVO  X1, X0
	PXOR  X11, X0
	LEAQ  16(AX), R8
	MOVQ  CX, R10

cbcdec_1_round:
	MOVOU  (R8), X11
	AESDEC X11, X0
	ADDQ   $16, R8
	DECQ   R10
	JNE    cbcdec_1_round
	MOVOU      (R8), X11
	AESDECLAST X11, X0
	PXOR       X8, X0
	MOVOU      X0, (DI)
	MOVO       X1, X8
	ADDQ       $16, SI
	ADDQ       $16, DI
	DECQ       R9
	JNE        cbcdec_1_loop

cbcdec_done:
	MOVOU X8, (R11)
	RET

// XTS_IN(OFF, X): save the current tweak in the frame, load block OFF/16,
// XOR in the tweak and round key 0 (X11), advance the tweak.
#define XTS_IN(OFF, X) \
	MOVOU X8, OFF(SP);  \
	MOVOU OFF(SI), X;   \
	PXOR  X8, X;        \
	PXOR  X11, X;       \
	GF128_DOUBLE(X8, X9, X10)

// XTS_OUT(OFF, X): XOR the saved tweak back in and store the block.
#define XTS_OUT(OFF, X) \
	MOVOU OFF(SP), X10; \
	PXOR  X10, X;       \
	MOVOU X, OFF(DI)

// func xtsEncAsm(nr int, xk *uint32, dst, src *byte, nblocks int, t *[16]byte)
TEXT ·xtsEncAsm(SB), NOSPLIT, $128-48
	MOVQ  nr+0(FP), CX
	MOVQ  xk+8(FP), AX
	MOVQ  dst+16(FP), DI
	MOVQ  src+24(FP), SI
	MOVQ  nblocks+32(FP), R9
	MOVQ  t+40(FP), R11
	MOVOU (R11), X8
	MOVOU xtsMask<>(SB), X9
	MOVQ  CX, R12
	SHLQ  $4, R12
	ADDQ  AX, R12
	DECQ  CX
	CMPQ  R9, $8
	JCS   xtsenc_1

xtsenc_8:
	MOVOU (AX), X11
	XTS_IN(0, X0)
	XTS_IN(16, X1)
	XTS_IN(32, X2)
	XTS_IN(48, X3)
	XTS_IN(64, X4)
	XTS_IN(80, X5)
	XTS_IN(96, X6)
	XTS_IN(112, X7)
	CMPQ  CX, $11
	JCS   xtsenc_8_r10
	JEQ   xtsenc_8_r12
	ENC8_ROUND(-208)
	ENC8_ROUND(-192)

xtsenc_8_r12:
	ENC8_ROUND(-176)
	ENC8_ROUND(-160)

xtsenc_8_r10:
	ENC8_ROUND(-144)
	ENC8_ROUND(-128)
	ENC8_ROUND(-112)
	ENC8_ROUND(-96)
	ENC8_ROUND(-80)
	ENC8_ROUND(-64)
	ENC8_ROUND(-48)
	ENC8_ROUND(-32)
	ENC8_ROUND(-16)
	MOVOU (R12), X11
	AESENCLAST8(X11)
	XTS_OUT(0, X0)
	XTS_OUT(16, X1)
	XTS_OUT(32, X2)
	XTS_OUT(48, X3)
	XTS_OUT(64, X4)
	XTS_OUT(80, X5)
	XTS_OUT(96, X6)
	XTS_OUT(112, X7)
	ADDQ  $128, SI
	ADDQ  $128, DI
	SUBQ  $8, R9
	CMPQ  R9, $8
	JCC   xtsenc_8

xtsenc_1:
	TESTQ R9, R9
	JEQ   xtsenc_done

xtsenc_1_loop:
	MOVOU (SI), X0
	MOVOU (AX), X11
	PXOR  X8, X0
	PXOR  X11, X0
	LEAQ  16(AX), R8
	MOVQ  CX, R10

xtsenc_1_round:
	MOVOU  (R8), X11
	AESENC X11, X0
	ADDQ   $16, R8
	DECQ   R10
	JNE    xtsenc_1_round
	MOVOU      (R8), X11
	AESENCLAST X11, X0
	PXOR       X8, X0
	MOVOU      X0, (DI)
	GF128_DOUBLE(X8, X9, X10)
	ADDQ       $16, SI
	ADDQ       $16, DI
	DECQ       R9
	JNE        xtsenc_1_loop

xtsenc_done:
	MOVOU X8, (R11)
	RET

// func xtsDecAsm(nr int, xk *uint32, dst, src *byte, nblocks int, t *[16]byte)
TEXT ·xtsDecAsm(SB), NOSPLIT, $128-48
	MOVQ  nr+0(FP), CX
	MOVQ  xk+8(FP), AX
	MOVQ  dst+16(FP), DI
	MOVQ  src+24(FP), SI
	MOVQ  nblocks+32(FP), R9
	MOVQ  t+40(FP), R11
	MOVOU (R11), X8
	MOVOU xtsMask<>(SB), X9
	MOVQ  CX, R12
	SHLQ  $4, R12
	ADDQ  AX, R12
	DECQ  CX
	CMPQ  R9, $8
	JCS   xtsdec_1

xtsdec_8:
	MOVOU (AX), X11
	XTS_IN(0, X0)
	XTS_IN(16, X1)
	XTS_IN(32, X2)
	XTS_IN(48, X3)
	XTS_IN(64, X4)
	XTS_IN(80, X5)
	XTS_IN(96, X6)
	XTS_IN(112, X7)
	CMPQ  CX, $11
	JCS   xtsdec_8_r10
	JEQ   xtsdec_8_r12
	DEC8_ROUND(-208)
	DEC8_ROUND(-192)

xtsdec_8_r12:
	DEC8_ROUND(-176)
	DEC8_ROUND(-160)

xtsdec_8_r10:
	DEC8_ROUND(-144)
	DEC8_ROUND(-128)
	DEC8_ROUND(-112)
	DEC8_ROUND(-96)
	DEC8_ROUND(-80)
	DEC8_ROUND(-64)
	DEC8_ROUND(-48)
	DEC8_ROUND(-32)
	DEC8_ROUND(-16)
	MOVOU (R12), X11
	AESDECLAST8(X11)
	XTS_OUT(0, X0)
	XTS_OUT(16, X1)
	XTS_OUT(32, X2)
	XTS_OUT(48, X3)
	XTS_OUT(64, X4)
	XTS_OUT(80, X5)
	XTS_OUT(96, X6)
	XTS_OUT(112, X7)
	ADDQ  $128, SI
	ADDQ  $128, DI
	SUBQ  $8, R9
	CMPQ  R9, $8
	JCC   xtsdec_8

xtsdec_1:
	TESTQ R9, R9
	JEQ   xtsdec_done

xtsdec_1_loop:
	MOVOU (SI), X0
	MOVOU (AX), X11
	PXOR  X8, X0
	PXOR  X11, X0
	LEAQ  16(AX), R8
	MOVQ  CX, R10

xtsdec_1_round:
	MOVOU  (R8), X11
	AESDEC X11, X0
	ADDQ   $16, R8
	DECQ   R10
	JNE    xtsdec_1_round
	MOVOU      (R8), X11
	AESDECLAST X11, X0
	PXOR       X8, X0
	MOVOU      X0, (DI)
	GF128_DOUBLE(X8, X9, X10)
	ADDQ       $16, SI
	ADDQ       $16, DI
	DECQ       R9
	JNE        xtsdec_1_loop

xtsdec_done:
	MOVOU X8, (R11)
	RET
