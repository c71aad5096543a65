package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// s4 and u4 are stored packed, two to a byte, element 2j in the low nibble of byte
// j and 2j+1 in the high one (XLA's layout); the buffer is bound as bytes, so every
// read stays inside the array's ⌈n/2⌉ bytes. In registers they are i32 values
// sign-extended from 4 bits and u32 values below 16. Kernels that write them produce
// both elements of a byte in one invocation (lowerElemental's pair loop): two
// invocations never share a byte. Integer ops compute in 32 bits and wrap back to
// 4 (elementwiseResult); the ops whose answer depends on the width (shifts,
// popcnt, clz, the INT_MIN cases of divide) read it from dt.Bits().

// isNibble reports the packed 4-bit integers.
func isNibble(dt hlo.DType) bool { return dt == hlo.S4 || dt == hlo.U4 }

// isPacked reports the types stored two to a byte: s4, u4 and f4e2m1fn (whose
// register form is an f32, f8.go).
func isPacked(dt hlo.DType) bool { return isNibble(dt) || dt == hlo.F4E2M1FN }

// loadNibble reads element i (an index) of a packed buffer.
func (k *kernel) loadNibble(b spirv.Buffer, i spirv.ID, dt hlo.DType) spirv.ID {
	f, u := k.f, k.u32
	byteAt := f.ShrL(i, k.ic(1))
	shift := f.Convert(k.m.TypeU32(), f.IMul(f.And(i, k.ic(1)), k.ic(4)))
	v := f.And(f.ShrL(f.Convert(k.m.TypeU32(), f.LoadElem(b, byteAt)), shift), u(0xf))
	return k.fromNibble(v, dt)
}

// fromNibble turns 4 bits (in a u32) into dt's register form.
func (k *kernel) fromNibble(v spirv.ID, dt hlo.DType) spirv.ID {
	if ft, ok := f8Formats[dt]; ok {
		return k.f8ToF32(v, ft)
	}
	if dt == hlo.U4 {
		return v
	}
	f := k.f
	s := f.Bitcast(k.m.TypeI32(), f.Shl(v, k.u32(28)))
	return f.ShrA(s, k.u32(28))
}

// wrapNibble wraps an integer register value of dt's register type to 4 bits
// (two's complement for s4), as a convert to s4 or u4 does; other dtypes pass.
func (k *kernel) wrapNibble(v spirv.ID, dt hlo.DType) spirv.ID {
	if !isNibble(dt) {
		return v
	}
	f := k.f
	bits := f.And(f.Bitcast(k.m.TypeU32(), v), k.u32(0xf))
	return k.fromNibble(bits, dt)
}

// nibbleBits is a register value's 4 bits in a u32.
func (k *kernel) nibbleBits(v spirv.ID) spirv.ID {
	return k.f.And(k.f.Bitcast(k.m.TypeU32(), v), k.u32(0xf))
}

// storeNibbles writes byte j of a packed buffer from its two elements' register
// values; hasHi false (a bool ID) writes a zero high nibble past the array's end.
func (k *kernel) storeNibbles(b spirv.Buffer, j, lo, hi, hasHi spirv.ID, dt hlo.DType) {
	f := k.f
	bits := k.nibbleBits
	if ft, ok := f8Formats[dt]; ok {
		bits = func(v spirv.ID) spirv.ID { return k.f32ToF8(v, ft) }
	}
	hiBits := f.Select(hasHi, f.Shl(bits(hi), k.u32(4)), k.u32(0))
	f.StoreElem(b, j, f.Convert(k.m.TypeInt(8, false), f.Or(bits(lo), hiBits)))
}

// nibbleLimit says why an instruction that makes or reads packed values cannot be
// lowered yet, or "": elementwise ops and data movement are, but not the scatters
// and dynamic updates (they write single elements), bitcast-convert, an s4/u4 iota
// (its values would have to wrap), or anything with a strategy of its own.
func nibbleLimit(in *hlo.Instruction) string {
	uses := isPacked(in.Shape.DType)
	for _, op := range in.Operands {
		uses = uses || isPacked(op.Shape.DType)
	}
	if !uses || nibbleOps(in) {
		return ""
	}
	return "uses a packed 4-bit type; code generation handles those in elementwise ops and data movement only"
}

func nibbleOps(in *hlo.Instruction) bool {
	switch in.Op {
	case hlo.OpBitcastConvert, hlo.OpScatter, hlo.OpDynamicUpdateSlice:
		return false
	case hlo.OpIota:
		return !isNibble(in.Shape.DType)
	}
	switch in.Info().Kind {
	case hlo.KindLeaf, hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise, hlo.KindMovement, hlo.KindTuple:
		return true
	}
	return false
}

// intWidth is the width of the SPIR-V integer that holds dt's bits: 32 for the
// packed types, which have no SPIR-V type of their own.
func (k *kernel) intWidth(dt hlo.DType) int {
	switch {
	case isPacked(dt):
		return 32
	case dt.Bits() < 8: // f6: six bits in a byte
		return 8
	}
	return dt.Bits()
}

// hasNibbles reports a computation with a packed value anywhere.
func hasNibbles(c *hlo.Computation) bool {
	for _, in := range c.Instructions {
		if s := in.Shape; isPacked(s.DType) {
			return true
		}
		for _, e := range in.Shape.Elems {
			if isPacked(e.DType) {
				return true
			}
		}
	}
	return false
}
