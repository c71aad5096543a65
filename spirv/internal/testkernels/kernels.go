// Package testkernels builds small compute kernels by hand with the spirv
// builder. The spirv tests validate every one of them for each Vulkan
// environment, and the tools benchmarks time SPIRV-Tools on the GEMM. Each
// kernel exercises a different corner of the builder; together they are the
// builder's executable documentation.
package testkernels

import "github.com/vkxla/vkxla/spirv"

// Kernel builds one kernel for a SPIR-V version.
type Kernel struct {
	Name  string
	Build func(v spirv.Version) *spirv.Module
}

// All lists every kernel.
var All = []Kernel{
	{"vector_add", VectorAdd},
	{"row_sum", RowSum},
	{"control_flow", ControlFlow},
	{"shared_reduce", SharedReduce},
	{"int64", Int64},
	{"float16", Float16},
	{"int8", Int8},
	{"subgroup", Subgroup},
	{"atomics", Atomics},
	{"float_atomics", FloatAtomics},
	{"conversions", Conversions},
	{"arithmetic", Arithmetic},
	{"storage_block", StorageBlock},
	{"vec4", Vec4},
	{"spec_size", SpecSize},
	{"redundant_loads", RedundantLoads},
	{"call", Call},
	{"gemm", GEMM},
	{"split_buffers", SplitBuffers},
	{"addressed_buffers", AddressedBuffers},
	{"texel_buffers", TexelBuffers},
}

// VectorAdd is c[i] = a[i] + b[i] for i < n, with n a push constant.
func VectorAdd(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32, u32 := m.TypeF32(), m.TypeU32()
	a := m.StorageBuffer("a", 0, 0, f32, spirv.ReadOnly)
	b := m.StorageBuffer("b", 0, 1, f32, spirv.ReadOnly)
	c := m.StorageBuffer("c", 0, 2, f32, spirv.WriteOnly)
	pc := m.PushConstants("params", spirv.Member{Name: "n", Type: u32})
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	k.If(k.Less(i, k.LoadMember(pc, 0)), func() {
		k.StoreElem(c, i, k.Add(k.LoadElem(a, i), k.LoadElem(b, i)))
	}, nil)
	return m
}

// RowSum is out[r] = sum_j in[r*cols + j]: a loop with a Function-variable
// accumulator.
func RowSum(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32, u32 := m.TypeF32(), m.TypeU32()
	in := m.StorageBuffer("in", 0, 0, f32, spirv.ReadOnly)
	out := m.StorageBuffer("out", 0, 1, f32, spirv.WriteOnly)
	pc := m.PushConstants("params", spirv.Member{Name: "rows", Type: u32}, spirv.Member{Name: "cols", Type: u32})
	k := m.Kernel("main", 64, 1, 1)
	row := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	rows, cols := k.LoadMember(pc, 0), k.LoadMember(pc, 1)
	k.If(k.Less(row, rows), func() {
		acc := k.Var(f32, "acc")
		k.Store(acc, m.ConstOf(f32, 0))
		base := k.Mul(row, cols)
		k.Range(m.U32(0), cols, m.U32(1), func(j spirv.ID) {
			k.Store(acc, k.Add(k.Load(acc), k.LoadElem(in, k.Add(base, j))))
		})
		k.StoreElem(out, row, k.Load(acc))
	}, nil)
	return m
}

// ControlFlow finds, per row, the index of the first negative element while
// skipping NaNs: While, Break, Continue, nested If/else and IfValue.
func ControlFlow(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32, i32, u32 := m.TypeF32(), m.TypeI32(), m.TypeU32()
	in := m.StorageBuffer("in", 0, 0, f32, spirv.ReadOnly)
	out := m.StorageBuffer("out", 0, 1, i32, spirv.WriteOnly)
	pc := m.PushConstants("params", spirv.Member{Name: "cols", Type: u32})
	k := m.Kernel("main", 32, 1, 1)
	row := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	cols := k.LoadMember(pc, 0)
	found := k.Var(i32, "found")
	j := k.Var(u32, "j")
	k.Store(found, m.I32(-1))
	k.Store(j, m.U32(0))
	k.While(func() spirv.ID { return k.Less(k.Load(j), cols) }, func() {
		idx := k.Load(j)
		k.Store(j, k.Add(idx, m.U32(1)))
		x := k.LoadElem(in, k.Add(k.Mul(row, cols), idx))
		k.If(k.IsNan(x), func() { k.Continue() }, nil)
		k.If(k.Less(x, m.F32(0)), func() {
			k.Store(found, k.Convert(i32, idx))
			k.Break()
		}, func() {
			k.If(k.Greater(x, m.F32(1e30)), func() { k.Break() }, nil)
		})
	})
	f := k.Load(found)
	clamped := k.IfValue(i32, k.Less(f, m.I32(0)),
		func() spirv.ID { return m.I32(-1) },
		func() spirv.ID { return k.Min(f, m.I32(1<<30)) })
	k.StoreElem(out, row, clamped)
	return m
}

