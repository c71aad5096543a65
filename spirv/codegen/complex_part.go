package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// The complex kernels are generic over the part type: c64 is a vec2 of f32 and
// c128 a vec2 of f64 (a dvec2: ArrayStride 16 in storage, XLA's layout), and one
// kernel of each op serves both. The part type of the value being lowered is a
// kernel field, set at each entry into complex lowering (complexUnary,
// complexBinary, toComplex, emitComplex, complexConstant, the fft passes), so
// that the helpers below them (hypot, divide, sqrt, trig, exp and log) keep
// their signatures and read it through partType and partConst.

// partType is the f32 or f64 type of the parts of the complex value being
// lowered.
func (k *kernel) partType() spirv.ID {
	if k.part == hlo.F64 {
		return k.m.TypeFloat(64)
	}
	return k.m.TypeF32()
}

// partConst is a constant of partType.
func (k *kernel) partConst(v float64) spirv.ID { return k.m.ConstFloat(k.partType(), v) }

// lowerComplex makes dt (c64 or c128) the complex type being lowered.
func (k *kernel) lowerComplex(dt hlo.DType) { k.part = dt.ComplexPart() }

// complexTypeOf is the register and storage type of a complex dtype, whatever
// is being lowered.
func (k *kernel) complexTypeOf(dt hlo.DType) spirv.ID {
	return k.m.TypeVector(k.m.TypeFloat(dt.ComplexPart().Bits()), 2)
}

// complexDType is the complex dtype being lowered (c64 unless lowerComplex made
// it c128).
func (k *kernel) complexDType() hlo.DType {
	if k.part == hlo.F64 {
		return hlo.C128
	}
	return hlo.C64
}
