package spirv

// Typed instruction helpers. Result types are inferred from the operands
// wherever SPIR-V makes them equal (arithmetic, select, loads), so emission
// code passes a type only where it chooses one (conversions, construction).

// op1 and op2 emit an instruction whose result has the type of its first operand.
func (f *Function) op1(op Op, a ID) ID { return f.Op(op, f.m.TypeOf(a), uint32(a)) }
func (f *Function) op2(op Op, a, b ID) ID {
	return f.Op(op, f.m.TypeOf(a), uint32(a), uint32(b))
}

// Arithmetic by explicit opcode.
func (f *Function) IAdd(a, b ID) ID       { return f.op2(OpIAdd, a, b) }
func (f *Function) ISub(a, b ID) ID       { return f.op2(OpISub, a, b) }
func (f *Function) IMul(a, b ID) ID       { return f.op2(OpIMul, a, b) }
func (f *Function) UDiv(a, b ID) ID       { return f.op2(OpUDiv, a, b) }
func (f *Function) SDiv(a, b ID) ID       { return f.op2(OpSDiv, a, b) }
func (f *Function) UMod(a, b ID) ID       { return f.op2(OpUMod, a, b) }
func (f *Function) SRem(a, b ID) ID       { return f.op2(OpSRem, a, b) }
func (f *Function) SMod(a, b ID) ID       { return f.op2(OpSMod, a, b) }
func (f *Function) FAdd(a, b ID) ID       { return f.op2(OpFAdd, a, b) }
func (f *Function) FSub(a, b ID) ID       { return f.op2(OpFSub, a, b) }
func (f *Function) FMul(a, b ID) ID       { return f.op2(OpFMul, a, b) }
func (f *Function) FDiv(a, b ID) ID       { return f.op2(OpFDiv, a, b) }
func (f *Function) FRem(a, b ID) ID       { return f.op2(OpFRem, a, b) }
func (f *Function) FMod(a, b ID) ID       { return f.op2(OpFMod, a, b) }
func (f *Function) FNegate(a ID) ID       { return f.op1(OpFNegate, a) }
func (f *Function) SNegate(a ID) ID       { return f.op1(OpSNegate, a) }
func (f *Function) Not(a ID) ID           { return f.op1(OpNot, a) }
func (f *Function) And(a, b ID) ID        { return f.op2(OpBitwiseAnd, a, b) }
func (f *Function) Or(a, b ID) ID         { return f.op2(OpBitwiseOr, a, b) }
func (f *Function) Xor(a, b ID) ID        { return f.op2(OpBitwiseXor, a, b) }
func (f *Function) Shl(a, n ID) ID        { return f.op2(OpShiftLeftLogical, a, n) }
func (f *Function) ShrL(a, n ID) ID       { return f.op2(OpShiftRightLogical, a, n) }
func (f *Function) ShrA(a, n ID) ID       { return f.op2(OpShiftRightArithmetic, a, n) }
func (f *Function) LogicalAnd(a, b ID) ID { return f.op2(OpLogicalAnd, a, b) }
func (f *Function) LogicalOr(a, b ID) ID  { return f.op2(OpLogicalOr, a, b) }
func (f *Function) LogicalNot(a ID) ID    { return f.op1(OpLogicalNot, a) }

// byKind picks the float, signed-int or unsigned-int form of an operation
// from the type of a, so one emitter line serves every dtype.
func (f *Function) byKind(a ID, fop, sop, uop Op) Op {
	t := f.m.TypeOf(a)
	switch {
	case f.m.IsFloat(t):
		return fop
	case f.m.IsSigned(t):
		return sop
	case f.m.IsInt(t):
		return uop
	}
	f.m.failf("arithmetic on non-numeric type %s", f.m.TypeName(t))
	return fop
}