// SharedReduce sums 64 elements per workgroup with a shared-memory tree and
// workgroup barriers.
func SharedReduce(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32, u32 := m.TypeF32(), m.TypeU32()
	in := m.StorageBuffer("in", 0, 0, f32, spirv.ReadOnly)
	out := m.StorageBuffer("out", 0, 1, f32, spirv.WriteOnly)
	pc := m.PushConstants("params", spirv.Member{Name: "n", Type: u32})
	tile := m.SharedArray("tile", f32, 64)
	k := m.Kernel("main", 64, 1, 1)
	gid := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	lid := k.BuiltInComponent(spirv.BuiltInLocalInvocationId, 0)
	wid := k.BuiltInComponent(spirv.BuiltInWorkgroupId, 0)
	x := k.IfValue(f32, k.Less(gid, k.LoadMember(pc, 0)),
		func() spirv.ID { return k.LoadElem(in, gid) },
		func() spirv.ID { return m.F32(0) })
	k.Store(k.AccessChain(tile, lid), x)
	k.WorkgroupBarrier()
	k.For(m.U32(32),
		func(s spirv.ID) spirv.ID { return k.Greater(s, m.U32(0)) },
		func(s spirv.ID) spirv.ID { return k.ShrL(s, m.U32(1)) },
		func(s spirv.ID) {
			k.If(k.Less(lid, s), func() {
				mine := k.AccessChain(tile, lid)
				k.Store(mine, k.Add(k.Load(mine), k.Load(k.AccessChain(tile, k.Add(lid, s)))))
			}, nil)
			k.WorkgroupBarrier()
		})
	k.If(k.Equal(lid, m.U32(0)), func() {
		k.StoreElem(out, wid, k.Load(k.AccessChain(tile, m.U32(0))))
	}, nil)
	return m
}

// Int64 does 64-bit arithmetic, a 64-bit constant above 2^32, index
// arithmetic in 64 bits and a 64-bit atomic.
func Int64(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	i64, u64, u32 := m.TypeInt(64, true), m.TypeInt(64, false), m.TypeU32()
	a := m.StorageBuffer("a", 0, 0, i64, spirv.ReadOnly)
	out := m.StorageBuffer("out", 0, 1, i64, 0)
	total := m.StorageBuffer("total", 0, 2, u64, 0)
	k := m.Kernel("main", 64, 1, 1)
	gid := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	wide := k.Convert(u64, gid)
	idx := k.Add(k.Mul(wide, m.ConstUint(u64, 1)), m.ConstUint(u64, 0))
	x := k.LoadElem(a, idx)
	y := k.Add(k.Mul(x, m.ConstInt(i64, -3)), m.ConstInt(i64, 1<<40))
	y = k.ShrA(y, m.ConstUint(u32, 2))
	k.StoreElem(out, idx, y)
	k.Atomic(spirv.OpAtomicIAdd, k.Element(total, m.U32(0)), k.Convert(u64, y))
	return m
}

// Float16 reads half floats, computes in f32 and f16, and writes halves.
func Float16(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f16, f32 := m.TypeFloat(16), m.TypeF32()
	in := m.StorageBuffer("in", 0, 0, f16, spirv.ReadOnly)
	out := m.StorageBuffer("out", 0, 1, f16, spirv.WriteOnly)
	pc := m.PushConstants("params", spirv.Member{Name: "scale", Type: f32}, spirv.Member{Name: "n", Type: m.TypeU32()})
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	k.If(k.Less(i, k.LoadMember(pc, 1)), func() {
		x := k.LoadElem(in, i)
		wide := k.GLSL(spirv.GLSLExp, k.Mul(k.Convert(f32, x), k.LoadMember(pc, 0)))
		half := k.Add(k.Convert(f16, wide), m.ConstFloat(f16, 0.5))
		k.StoreElem(out, i, k.GLSL(spirv.GLSLFClamp, half, m.ConstFloat(f16, -65504), m.ConstFloat(f16, 65504)))
	}, nil)
	return m
}

