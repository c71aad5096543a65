package peer

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/gomlx/gomlx/backends"

	"github.com/vkxla/vkxla/hlo"
)

// FlatData is a literal's elements as the Go slice GoMLX keeps for its element
// type ([]float32, []bfloat16.BFloat16, []bool, …): the same little-endian bytes,
// copied (HLO's pred is a byte holding 0 or 1, as a Go bool).
func FlatData(lit *hlo.Literal) (any, error) {
	dt, err := DType(lit.DType())
	if err != nil {
		return nil, err
	}
	flat := reflect.MakeSlice(reflect.SliceOf(dt.GoType()), lit.NumElements(), lit.NumElements())
	copy(sliceBytes(flat), lit.Bytes())
	return flat.Interface(), nil
}

// sliceBytes is the memory of a slice of fixed-size elements as bytes.
func sliceBytes(s reflect.Value) []byte {
	if s.Len() == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(s.UnsafePointer()), s.Len()*int(s.Type().Elem().Size()))
}

// ToBuffer copies a literal into a backend buffer.
func ToBuffer(backend backends.Backend, lit *hlo.Literal) (backends.Buffer, error) {
	flat, err := FlatData(lit)
	if err != nil {
		return nil, err
	}
	s, err := Shape(lit.Shape())
	if err != nil {
		return nil, err
	}
	return backend.BufferFromFlatData(0, flat, s)
}

// ToLiteral copies a backend buffer of shape s into a new literal.
func ToLiteral(backend backends.Backend, buf backends.Buffer, s hlo.Shape) (*hlo.Literal, error) {
	dt, err := DType(s.DType)
	if err != nil {
		return nil, err
	}
	lit := hlo.NewLiteral(s)
	flat := reflect.MakeSlice(reflect.SliceOf(dt.GoType()), lit.NumElements(), lit.NumElements())
	if err := backend.BufferToFlatData(buf, flat.Interface()); err != nil {
		return nil, fmt.Errorf("reading a %v output: %w", s, err)
	}
	copy(lit.Bytes(), sliceBytes(flat))
	return lit, nil
}
