package gomlx

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/vkxla/vkxla/hlo"
)

// dtypePairs is the one mapping between GoMLX's element types and vkxla's. GoMLX
// types missing here (complex, 4- and 8-bit floats, 2- and 4-bit integers) are
// not supported by this backend yet: hlo and cpuref have them all (c64, c128,
// the f8/f4 floats, s4/u4/s2/u2), GPU code generation only some of their ops
// (docs/complex.md, docs/ir.md), and the backend's buffers and complex ops
// (Real, Imag, Complex, FFT) are not mapped yet.
var dtypePairs = []struct {
	g dtypes.DType
	h hlo.DType
}{
	{dtypes.Bool, hlo.Pred},
	{dtypes.Int8, hlo.S8}, {dtypes.Int16, hlo.S16}, {dtypes.Int32, hlo.S32}, {dtypes.Int64, hlo.S64},
	{dtypes.Uint8, hlo.U8}, {dtypes.Uint16, hlo.U16}, {dtypes.Uint32, hlo.U32}, {dtypes.Uint64, hlo.U64},
	{dtypes.Float16, hlo.F16}, {dtypes.BFloat16, hlo.BF16}, {dtypes.Float32, hlo.F32}, {dtypes.Float64, hlo.F64},
}

// hloDType maps a GoMLX element type to vkxla's.
func hloDType(dt dtypes.DType) (hlo.DType, error) {
	for _, p := range dtypePairs {
		if p.g == dt {
			return p.h, nil
		}
	}
	return hlo.Invalid, fmt.Errorf("vkxla backend: element type %s: %w", dt, errUnsupportedDType)
}

// gomlxDType maps a vkxla element type to GoMLX's.
func gomlxDType(dt hlo.DType) (dtypes.DType, error) {
	for _, p := range dtypePairs {
		if p.h == dt {
			return p.g, nil
		}
	}
	return dtypes.InvalidDType, fmt.Errorf("vkxla backend: element type %v: %w", dt, errUnsupportedDType)
}

// hloShape maps a GoMLX array shape to vkxla's.
func hloShape(s shapes.Shape) (hlo.Shape, error) {
	if s.IsTuple() {
		return hlo.Shape{}, fmt.Errorf("vkxla backend: tuple shape %s: %w", s, errUnsupportedDType)
	}
	dt, err := hloDType(s.DType)
	if err != nil {
		return hlo.Shape{}, err
	}
	return hlo.MakeShape(dt, int64s(s.Dimensions)...), nil
}

// gomlxShape maps a vkxla array shape to GoMLX's.
func gomlxShape(s hlo.Shape) (shapes.Shape, error) {
	dt, err := gomlxDType(s.DType)
	if err != nil {
		return shapes.Invalid(), err
	}
	dims := make([]int, len(s.Dims))
	for i, d := range s.Dims {
		dims[i] = int(d)
	}
	return shapes.Make(dt, dims...), nil
}

func int64s(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

// flatBytes returns the bytes of flat, a slice of one of GoMLX's Go element types,
// without copying, and its element type. Every supported type is stored as vkxla
// stores it: little-endian, bool as one byte 0 or 1, float16 and bfloat16 as their
// 16 bits.
func flatBytes(flat any) ([]byte, dtypes.DType, error) {
	v := reflect.ValueOf(flat)
	if v.Kind() != reflect.Slice {
		return nil, dtypes.InvalidDType, fmt.Errorf("vkxla backend: flat data must be a slice, got %T", flat)
	}
	dt := dtypes.FromGoType(v.Type().Elem())
	if dt == dtypes.InvalidDType {
		return nil, dt, fmt.Errorf("vkxla backend: flat data of type %T: %w", flat, errUnsupportedDType)
	}
	if _, err := hloDType(dt); err != nil {
		return nil, dt, err
	}
	n := v.Len() * int(v.Type().Elem().Size())
	if n == 0 {
		return []byte{}, dt, nil
	}
	return unsafe.Slice((*byte)(v.UnsafePointer()), n), dt, nil
}

// literalOf copies flat (of GoMLX's Go element type for dt) into a literal of
// shape s.
func literalOf(flat any, s shapes.Shape) (*hlo.Literal, error) {
	raw, dt, err := flatBytes(flat)
	if err != nil {
		return nil, err
	}
	if dt != s.DType {
		return nil, fmt.Errorf("vkxla backend: flat data of type %T for a shape %s", flat, s)
	}
	hs, err := hloShape(s)
	if err != nil {
		return nil, err
	}
	return hlo.LiteralFromBytes(hs, append([]byte(nil), raw...))
}