// Int8 reads signed bytes and 16-bit integers and writes unsigned bytes.
func Int8(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	i8, u8, i16 := m.TypeInt(8, true), m.TypeInt(8, false), m.TypeInt(16, true)
	a := m.StorageBuffer("a", 0, 0, i8, spirv.ReadOnly)
	b := m.StorageBuffer("b", 0, 1, i16, spirv.ReadOnly)
	out := m.StorageBuffer("out", 0, 2, u8, spirv.WriteOnly)
	pc := m.PushConstants("params", spirv.Member{Name: "bias", Type: i8}, spirv.Member{Name: "scale", Type: i16})
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	biased := k.Add(k.LoadElem(a, i), k.LoadMember(pc, 0))
	sum := k.Add(k.Mul(k.Convert(i16, biased), k.LoadMember(pc, 1)), k.LoadElem(b, i))
	sum = k.Max(sum, m.ConstInt(i16, 0))
	k.StoreElem(out, i, k.Convert(u8, k.Min(sum, m.ConstInt(i16, 255))))
	return m
}

// Subgroup reduces with subgroup arithmetic, shuffles, ballots and
// broadcasts, then one invocation per subgroup writes its partial sum.
func Subgroup(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32, u32 := m.TypeF32(), m.TypeU32()
	in := m.StorageBuffer("in", 0, 0, f32, spirv.ReadOnly)
	partial := m.StorageBuffer("partial", 0, 1, f32, spirv.WriteOnly)
	counts := m.StorageBuffer("counts", 0, 2, u32, 0)
	k := m.Kernel("main", 64, 1, 1)
	gid := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	wid := k.BuiltInComponent(spirv.BuiltInWorkgroupId, 0)
	sg := k.LoadBuiltIn(spirv.BuiltInSubgroupId)
	nsg := k.LoadBuiltIn(spirv.BuiltInNumSubgroups)
	lane := k.LoadBuiltIn(spirv.BuiltInSubgroupLocalInvocationId)
	x := k.LoadElem(in, gid)
	butterfly := k.Add(x, k.SubgroupShuffleXor(x, m.U32(1)))
	sum := k.SubgroupAdd(butterfly)
	top := k.SubgroupMax(lane)
	first := k.SubgroupBroadcastFirst(top)
	lane0 := k.SubgroupBroadcast(x, m.U32(0))
	positive := k.SubgroupBallot(k.Greater(x, m.F32(0)))
	size := k.LoadBuiltIn(spirv.BuiltInSubgroupSize)
	low := k.SubgroupMin(k.Add(k.SubgroupShuffle(x, m.U32(0)), k.SubgroupShuffleDown(x, m.U32(1))))
	k.If(k.LogicalAnd(k.SubgroupAll(k.IsNan(low)), k.LogicalNot(k.SubgroupAny(k.IsInf(low)))), func() {
		k.Unreachable() // the emitter's way to state a precondition
	}, nil)
	k.If(k.SubgroupElect(), func() {
		k.StoreElem(partial, k.Add(k.Mul(wid, nsg), sg), k.Add(sum, lane0))
		bits := k.GLSL(spirv.GLSLFindUMsb, k.CompositeExtract(positive, 0))
		k.Atomic(spirv.OpAtomicIAdd, k.Element(counts, m.U32(0)), k.Add(k.Add(first, size), k.Bitcast(u32, bits)))
	}, nil)
	return m
}

