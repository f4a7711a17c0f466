// Body of one AES-XTS bulk function of xts_vaes_amd64.s, included once per
// vector width and direction after its TEXT line. The including file
// defines the width (registers D0-D3 for data, W0-W3 for tweaks, S0 and S1
// for scratch, POLY, K0, KT, KLAST; the instruction macros VMOVU, VMOVA,
// VXOR, BCAST, XOR3; NB blocks and VBYTES bytes per vector; ROUND4 and
// ROUND1; NB2 or NB4 when a vector holds more than one block; CACHEKEYS
// when every round key lives in a register; MULC and MULCONST for
// MULXK_CLMUL, which advances the tweaks) and the direction (AESR and
// AESRL: VAESENC/VAESENCLAST or VAESDEC/VAESDECLAST).
//
// The design is that of the kernel's arch/x86/crypto/aes-xts-avx-x86_64.S
// ("Faster AES-XTS on modern x86_64 CPUs"): four vectors of blocks per
// iteration, each vector of tweaks advanced by one multiplication by
// x^(4*NB) in GF(2^128) (MULXK below, a shift plus a carry-less multiply
// of the bits shifted out by the reduction constant 0x87), then whole
// vectors one at a time, then single blocks, with the tweak doubled in
// an xmm register. Ciphertext stealing is done by the Go caller.
//
// Arguments: nr+0(FP), xk+8(FP) (KeyEnc or KeyDec), dst+16(FP),
// src+24(FP), nblocks+32(FP) >= 1, t+40(FP) (the tweak of the first block
// in, the tweak of the block after the last out).

	MOVQ nr+0(FP), CX
	MOVQ xk+8(FP), AX
	MOVQ dst+16(FP), DI
	MOVQ src+24(FP), SI
	MOVQ nblocks+32(FP), R9
	MOVQ t+40(FP), R11
	MOVQ CX, R12
	SHLQ $4, R12
	ADDQ AX, R12 // R12 = the last round key

	BCAST   xtsPoly<>(SB), POLY
	VMOVDQU (R11), X4

	// W0 = the tweaks of the first NB blocks, lane i holding T·x^i.
#ifdef NB4
	VMOVDQA      X4, X8
	XDOUBLE(X8)
	VMOVDQA      X8, X12
	XDOUBLE(X12)
	VMOVDQA      X12, X13
	XDOUBLE(X13)
	VINSERTI32X4 $1, X8, Z4, Z4
	VINSERTI32X4 $2, X12, Z4, Z4
	VINSERTI32X4 $3, X13, Z4, Z4
#endif
#ifdef NB2
	VMOVDQA     X4, X8
	XDOUBLE(X8)
	VINSERTI128 $1, X8, Y4, Y4
#endif

	// W1-W3 = W0·x^NB, ·x^(2NB), ·x^(3NB).
	VMOVA W0, W1
	MULXK(NB, W1)
	VMOVA W1, W2
	MULXK(NB, W2)
	VMOVA W2, W3
	MULXK(NB, W3)

	BCAST (AX), K0
	BCAST MULCONST, MULC
#ifdef CACHEKEYS
	// Round r of an nr-round schedule lives in Z(16+14-nr+r), so that the
	// unrolled rounds below share their tail whatever nr is; the last
	// round key is always Z30.
	CMPQ CX, $12
	JCS  load10
	JEQ  load12
	BCAST -208(R12), Z17
	BCAST -192(R12), Z18

load12:
	BCAST -176(R12), Z19
	BCAST -160(R12), Z20

load10:
	BCAST -144(R12), Z21
	BCAST -128(R12), Z22
	BCAST -112(R12), Z23
	BCAST -96(R12), Z24
	BCAST -80(R12), Z25
	BCAST -64(R12), Z26
	BCAST -48(R12), Z27
	BCAST -32(R12), Z28
	BCAST -16(R12), Z29
	BCAST (R12), Z30
#else
	BCAST (R12), KLAST
#endif

