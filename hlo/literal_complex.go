package hlo

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Complex elements. A c64 element is two little-endian f32 (real part first), a
// c128 element two f64, as XLA stores them; a real literal's element reads as a
// complex number with a zero imaginary part, so that convert can read any operand
// through one accessor.

// Complex128 reads element i as a complex number: exact for c64 and c128, the real
// value (Float64) with imaginary part 0 for every other type.
func (l *Literal) Complex128(i int) complex128 {
	switch l.shape.DType {
	case C64:
		b := l.data[8*i : 8*i+8]
		re := math.Float32frombits(binary.LittleEndian.Uint32(b))
		im := math.Float32frombits(binary.LittleEndian.Uint32(b[4:]))
		return complex(float64(re), float64(im))
	case C128:
		b := l.data[16*i : 16*i+16]
		re := math.Float64frombits(binary.LittleEndian.Uint64(b))
		im := math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
		return complex(re, im)
	}
	return complex(l.Float64(i), 0)
}

// SetComplex128 stores v in a complex element, each part rounded to nearest even
// for c64. It panics on a real literal, like SetFloat64 on an integer one: the
// caller chooses the accessor from the type.
func (l *Literal) SetComplex128(i int, v complex128) {
	switch dt := l.shape.DType; dt {
	case C64:
		b := l.data[8*i : 8*i+8]
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(real(v))))
		binary.LittleEndian.PutUint32(b[4:], math.Float32bits(float32(imag(v))))
	case C128:
		b := l.data[16*i : 16*i+16]
		binary.LittleEndian.PutUint64(b, math.Float64bits(real(v)))
		binary.LittleEndian.PutUint64(b[8:], math.Float64bits(imag(v)))
	default:
		panic(fmt.Sprintf("SetComplex128 on %v literal", dt))
	}
}