// Atomics uses storage-buffer and shared-memory atomics of every form.
func Atomics(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	u32, i32 := m.TypeU32(), m.TypeI32()
	buf := m.StorageBuffer("counters", 0, 0, u32, spirv.Coherent)
	ints := m.StorageBuffer("ints", 0, 1, i32, 0)
	shared := m.SharedArray("local_max", u32, 1)
	k := m.Kernel("main", 64, 1, 1)
	lid := k.BuiltInComponent(spirv.BuiltInLocalInvocationId, 0)
	gid := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	k.If(k.Equal(lid, m.U32(0)), func() { k.AtomicStore(k.AccessChain(shared, m.U32(0)), m.U32(0)) }, nil)
	k.WorkgroupBarrier()
	k.Atomic(spirv.OpAtomicUMax, k.AccessChain(shared, m.U32(0)), gid)
	k.WorkgroupBarrier()
	k.Atomic(spirv.OpAtomicIAdd, k.Element(buf, m.U32(0)), m.U32(1))
	old := k.AtomicCompareExchange(k.Element(buf, m.U32(1)), gid, m.U32(0))
	k.Atomic(spirv.OpAtomicExchange, k.Element(buf, m.U32(2)), old)
	k.Atomic(spirv.OpAtomicSMin, k.Element(ints, m.U32(0)), k.Bitcast(i32, gid))
	k.Atomic(spirv.OpAtomicOr, k.Element(buf, m.U32(3)), k.AtomicLoad(k.AccessChain(shared, m.U32(0))))
	return m
}

// FloatAtomics adds, mins and maxes f32 values atomically in a storage
// buffer and in shared memory (SPV_EXT_shader_atomic_float_add and
// _min_max).
func FloatAtomics(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32 := m.TypeF32()
	in := m.StorageBuffer("in", 0, 0, f32, spirv.ReadOnly)
	acc := m.StorageBuffer("acc", 0, 1, f32, 0)
	shared := m.SharedArray("partial", f32, 1)
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	x := k.LoadElem(in, i)
	k.Atomic(spirv.OpAtomicFAddEXT, k.AccessChain(shared, m.U32(0)), x)
	k.Atomic(spirv.OpAtomicFAddEXT, k.Element(acc, m.U32(0)), x)
	k.Atomic(spirv.OpAtomicFMinEXT, k.Element(acc, m.U32(1)), x)
	k.Atomic(spirv.OpAtomicFMaxEXT, k.Element(acc, m.U32(2)), x)
	return m
}

// Arithmetic applies every arithmetic, bitwise, comparison and min/max
// helper to scalars and vectors of each numeric kind, so that each opcode and
// inferred result type is validated.
func Arithmetic(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32, i32, u32 := m.TypeF32(), m.TypeI32(), m.TypeU32()
	types := []spirv.ID{u32, i32, m.TypeInt(64, true), m.TypeVector(i32, 2), f32, m.TypeFloat(64), m.TypeVector(f32, 4)}
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	for binding, t := range types {
		buf := m.StorageBuffer(m.TypeName(t), 0, uint32(binding), t, 0)
		a, b := k.LoadElem(buf, i), k.LoadElem(buf, k.Add(i, m.U32(1)))
		r := k.Rem(k.Div(k.Mul(k.Sub(k.Add(a, b), a), b), b), b)
		r = k.Abs(k.Max(k.Min(k.Neg(r), a), b))
		keep := k.LogicalOr(k.LessEqual(r, a), k.LogicalNot(k.GreaterEqual(r, b)))
		r = k.Select(k.LogicalAnd(keep, k.Equal(a, b)), r, a)
		if m.IsFloat(t) {
			r = floatOps(k, r, a, b)
		} else {
			r = intOps(k, r, a, b)
		}
		k.StoreElem(buf, i, r)
	}
	n := m.StorageBuffer("n", 0, uint32(len(types)), u32, spirv.WriteOnly)
	k.MemoryBarrier(spirv.ScopeDevice, spirv.MemorySemanticsAcquireRelease|spirv.MemorySemanticsUniformMemory)
	k.StoreElem(n, i, k.ArrayLength(n))
	return m
}

func intOps(k *spirv.Function, r, a, b spirv.ID) spirv.ID {
	r = k.IAdd(k.ISub(k.IMul(r, a), b), k.SNegate(a))
	r = k.Xor(k.Or(k.And(r, a), b), k.Not(a))
	r = k.ShrA(k.ShrL(k.Shl(r, b), b), b)
	r = k.SMod(k.SRem(k.SDiv(r, a), b), a)
	if !k.Module().IsSigned(k.Module().TypeOf(r)) { // UDiv and UMod need unsigned result types
		r = k.UMod(k.UDiv(r, a), b)
	}
	return k.Select(k.Compare(spirv.OpSGreaterThan, r, a), r, b)
}