// Type-directed arithmetic: float, signed or unsigned by the operand type.
func (f *Function) Add(a, b ID) ID { return f.op2(f.byKind(a, OpFAdd, OpIAdd, OpIAdd), a, b) }
func (f *Function) Sub(a, b ID) ID { return f.op2(f.byKind(a, OpFSub, OpISub, OpISub), a, b) }
func (f *Function) Mul(a, b ID) ID { return f.op2(f.byKind(a, OpFMul, OpIMul, OpIMul), a, b) }
func (f *Function) Div(a, b ID) ID { return f.op2(f.byKind(a, OpFDiv, OpSDiv, OpUDiv), a, b) }

// Rem is the remainder with the sign of the dividend (C's %, XLA's remainder).
func (f *Function) Rem(a, b ID) ID { return f.op2(f.byKind(a, OpFRem, OpSRem, OpUMod), a, b) }

// Neg negates a float or integer.
func (f *Function) Neg(a ID) ID { return f.op1(f.byKind(a, OpFNegate, OpSNegate, OpSNegate), a) }

// cmp emits a comparison; the result is bool, or a bool vector for vectors.
func (f *Function) cmp(op Op, a, b ID) ID {
	return f.Op(op, f.m.boolLike(f.m.TypeOf(a)), uint32(a), uint32(b))
}

// Comparisons by explicit opcode, e.g. Compare(OpFUnordNotEqual, a, b).
func (f *Function) Compare(op Op, a, b ID) ID { return f.cmp(op, a, b) }

// Type-directed comparisons. Float comparisons are ordered (false when
// either side is NaN) except NotEqual, which is unordered (true for NaN),
// matching IEEE and XLA's compare semantics.
func (f *Function) Equal(a, b ID) ID {
	if f.m.IsBool(f.m.TypeOf(a)) {
		return f.cmp(OpLogicalEqual, a, b)
	}
	return f.cmp(f.byKind(a, OpFOrdEqual, OpIEqual, OpIEqual), a, b)
}
func (f *Function) NotEqual(a, b ID) ID {
	if f.m.IsBool(f.m.TypeOf(a)) {
		return f.cmp(OpLogicalNotEqual, a, b)
	}
	return f.cmp(f.byKind(a, OpFUnordNotEqual, OpINotEqual, OpINotEqual), a, b)
}
func (f *Function) Less(a, b ID) ID {
	return f.cmp(f.byKind(a, OpFOrdLessThan, OpSLessThan, OpULessThan), a, b)
}
func (f *Function) LessEqual(a, b ID) ID {
	return f.cmp(f.byKind(a, OpFOrdLessThanEqual, OpSLessThanEqual, OpULessThanEqual), a, b)
}
func (f *Function) Greater(a, b ID) ID {
	return f.cmp(f.byKind(a, OpFOrdGreaterThan, OpSGreaterThan, OpUGreaterThan), a, b)
}
func (f *Function) GreaterEqual(a, b ID) ID {
	return f.cmp(f.byKind(a, OpFOrdGreaterThanEqual, OpSGreaterThanEqual, OpUGreaterThanEqual), a, b)
}

// IsNan and IsInf test floats component-wise.
func (f *Function) IsNan(a ID) ID { return f.Op(OpIsNan, f.m.boolLike(f.m.TypeOf(a)), uint32(a)) }
func (f *Function) IsInf(a ID) ID { return f.Op(OpIsInf, f.m.boolLike(f.m.TypeOf(a)), uint32(a)) }

// Select returns cond ? a : b (component-wise for a bool-vector cond). A
// scalar cond with vector operands is splatted before SPIR-V 1.4, which
// requires the condition to have as many components as the result.
func (f *Function) Select(cond, a, b ID) ID {
	t := f.m.TypeOf(a)
	if n := f.m.VectorSize(t); n > 1 && f.m.VectorSize(f.m.TypeOf(cond)) == 1 && f.m.version < Version1_4 {
		cond = f.Splat(cond, n)
	}
	return f.Op(OpSelect, t, uint32(cond), uint32(a), uint32(b))
}

// Bitcast reinterprets v's bits as type t (same total width).
func (f *Function) Bitcast(t, v ID) ID { return f.Op(OpBitcast, t, uint32(v)) }

