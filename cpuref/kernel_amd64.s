#include "textflag.h"

// func cpuidAVX2() bool: CPUID leaf 7 EBX bit 5 (AVX2), leaf 1 ECX bits 27 (OSXSAVE)
// and 28 (AVX), and XCR0 bits 1-2 (the OS saves the XMM and YMM state).
TEXT ·cpuidAVX2(SB), NOSPLIT, $0-1
	MOVB $0, ret+0(FP)
	MOVL $0, AX
	CPUID
	CMPL AX, $7
	JLT  no
	MOVL $1, AX
	MOVL $0, CX
	CPUID
	MOVL CX, R8
	ANDL $0x18000000, R8
	CMPL R8, $0x18000000
	JNE  no
	MOVL $0, CX
	XGETBV
	ANDL $6, AX
	CMPL AX, $6
	JNE  no
	MOVL $7, AX
	MOVL $0, CX
	CPUID
	ANDL $0x20, BX
	JEQ  no
	MOVB $1, ret+0(FP)
no:
	RET

// func macF32x64(acc *float32, a *float32, k *int32, n int, b *float32)
// acc[0:64] += a[t] * b[k[t]*64 : +64] for t < n: VMULPS rounds each product to
// float32 and VADDPS each sum, lane by lane, as the scalar loop does (no FMA).
TEXT ·macF32x64(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ k+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ b+32(FP), BX
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	TESTQ CX, CX
	JEQ   done64
loop64:
	MOVLQSX (DX), AX
	SHLQ $8, AX
	ADDQ BX, AX
	VBROADCASTSS (SI), Y8
	VMULPS 0(AX), Y8, Y9
	VMULPS 32(AX), Y8, Y10
	VMULPS 64(AX), Y8, Y11
	VMULPS 96(AX), Y8, Y12
	VADDPS Y9, Y0, Y0
	VADDPS Y10, Y1, Y1
	VADDPS Y11, Y2, Y2
	VADDPS Y12, Y3, Y3
	VMULPS 128(AX), Y8, Y13
	VMULPS 160(AX), Y8, Y14
	VMULPS 192(AX), Y8, Y15
	VMULPS 224(AX), Y8, Y9
	VADDPS Y13, Y4, Y4
	VADDPS Y14, Y5, Y5
	VADDPS Y15, Y6, Y6
	VADDPS Y9, Y7, Y7
	ADDQ $4, SI
	ADDQ $4, DX
	DECQ CX
	JNE  loop64
done64:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET

// func macF32x8(acc *float32, a *float32, k *int32, n int, b *float32)
// As macF32x64 for a panel of 8 columns.
TEXT ·macF32x8(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ k+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ b+32(FP), BX
	VMOVUPS 0(DI), Y0
	TESTQ CX, CX
	JEQ   done8
loop8:
	MOVLQSX (DX), AX
	SHLQ $5, AX
	ADDQ BX, AX
	VBROADCASTSS (SI), Y8
	VMULPS 0(AX), Y8, Y9
	VADDPS Y9, Y0, Y0
	ADDQ $4, SI
	ADDQ $4, DX
	DECQ CX
	JNE  loop8
done8:
	VMOVUPS Y0, 0(DI)
	VZEROUPPER
	RET