func floatOps(k *spirv.Function, r, a, b spirv.ID) spirv.ID {
	r = k.FAdd(k.FSub(k.FMul(r, a), b), k.FNegate(a))
	r = k.FMod(k.FRem(k.FDiv(r, a), b), a)
	bad := k.LogicalOr(k.IsInf(r), k.Compare(spirv.OpFUnordNotEqual, r, r))
	return k.Select(bad, a, r)
}

// StorageBlock uses a storage buffer whose block holds a header (a count, a
// strided array) before its runtime array, and a specialization constant of
// 64 bits.
func StorageBlock(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32, u32, u64 := m.TypeF32(), m.TypeU32(), m.TypeInt(64, false)
	vec3 := m.TypeVector(f32, 3)
	blk := m.StorageBlock("table", 0, 0, 0,
		spirv.Member{Name: "count", Type: u32},
		spirv.Member{Name: "origin", Type: vec3},
		spirv.Member{Name: "weights", Type: m.TypeArrayStride(f32, 4, 4)},
		spirv.Member{Name: "points", Type: m.TypeRuntimeArray(vec3, m.ElementStride(vec3))})
	limit := m.SpecConstInt(u64, 7, 1<<33)
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	k.If(k.LogicalAnd(k.Less(i, k.LoadMember(blk, 0)), k.Less(k.Convert(u64, i), limit)), func() {
		p := k.AccessChain(blk.Var, m.U32(3), i)
		w := k.Load(k.AccessChain(blk.Var, m.U32(2), k.And(i, m.U32(3))))
		shifted := k.Add(k.Load(p), k.LoadMember(blk, 1))
		k.Store(p, k.Mul(shifted, k.Splat(w, 3)))
	}, nil)
	return m
}

// Conversions converts one value through every scalar type the builder
// knows, so that Convert's opcode choice is validated for each pair.
func Conversions(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	types := []spirv.ID{
		m.TypeInt(8, true), m.TypeInt(8, false), m.TypeInt(16, true), m.TypeInt(16, false),
		m.TypeI32(), m.TypeU32(), m.TypeInt(64, true), m.TypeInt(64, false),
		m.TypeFloat(16), m.TypeF32(), m.TypeFloat(64), m.TypeBool(),
	}
	f32 := m.TypeF32()
	in := m.StorageBuffer("in", 0, 0, f32, spirv.ReadOnly)
	out := m.StorageBuffer("out", 0, 1, f32, spirv.WriteOnly)
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	x := k.LoadElem(in, i)
	acc := m.F32(0)
	for _, from := range types {
		src := k.Convert(from, x)
		for _, to := range types {
			acc = k.Add(acc, k.Convert(f32, k.Convert(to, src)))
		}
	}
	k.StoreElem(out, i, acc)
	return m
}

// Vec4 works on vec4 elements: shuffles, extraction, dot products, fma and
// splats.
func Vec4(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32 := m.TypeF32()
	vec4 := m.TypeVector(f32, 4)
	a := m.StorageBuffer("a", 0, 0, vec4, spirv.ReadOnly|spirv.Restrict)
	out := m.StorageBuffer("out", 0, 1, vec4, spirv.WriteOnly|spirv.Restrict)
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	x := k.LoadElem(a, i)
	rev := k.VectorShuffle(x, x, 3, 2, 1, 0)
	d := k.Dot(x, rev)
	y := k.GLSL(spirv.GLSLFma, x, k.Splat(d, 4), m.ConstOf(vec4, 1))
	y = k.CompositeInsert(k.CompositeExtract(x, 0), y, 3)
	y = k.Select(k.Less(y, m.ConstOf(vec4, 0)), m.ConstOf(vec4, 0), y)
	y = k.Select(k.Greater(d, m.F32(0)), y, rev) // a scalar condition on vectors
	k.StoreElem(out, i, k.GLSL(spirv.GLSLSqrt, y))
	return m
}

// TexelBuffers reads texel i of a float and of an integer uniform texel buffer and
// stores their sum: out[i] = a[i] + float(b[i]).
func TexelBuffers(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32, u32 := m.TypeF32(), m.TypeU32()
	vec4 := m.TypeVector(f32, 4)
	out := m.StorageBuffer("out", 0, 0, vec4, spirv.WriteOnly)
	a := m.UniformTexelBuffer("a", 0, f32)
	b := m.UniformTexelBuffer("b", 0, u32)
	m.Decorate(a.Var, spirv.DecorationBinding, 1)
	m.Decorate(b.Var, spirv.DecorationBinding, 2)
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	k.StoreElem(out, i, k.FAdd(k.Fetch(a, i), k.Convert(vec4, k.Fetch(b, i))))
	return m
}

