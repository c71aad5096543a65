package codegen

import "github.com/vkxla/vkxla/spirv"

// The part type of the complex kernels in complex_tanh.go, complex_expm1.go and
// complex_pow.go: f32, as c64 is the only complex type with kernels. (The c128
// work defines the same two names over the kernel's complex type.)

// partType is the type of a complex value's real and imaginary parts.
func (k *kernel) partType() spirv.ID { return k.m.TypeF32() }

// partConst is v as a constant of the part type.
func (k *kernel) partConst(v float64) spirv.ID { return k.m.ConstFloat(k.partType(), v) }