// Convert converts v to numeric or bool type t with C semantics, choosing the
// opcode from the two types: float<->float FConvert; int->float by the source
// signedness; float->int by the destination signedness (out-of-range values
// are undefined, as in C: emitters that need saturation clamp first);
// int->int sign- or zero-extends by the source signedness and truncates; a
// bool becomes 0 or 1; a number becomes a bool by `!= 0` (NaN -> true). A
// conversion to v's own type returns v.
func (f *Function) Convert(t, v ID) ID {
	m := f.m
	src := m.TypeOf(v)
	switch {
	case src == t:
		return v
	case m.IsBool(src):
		return f.Select(v, m.ConstOf(t, 1), m.ConstOf(t, 0))
	case m.IsBool(t):
		return f.NotEqual(v, m.ConstOf(src, 0))
	case m.IsFloat(src) && m.IsFloat(t):
		return f.Op(OpFConvert, t, uint32(v))
	case m.IsFloat(t):
		return f.Op(pick(m.IsSigned(src), OpConvertSToF, OpConvertUToF), t, uint32(v))
	case m.IsFloat(src):
		return f.Op(pick(m.IsSigned(t), OpConvertFToS, OpConvertFToU), t, uint32(v))
	}
	return f.convertInt(t, v)
}

// convertInt changes width with the source's signedness (SConvert/UConvert
// keep that signedness in the result type) and then bitcasts if the
// destination's signedness differs.
func (f *Function) convertInt(t, v ID) ID {
	m := f.m
	src := m.TypeOf(v)
	if m.Width(src) != m.Width(t) {
		mid := m.likeWithWidth(src, m.Width(t))
		v = f.Op(pick(m.IsSigned(src), OpSConvert, OpUConvert), mid, uint32(v))
		src = mid
	}
	if src != t {
		v = f.Bitcast(t, v)
	}
	return v
}

// likeWithWidth is the integer type (scalar or vector) shaped like t with
// t's signedness and the given width.
func (m *Module) likeWithWidth(t ID, width int) ID {
	s := m.TypeInt(width, m.IsSigned(t))
	if n := m.VectorSize(t); n > 1 {
		return m.TypeVector(s, n)
	}
	return s
}

func pick(cond bool, a, b Op) Op {
	if cond {
		return a
	}
	return b
}

// Load reads through a pointer; the result type is the pointee. A load through a
// PhysicalStorageBuffer pointer carries the Aligned memory operand it requires.
func (f *Function) Load(ptr ID) ID {
	return f.Op(OpLoad, f.m.Pointee(f.m.TypeOf(ptr)), append([]uint32{uint32(ptr)}, f.memoryAccess(ptr)...)...)
}

// Store writes v through ptr (Aligned, as Load, through a PhysicalStorageBuffer
// pointer).
func (f *Function) Store(ptr, v ID) {
	f.Op(OpStore, 0, append([]uint32{uint32(ptr), uint32(v)}, f.memoryAccess(ptr)...)...)
}

// MaxAddressAlignment is the alignment every buffer reached by device address is
// assumed to start at: vkxla's arena aligns every tensor to at least 16 bytes.
const MaxAddressAlignment = 16

// memoryAccess is the memory operand a load or store through ptr needs: SPIR-V
// requires Aligned on every access through a PhysicalStorageBuffer pointer. The
// alignment is the pointee's std430 alignment capped at MaxAddressAlignment: an
// element sits at a multiple of its stride from the buffer's start, which is
// aligned to MaxAddressAlignment only (a dvec4 is 32 bytes).
func (f *Function) memoryAccess(ptr ID) []uint32 {
	t := f.m.TypeOf(ptr)
	if f.m.StorageClassOf(t) != StorageClassPhysicalStorageBuffer {
		return nil
	}
	return []uint32{uint32(MemoryAccessAligned), min(f.m.AlignOf(f.m.Pointee(t)), MaxAddressAlignment)}
}