// SpecSize takes its workgroup size and a scale factor from specialization
// constants.
func SpecSize(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32 := m.TypeF32()
	_, xyz := m.WorkgroupSizeSpec([3]uint32{0, 1, 2}, [3]uint32{128, 1, 1})
	scale := m.SpecConstFloat(f32, 3, 2.0)
	enabled := m.SpecConstBool(4, true)
	buf := m.StorageBuffer("data", 0, 0, f32, 0)
	k := m.Kernel("main", 1, 1, 1)
	wid := k.BuiltInComponent(spirv.BuiltInWorkgroupId, 0)
	lid := k.BuiltInComponent(spirv.BuiltInLocalInvocationId, 0)
	i := k.Add(k.Mul(wid, xyz[0]), lid)
	k.If(enabled, func() { k.StoreElem(buf, i, k.Mul(k.LoadElem(buf, i), scale)) }, nil)
	return m
}

// RedundantLoads reloads the same push constant and buffer element and goes
// through a Function variable: the optimiser should shrink it.
func RedundantLoads(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32, u32 := m.TypeF32(), m.TypeU32()
	buf := m.StorageBuffer("data", 0, 0, f32, 0)
	pc := m.PushConstants("params", spirv.Member{Name: "n", Type: u32}, spirv.Member{Name: "alpha", Type: f32})
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	tmp := k.Var(f32, "tmp")
	k.If(k.Less(i, k.LoadMember(pc, 0)), func() {
		k.Store(tmp, k.LoadElem(buf, i))
		for range 4 {
			k.Store(tmp, k.Add(k.Load(tmp), k.Mul(k.LoadMember(pc, 1), k.LoadElem(buf, i))))
		}
		k.StoreElem(buf, i, k.Load(tmp))
	}, nil)
	return m
}

// Call moves y = a*x + y into a helper function with parameters and a
// return value, called from the kernel.
func Call(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f32 := m.TypeF32()
	axpy := m.Function("axpy", f32, f32, f32, f32)
	axpy.ReturnValue(axpy.GLSL(spirv.GLSLFma, axpy.Param(0), axpy.Param(1), axpy.Param(2)))
	x := m.StorageBuffer("x", 0, 0, f32, spirv.ReadOnly)
	y := m.StorageBuffer("y", 0, 1, f32, 0)
	pc := m.PushConstants("params", spirv.Member{Name: "a", Type: f32})
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	k.StoreElem(y, i, k.Call(axpy, k.LoadMember(pc, 0), k.LoadElem(x, i), k.LoadElem(y, i)))
	return m
}

