package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// s4, u4, s2, u2 and f4e2m1fn are stored packed, two (four) to a byte, element
// per·j+e in bits [w·e, w·e+w) of byte j (XLA's layout, lowest element in the low
// bits); the buffer is bound as bytes, so every read stays inside the array's
// ⌈n·w/8⌉ bytes. In registers the integers are i32 values sign-extended from w
// bits or u32 values below 2^w (f4e2m1fn is an f32, f8.go). Kernels that write them
// produce all the elements of a byte in one invocation (lowerElemental's group
// loop): two invocations never share a byte. Integer ops compute in 32 bits and wrap
// back to w (elementwiseResult); the ops whose answer depends on the width
// (shifts, popcnt, clz, the INT_MIN cases of divide) read it from dt.Bits().

// isNibble reports the packed integers (s4, u4, s2, u2).
func isNibble(dt hlo.DType) bool { return dt.IsInteger() && dt.IsSubByte() }

// isPacked reports the types stored several to a byte: the packed integers and
// f4e2m1fn.
func isPacked(dt hlo.DType) bool { return isNibble(dt) || dt == hlo.F4E2M1FN }

// perByte is how many elements of a packed type share a byte (2 or 4).
func perByte(dt hlo.DType) int64 { return int64(8 / dt.StorageBits()) }

// loadNibble reads element i (an index) of a packed buffer.
func (k *kernel) loadNibble(b spirv.Buffer, i spirv.ID, dt hlo.DType) spirv.ID {
	f := k.f
	per, w := perByte(dt), int64(dt.StorageBits())
	byteAt := f.Div(i, k.ic(per))
	shift := f.Convert(k.m.TypeU32(), f.IMul(f.And(i, k.ic(per-1)), k.ic(w)))
	v := f.And(f.ShrL(f.Convert(k.m.TypeU32(), f.LoadElem(b, byteAt)), shift), k.u32(uint32(1)<<w-1))
	return k.fromNibble(v, dt)
}

// fromNibble turns an element's bits (in a u32) into dt's register form.
func (k *kernel) fromNibble(v spirv.ID, dt hlo.DType) spirv.ID {
	if ft, ok := f8Formats[dt]; ok {
		return k.f8ToF32(v, ft)
	}
	if dt.IsUnsigned() {
		return v
	}
	return k.signExtend(v, dt.Bits())
}

// signExtend reads the low w bits of a u32 as a two's complement i32.
func (k *kernel) signExtend(v spirv.ID, w int) spirv.ID {
	f := k.f
	s := f.Bitcast(k.m.TypeI32(), f.Shl(v, k.u32(uint32(32-w))))
	return f.ShrA(s, k.u32(uint32(32-w)))
}

// wrapNibble wraps an integer register value of dt's register type to dt's width
// (two's complement for the signed ones), as a convert to it does; other dtypes
// pass.
func (k *kernel) wrapNibble(v spirv.ID, dt hlo.DType) spirv.ID {
	if !isNibble(dt) {
		return v
	}
	return k.fromNibble(k.nibbleBits(v, dt), dt)
}

// nibbleBits is an integer register value's low dt.Bits() bits in a u32.
func (k *kernel) nibbleBits(v spirv.ID, dt hlo.DType) spirv.ID {
	return k.f.And(k.f.Bitcast(k.m.TypeU32(), v), k.u32(uint32(1)<<dt.Bits()-1))
}

// storePacked writes byte j of a packed buffer from the register values of its
// elements (lowest first); has[e] false (a bool ID) writes zero bits for an element
// past the array's end.
func (k *kernel) storePacked(b spirv.Buffer, j spirv.ID, vals, has []spirv.ID, dt hlo.DType) {
	f := k.f
	bits := func(v spirv.ID) spirv.ID { return k.nibbleBits(v, dt) }
	if ft, ok := f8Formats[dt]; ok {
		bits = func(v spirv.ID) spirv.ID { return k.f32ToF8(v, ft) }
	}
	w := uint32(dt.StorageBits())
	acc := bits(vals[0])
	for e := 1; e < len(vals); e++ {
		part := f.Shl(bits(vals[e]), k.u32(uint32(e)*w))
		acc = f.Or(acc, f.Select(has[e], part, k.u32(0)))
	}
	f.StoreElem(b, j, f.Convert(k.m.TypeInt(8, false), acc))
}

// nibbleLimit says why an instruction that makes or reads packed values cannot be
// lowered yet, or "": elementwise ops and data movement are, but not the scatters
// and dynamic updates (they write single elements), bitcast-convert, an iota of a
// packed integer (its values would have to wrap), or anything with a strategy of
// its own.
func nibbleLimit(in *hlo.Instruction) string {
	uses := isPacked(in.Shape.DType)
	for _, op := range in.Operands {
		uses = uses || isPacked(op.Shape.DType)
	}
	if !uses || nibbleOps(in) {
		return ""
	}
	return "uses a packed sub-byte type; code generation handles those in elementwise ops and data movement only"
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

// packedGroup is how many consecutive elements one invocation of the elemental
// loop produces: 1 without packed values, else the most any packed value's byte
// holds (4 for the 2-bit types, 2 for the 4-bit ones), which covers whole bytes of
// every packed output.
func packedGroup(c *hlo.Computation) int64 {
	group := int64(1)
	for _, in := range c.Instructions {
		shapes := append([]hlo.Shape{in.Shape}, in.Shape.Elems...)
		for _, s := range shapes {
			if isPacked(s.DType) {
				group = max(group, perByte(s.DType))
			}
		}
	}
	return group
}