// AccessChain returns a pointer into a composite: struct members are chosen
// by constant indices (as the spec requires), array and vector elements by
// any integer ids. The result pointer type is derived from base.
func (f *Function) AccessChain(base ID, indices ...ID) ID {
	m := f.m
	ptr := m.TypeOf(base)
	t := m.Pointee(ptr)
	for _, idx := range indices {
		t = m.elementType(t, idx)
	}
	result := m.TypePointer(m.StorageClassOf(ptr), t)
	return f.Op(OpAccessChain, result, append([]uint32{uint32(base)}, idWords(indices)...)...)
}

// elementType is the type reached by indexing composite type t with idx.
func (m *Module) elementType(t, idx ID) ID {
	info := m.typeInfoOf(t)
	switch info.op {
	case OpTypeVector, OpTypeArray, OpTypeRuntimeArray:
		return info.elem
	case OpTypeStruct:
		v, ok := m.constants[idx]
		if !ok || v >= uint64(len(info.members)) {
			m.failf("struct index %d must be a constant below %d", idx, len(info.members))
			return 0
		}
		return info.members[v]
	}
	m.failf("cannot index into %s", m.TypeName(t))
	return 0
}

// Member returns a pointer to member i of a block (push constants or a
// multi-member storage block).
func (f *Function) Member(b Block, i int) ID { return f.AccessChain(b.Var, f.m.U32(uint32(i))) }

// LoadMember reads member i of a block.
func (f *Function) LoadMember(b Block, i int) ID { return f.Load(f.Member(b, i)) }

// LoadBuiltIn reads a compute built-in (a uvec3 or a u32).
func (f *Function) LoadBuiltIn(b BuiltIn) ID { return f.Load(f.m.BuiltIn(b)) }

// BuiltInComponent reads component c (0 = x) of a uvec3 built-in such as
// GlobalInvocationId, as a u32.
func (f *Function) BuiltInComponent(b BuiltIn, c uint32) ID {
	return f.Load(f.AccessChain(f.m.BuiltIn(b), f.m.U32(c)))
}

// CompositeConstruct builds a vector, array or struct of type t.
func (f *Function) CompositeConstruct(t ID, parts ...ID) ID {
	return f.Op(OpCompositeConstruct, t, idWords(parts)...)
}

// CompositeExtract reads a component of a composite value by literal indices.
func (f *Function) CompositeExtract(v ID, indices ...uint32) ID {
	t := f.m.TypeOf(v)
	for _, i := range indices {
		t = f.m.literalElementType(t, i)
	}
	return f.Op(OpCompositeExtract, t, append([]uint32{uint32(v)}, indices...)...)
}

// CompositeInsert returns composite with the component at indices replaced by obj.
func (f *Function) CompositeInsert(obj, composite ID, indices ...uint32) ID {
	return f.Op(OpCompositeInsert, f.m.TypeOf(composite), append([]uint32{uint32(obj), uint32(composite)}, indices...)...)
}

func (m *Module) literalElementType(t ID, i uint32) ID {
	info := m.typeInfoOf(t)
	if info.op == OpTypeStruct {
		if int(i) >= len(info.members) {
			m.failf("struct member %d out of range", i)
			return 0
		}
		return info.members[i]
	}
	if info.op == OpTypeVector || info.op == OpTypeArray {
		return info.elem
	}
	m.failf("cannot extract from %s", m.TypeName(t))
	return 0
}

// VectorShuffle picks components of a and b (b's numbered after a's).
func (f *Function) VectorShuffle(a, b ID, components ...uint32) ID {
	t := f.m.TypeVector(f.m.ScalarType(f.m.TypeOf(a)), len(components))
	return f.Op(OpVectorShuffle, t, append([]uint32{uint32(a), uint32(b)}, components...)...)
}

// Splat makes a vector of n copies of scalar s.
func (f *Function) Splat(s ID, n int) ID {
	parts := make([]ID, n)
	for i := range parts {
		parts[i] = s
	}
	return f.CompositeConstruct(f.m.TypeVector(f.m.TypeOf(s), n), parts...)
}

// Dot is the dot product of two float vectors.
func (f *Function) Dot(a, b ID) ID {
	return f.Op(OpDot, f.m.ScalarType(f.m.TypeOf(a)), uint32(a), uint32(b))
}
