package spirv

// Barriers, atomics and subgroup operations. Scopes and memory semantics are
// <id> operands in SPIR-V; these helpers make the u32 constants.

// ControlBarrier waits for all invocations in exec scope and orders memory
// per mem and sem.
func (f *Function) ControlBarrier(exec, mem Scope, sem MemorySemantics) {
	m := f.m
	f.Op(OpControlBarrier, 0, uint32(m.U32(uint32(exec))), uint32(m.U32(uint32(mem))), uint32(m.U32(uint32(sem))))
}

// MemoryBarrier orders memory accesses without waiting for other invocations.
func (f *Function) MemoryBarrier(mem Scope, sem MemorySemantics) {
	m := f.m
	f.Op(OpMemoryBarrier, 0, uint32(m.U32(uint32(mem))), uint32(m.U32(uint32(sem))))
}

// WorkgroupBarrier is GLSL's barrier(): every invocation of the workgroup
// arrives, and shared-memory writes before it are visible after it.
func (f *Function) WorkgroupBarrier() {
	f.ControlBarrier(ScopeWorkgroup, ScopeWorkgroup,
		MemorySemanticsAcquireRelease|MemorySemanticsWorkgroupMemory)
}

// atomicScope is the narrowest scope that covers everyone who can see the
// memory behind ptr: the workgroup for shared memory, else the device.
func (f *Function) atomicScope(ptr ID) ID {
	if f.m.StorageClassOf(f.m.TypeOf(ptr)) == StorageClassWorkgroup {
		return f.m.U32(uint32(ScopeWorkgroup))
	}
	return f.m.U32(uint32(ScopeDevice))
}

// Atomic applies a read-modify-write atomic (OpAtomicIAdd, OpAtomicUMax,
// OpAtomicExchange, OpAtomicFAddEXT, ...) with relaxed ordering and returns
// the old value. Capabilities for 64-bit and float atomics are added.
func (f *Function) Atomic(op Op, ptr, value ID) ID {
	f.needAtomic(op, f.m.TypeOf(value))
	relaxed := f.m.U32(uint32(MemorySemanticsRelaxed))
	return f.Op(op, f.m.TypeOf(value), uint32(ptr), uint32(f.atomicScope(ptr)), uint32(relaxed), uint32(value))
}

// AtomicCompareExchange stores value if *ptr == comparator and returns the
// old value (relaxed ordering).
func (f *Function) AtomicCompareExchange(ptr, value, comparator ID) ID {
	t := f.m.TypeOf(value)
	f.needAtomic(OpAtomicCompareExchange, t)
	relaxed := uint32(f.m.U32(uint32(MemorySemanticsRelaxed)))
	return f.Op(OpAtomicCompareExchange, t, uint32(ptr), uint32(f.atomicScope(ptr)), relaxed, relaxed, uint32(value), uint32(comparator))
}

// AtomicLoad reads *ptr atomically (relaxed).
func (f *Function) AtomicLoad(ptr ID) ID {
	t := f.m.Pointee(f.m.TypeOf(ptr))
	f.needAtomic(OpAtomicLoad, t)
	relaxed := f.m.U32(uint32(MemorySemanticsRelaxed))
	return f.Op(OpAtomicLoad, t, uint32(ptr), uint32(f.atomicScope(ptr)), uint32(relaxed))
}

// AtomicStore writes *ptr atomically (relaxed).
func (f *Function) AtomicStore(ptr, value ID) {
	f.needAtomic(OpAtomicStore, f.m.TypeOf(value))
	relaxed := f.m.U32(uint32(MemorySemanticsRelaxed))
	f.Op(OpAtomicStore, 0, uint32(ptr), uint32(f.atomicScope(ptr)), uint32(relaxed), uint32(value))
}

// needAtomic declares what an atomic on type t needs: Int64Atomics for 64-bit
// integers, and the float-atomic extension and capability for float add,
// min and max.
func (f *Function) needAtomic(op Op, t ID) {
	m := f.m
	if m.IsInt(t) && m.Width(t) == 64 {
		m.Capability(CapabilityInt64Atomics)
	}
	if !m.IsFloat(t) {
		return
	}
	w := m.Width(t)
	switch op {
	case OpAtomicFAddEXT:
		m.Extension(pickString(w == 16, "SPV_EXT_shader_atomic_float16_add", "SPV_EXT_shader_atomic_float_add"))
		m.Capability(map[int]Capability{16: CapabilityAtomicFloat16AddEXT, 32: CapabilityAtomicFloat32AddEXT, 64: CapabilityAtomicFloat64AddEXT}[w])
	case OpAtomicFMinEXT, OpAtomicFMaxEXT:
		m.Extension("SPV_EXT_shader_atomic_float_min_max")
		m.Capability(map[int]Capability{16: CapabilityAtomicFloat16MinMaxEXT, 32: CapabilityAtomicFloat32MinMaxEXT, 64: CapabilityAtomicFloat64MinMaxEXT}[w])
	}
}