// GEMM is a 16x16 shared-memory tiled C = A·B for row-major f32 matrices
// with M, N, K push constants: the size of kernel the compiler will emit most.
func GEMM(v spirv.Version) *spirv.Module {
	const tile = 16
	m := spirv.NewModule(v)
	f32, u32 := m.TypeF32(), m.TypeU32()
	a := m.StorageBuffer("A", 0, 0, f32, spirv.ReadOnly)
	b := m.StorageBuffer("B", 0, 1, f32, spirv.ReadOnly)
	c := m.StorageBuffer("C", 0, 2, f32, spirv.WriteOnly)
	pc := m.PushConstants("dims", spirv.Member{Name: "M", Type: u32}, spirv.Member{Name: "N", Type: u32}, spirv.Member{Name: "K", Type: u32})
	as := m.SharedArray("As", f32, tile*tile)
	bs := m.SharedArray("Bs", f32, tile*tile)
	k := m.Kernel("main", tile, tile, 1)
	lx := k.BuiltInComponent(spirv.BuiltInLocalInvocationId, 0)
	ly := k.BuiltInComponent(spirv.BuiltInLocalInvocationId, 1)
	col := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	row := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 1)
	dimM, dimN, dimK := k.LoadMember(pc, 0), k.LoadMember(pc, 1), k.LoadMember(pc, 2)
	acc := k.Var(f32, "acc")
	k.Store(acc, m.F32(0))
	zero := m.F32(0)
	slot := k.Add(k.Mul(ly, m.U32(tile)), lx)
	k.Range(m.U32(0), dimK, m.U32(tile), func(t spirv.ID) {
		ak := k.Add(t, lx)
		av := k.IfValue(f32, k.LogicalAnd(k.Less(row, dimM), k.Less(ak, dimK)),
			func() spirv.ID { return k.LoadElem(a, k.Add(k.Mul(row, dimK), ak)) },
			func() spirv.ID { return zero })
		k.Store(k.AccessChain(as, slot), av)
		bk := k.Add(t, ly)
		bv := k.IfValue(f32, k.LogicalAnd(k.Less(bk, dimK), k.Less(col, dimN)),
			func() spirv.ID { return k.LoadElem(b, k.Add(k.Mul(bk, dimN), col)) },
			func() spirv.ID { return zero })
		k.Store(k.AccessChain(bs, slot), bv)
		k.WorkgroupBarrier()
		k.Range(m.U32(0), m.U32(tile), m.U32(1), func(i spirv.ID) {
			x := k.Load(k.AccessChain(as, k.Add(k.Mul(ly, m.U32(tile)), i)))
			y := k.Load(k.AccessChain(bs, k.Add(k.Mul(i, m.U32(tile)), lx)))
			k.Store(acc, k.GLSL(spirv.GLSLFma, x, y, k.Load(acc)))
		})
		k.WorkgroupBarrier()
	})
	k.If(k.LogicalAnd(k.Less(row, dimM), k.Less(col, dimN)), func() {
		k.StoreElem(c, k.Add(k.Mul(row, dimN), col), k.Load(acc))
	}, nil)
	return m
}

// SplitBuffers is y[i] = x[i] + 1 (u8 x, f32 y) with both bound as three bindings
// each (pieces of 1024 elements), a vec4 view of y's pieces and an atomic add into a
// split u32 buffer: every access picks its binding by element index.
func SplitBuffers(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	u8, f32, u32 := m.TypeInt(8, false), m.TypeF32(), m.TypeU32()
	x := m.SplitStorageBuffer("x", 0, 0, 3, 1024, u8, spirv.ReadOnly)
	y := m.SplitStorageBuffer("y", 0, 3, 3, 1024, f32, 0)
	hist := m.SplitStorageBuffer("hist", 0, 6, 2, 256, u32, 0)
	k := m.Kernel("main", 64, 1, 1)
	y4 := k.View(y, "y_vec4", m.TypeVector(f32, 4))
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	xi := k.LoadElem(x, i)
	k.StoreElem(y, i, k.FAdd(k.Convert(f32, xi), m.ConstFloat(f32, 1)))
	k.AtomicElem(spirv.OpAtomicIAdd, hist, k.Convert(u32, xi), m.U32(1))
	k.StoreElem(y4, i, k.Splat(k.LoadElem(y, i), 4))
	return m
}

// AddressedBuffers is y[i] = x[i]*2 with x (f64) and y (u16) reached through the
// device addresses in a u64 table binding, a vec4 view of x, and an atomic on a
// third addressed buffer: PhysicalStorageBuffer64 pointers made in the entry block
// even when the buffer is first used inside a branch.
func AddressedBuffers(v spirv.Version) *spirv.Module {
	m := spirv.NewModule(v)
	f64, u16, u32, u64 := m.TypeFloat(64), m.TypeInt(16, false), m.TypeU32(), m.TypeInt(64, false)
	table := m.StorageBuffer("table", 0, 0, u64, spirv.ReadOnly)
	k := m.Kernel("main", 64, 1, 1)
	i := k.BuiltInComponent(spirv.BuiltInGlobalInvocationId, 0)
	k.If(k.Less(i, m.U32(1000)), func() {
		x := k.AddressedBuffer("x", table, 0, f64)
		y := k.AddressedBuffer("y", table, 1, u16)
		count := k.AddressedBuffer("count", table, 2, u32)
		x4 := k.View(x, "x_vec4", m.TypeVector(f64, 4))
		v := k.FMul(k.LoadElem(x, i), m.ConstFloat(f64, 2))
		k.StoreElem(y, i, k.Convert(u16, v))
		k.AtomicElem(spirv.OpAtomicIAdd, count, m.U32(0), m.U32(1))
		k.StoreElem(x4, i, k.Splat(v, 4))
	}, nil)
	return m
}