loop4:
	CMPQ R9, $(4*NB)
	JCS  tail
	VMOVU 0(SI), D0
	VMOVU VBYTES(SI), D1
	VMOVU (2*VBYTES)(SI), D2
	VMOVU (3*VBYTES)(SI), D3
	XOR3(W0, K0, D0)
	XOR3(W1, K0, D1)
	XOR3(W2, K0, D2)
	XOR3(W3, K0, D3)
	CMPQ CX, $12
	JCS  loop4_r10
	JEQ  loop4_r12
	ROUND4(-208, Z17)
	ROUND4(-192, Z18)

loop4_r12:
	ROUND4(-176, Z19)
	ROUND4(-160, Z20)

loop4_r10:
	ROUND4(-144, Z21)
	ROUND4(-128, Z22)
	ROUND4(-112, Z23)
	ROUND4(-96, Z24)
	ROUND4(-80, Z25)
	ROUND4(-64, Z26)
	ROUND4(-48, Z27)
	ROUND4(-32, Z28)
	ROUND4(-16, Z29)
	AESRL KLAST, D0, D0
	AESRL KLAST, D1, D1
	AESRL KLAST, D2, D2
	AESRL KLAST, D3, D3
	VXOR  W0, D0, D0
	VXOR  W1, D1, D1
	VXOR  W2, D2, D2
	VXOR  W3, D3, D3
	VMOVU D0, 0(DI)
	VMOVU D1, VBYTES(DI)
	VMOVU D2, (2*VBYTES)(DI)
	VMOVU D3, (3*VBYTES)(DI)
	MULXK_CLMUL(W0)
	MULXK_CLMUL(W1)
	MULXK_CLMUL(W2)
	MULXK_CLMUL(W3)
	ADDQ $(4*VBYTES), SI
	ADDQ $(4*VBYTES), DI
	SUBQ $(4*NB), R9
	JMP  loop4

	// Fewer than 4*NB blocks left: whole vectors with W0, W1, W2 in turn.
tail:
	CMPQ R9, $NB
	JCS  single
	VMOVU (SI), D0
	XOR3(W0, K0, D0)
	CMPQ CX, $12
	JCS  tail_r10
	JEQ  tail_r12
	ROUND1(-208, Z17)
	ROUND1(-192, Z18)

tail_r12:
	ROUND1(-176, Z19)
	ROUND1(-160, Z20)

tail_r10:
	ROUND1(-144, Z21)
	ROUND1(-128, Z22)
	ROUND1(-112, Z23)
	ROUND1(-96, Z24)
	ROUND1(-80, Z25)
	ROUND1(-64, Z26)
	ROUND1(-48, Z27)
	ROUND1(-32, Z28)
	ROUND1(-16, Z29)
	AESRL KLAST, D0, D0
	VXOR  W0, D0, D0
	VMOVU D0, (DI)
	VMOVA W1, W0
	VMOVA W2, W1
	VMOVA W3, W2
	ADDQ  $VBYTES, SI
	ADDQ  $VBYTES, DI
	SUBQ  $NB, R9
	JMP   tail

	// Fewer than NB blocks left, one at a time in xmm registers; lane 0 of
	// W0 (X4) is the next tweak.
single:
	TESTQ R9, R9
	JEQ   done

single_loop:
	VMOVDQU (SI), X0
	VPXOR   X4, X0, X0
	VPXOR   (AX), X0, X0
	LEAQ    16(AX), R8
	MOVQ    CX, R10
	DECQ    R10

single_round:
	AESR (R8), X0, X0
	ADDQ $16, R8
	DECQ R10
	JNE  single_round
	AESRL   (R8), X0, X0
	VPXOR   X4, X0, X0
	VMOVDQU X0, (DI)
	XDOUBLE(X4)
	ADDQ    $16, SI
	ADDQ    $16, DI
	DECQ    R9
	JNE     single_loop

done:
	VMOVDQU X4, (R11)
	VZEROUPPER
	RET