func pickString(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// subgroupCapability is the capability each group of subgroup opcodes needs
// beyond GroupNonUniform.
func subgroupCapability(op Op) Capability {
	switch op {
	case OpGroupNonUniformElect:
		return CapabilityGroupNonUniform
	case OpGroupNonUniformAll, OpGroupNonUniformAny, OpGroupNonUniformAllEqual:
		return CapabilityGroupNonUniformVote
	case OpGroupNonUniformBroadcast, OpGroupNonUniformBroadcastFirst, OpGroupNonUniformBallot,
		OpGroupNonUniformInverseBallot, OpGroupNonUniformBallotBitExtract, OpGroupNonUniformBallotBitCount,
		OpGroupNonUniformBallotFindLSB, OpGroupNonUniformBallotFindMSB:
		return CapabilityGroupNonUniformBallot
	case OpGroupNonUniformShuffle, OpGroupNonUniformShuffleXor:
		return CapabilityGroupNonUniformShuffle
	case OpGroupNonUniformShuffleUp, OpGroupNonUniformShuffleDown:
		return CapabilityGroupNonUniformShuffleRelative
	case OpGroupNonUniformQuadBroadcast, OpGroupNonUniformQuadSwap:
		return CapabilityGroupNonUniformQuad
	}
	return CapabilityGroupNonUniformArithmetic
}

// subgroup emits a subgroup instruction at Subgroup scope with result type t.
func (f *Function) subgroup(op Op, t ID, operands ...uint32) ID {
	f.m.Capability(CapabilityGroupNonUniform)
	f.m.Capability(subgroupCapability(op))
	scope := uint32(f.m.U32(uint32(ScopeSubgroup)))
	return f.Op(op, t, append([]uint32{scope}, operands...)...)
}

// SubgroupOp applies an arithmetic subgroup operation (OpGroupNonUniformFAdd,
// OpGroupNonUniformUMax, ...) as a Reduce, InclusiveScan or ExclusiveScan.
func (f *Function) SubgroupOp(op Op, group GroupOperation, v ID) ID {
	return f.subgroup(op, f.m.TypeOf(v), uint32(group), uint32(v))
}

// SubgroupAdd, SubgroupMin and SubgroupMax reduce over the subgroup, with the
// opcode chosen by v's type.
func (f *Function) SubgroupAdd(v ID) ID {
	return f.SubgroupOp(f.byKind(v, OpGroupNonUniformFAdd, OpGroupNonUniformIAdd, OpGroupNonUniformIAdd), GroupOperationReduce, v)
}
func (f *Function) SubgroupMin(v ID) ID {
	return f.SubgroupOp(f.byKind(v, OpGroupNonUniformFMin, OpGroupNonUniformSMin, OpGroupNonUniformUMin), GroupOperationReduce, v)
}
func (f *Function) SubgroupMax(v ID) ID {
	return f.SubgroupOp(f.byKind(v, OpGroupNonUniformFMax, OpGroupNonUniformSMax, OpGroupNonUniformUMax), GroupOperationReduce, v)
}

// SubgroupElect is true in exactly one active invocation of the subgroup.
func (f *Function) SubgroupElect() ID { return f.subgroup(OpGroupNonUniformElect, f.m.TypeBool()) }

// SubgroupBroadcast returns v from the invocation lane (a constant before
// SPIR-V 1.5, dynamically uniform from 1.5).
func (f *Function) SubgroupBroadcast(v, lane ID) ID {
	return f.subgroup(OpGroupNonUniformBroadcast, f.m.TypeOf(v), uint32(v), uint32(lane))
}

// SubgroupBroadcastFirst returns v from the lowest active invocation.
func (f *Function) SubgroupBroadcastFirst(v ID) ID {
	return f.subgroup(OpGroupNonUniformBroadcastFirst, f.m.TypeOf(v), uint32(v))
}

// SubgroupShuffle returns v from invocation lane (any id).
func (f *Function) SubgroupShuffle(v, lane ID) ID {
	return f.subgroup(OpGroupNonUniformShuffle, f.m.TypeOf(v), uint32(v), uint32(lane))
}

// SubgroupShuffleXor returns v from invocation (own id XOR mask): the
// butterfly step of a tree reduction.
func (f *Function) SubgroupShuffleXor(v, mask ID) ID {
	return f.subgroup(OpGroupNonUniformShuffleXor, f.m.TypeOf(v), uint32(v), uint32(mask))
}

// SubgroupShuffleDown returns v from invocation (own id + delta).
func (f *Function) SubgroupShuffleDown(v, delta ID) ID {
	return f.subgroup(OpGroupNonUniformShuffleDown, f.m.TypeOf(v), uint32(v), uint32(delta))
}

// SubgroupBallot returns the uvec4 mask of invocations where pred is true.
func (f *Function) SubgroupBallot(pred ID) ID {
	return f.subgroup(OpGroupNonUniformBallot, f.m.TypeVector(f.m.TypeU32(), 4), uint32(pred))
}

// SubgroupAll and SubgroupAny vote over the active invocations.
func (f *Function) SubgroupAll(pred ID) ID {
	return f.subgroup(OpGroupNonUniformAll, f.m.TypeBool(), uint32(pred))
}
func (f *Function) SubgroupAny(pred ID) ID {
	return f.subgroup(OpGroupNonUniformAny, f.m.TypeBool(), uint32(pred))
}
