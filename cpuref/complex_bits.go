package cpuref

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// c64 elements in one 64-bit word: the real part's f32 bits low, the imaginary
// part's high (the little-endian layout of the literal). The scalar computations
// that reduce, scatter, sort and select-and-scatter call per element work on such
// words, so the complex element functions are lifted to them here. c128 elements
// do not fit: those ops refuse c128 (wide.go).

func wordC64(b uint64) complex128 {
	return complex(float64(math.Float32frombits(uint32(b))), float64(math.Float32frombits(uint32(b>>32))))
}

func c64Word(z complex128) uint64 {
	return uint64(math.Float32bits(float32(real(z)))) | uint64(math.Float32bits(float32(imag(z))))<<32
}

// errWideElements is the error of the word-based paths on c128.
func errWideElements(what string, dt hlo.DType) error {
	return fmt.Errorf("%s on %v: its 16-byte elements do not fit the 64-bit element words of this path: %w", what, dt, hlo.ErrUnsupported)
}

func complexUnaryWord(op hlo.Opcode, dt hlo.DType) (unaryFunc, error) {
	if dt != hlo.C64 {
		return nil, errWideElements(op.String(), dt)
	}
	if f, ok := complexRealMath[op]; ok {
		return func(x uint64) uint64 { return fromFloat(hlo.F32, f(wordC64(x))) }, nil
	}
	if f, ok := complexUnaryMath[op]; ok {
		return func(x uint64) uint64 { return c64Word(f(wordC64(x))) }, nil
	}
	return nil, fmt.Errorf("%v is not defined for %v", op, dt)
}

func complexBinaryWord(op hlo.Opcode, dt hlo.DType) (binaryFunc, error) {
	if dt != hlo.C64 {
		return nil, errWideElements(op.String(), dt)
	}
	if f, ok := complexBinaryFor(op, dt); ok {
		return func(x, y uint64) uint64 { return c64Word(f(wordC64(x), wordC64(y))) }, nil
	}
	return nil, fmt.Errorf("%v is not defined for %v", op, dt)
}

func complexCompareWord(dir hlo.ComparisonDirection, dt hlo.DType) (binaryFunc, error) {
	switch {
	case dt != hlo.C64:
		return nil, errWideElements("compare", dt)
	case dir != hlo.CmpEQ && dir != hlo.CmpNE:
		return nil, fmt.Errorf("compare %v of %v operands: complex numbers compare EQ and NE only", dir, dt)
	}
	ne := dir == hlo.CmpNE
	return func(x, y uint64) uint64 { return boolBits(complexEqual(wordC64(x), wordC64(y)) != ne) }, nil
}

// complexConvertWord converts to c64 from a real type or c64 (see
// evalComplexConvert).
func complexConvertWord(from, to hlo.DType) (unaryFunc, error) {
	switch {
	case to != hlo.C64 || from == hlo.C128:
		if !to.IsComplex() {
			return nil, fmt.Errorf("convert from %v to %v: complex to real is not defined (take real or imag)", from, to)
		}
		return nil, errWideElements("convert", hlo.C128)
	case from == hlo.C64:
		return func(x uint64) uint64 { return x }, nil
	}
	f, err := convertFor(from, hlo.F32)
	if err != nil {
		return nil, err
	}
	return func(x uint64) uint64 { return f(x) }, nil // imaginary part +0: the high word
}
