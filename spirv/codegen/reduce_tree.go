package codegen

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// The workgroup tree reduction, for a reduce at a kernel's root whose reduced extent
// is large. Each workgroup reduces one output element (or one chunk of it): every
// invocation folds a strided share of the reduced elements, the shares are combined
// in shared memory by a tree of halving steps (or, for a plain 32-bit integer or f32
// add or integer max/min reducer, by subgroup arithmetic and one pass over the
// subgroup results), and invocation 0 applies the init value once and stores. When
// the extent is very large the output element is split into chunks reduced into a
// scratch buffer by a first dispatch and combined by a second, so that no
// invocation loops too long (and none exceeds lavapipe's loop limiter).
//
// The order of combination differs from cpuref's sequential order, so float sums
// agree within a tolerance rather than exactly; integer results are exact.

const (
	treeThreshold = 1024 // reduced extent from which the tree is used
	treePerThread = 64   // elements each invocation folds per chunk
)

func useTreeReduce(root *hlo.Instruction, t Target) bool {
	if root.Op != hlo.OpReduce {
		return false
	}
	x := root.Operands[0]
	r := int64(1)
	for _, d := range root.Attrs.Dimensions {
		r *= x.Shape.Dims[d]
	}
	return r >= treeThreshold
}

// treeLocal is the workgroup size: 256 or less, a power of two, within the target's
// limits and with n shared arrays of elements of size bytes fitting shared memory.
func treeLocal(t Target, n, size int) uint32 {
	l := uint32(256)
	// Vulkan guarantees 128 invocations and 16 KiB of shared memory; unset
	// (zero) limits are taken as those minimums.
	maxInv, maxX := t.MaxWorkgroupInvocations, t.MaxWorkgroupSize[0]
	if maxInv == 0 {
		maxInv = 128
	}
	if maxX == 0 {
		maxX = 128
	}
	if t.MaxSharedMemory == 0 {
		t.MaxSharedMemory = 16 << 10
	}
	for l > 1 && (l > maxInv || l > maxX ||
		(t.MaxSharedMemory > 0 && int64(l)*int64(n*size) > int64(t.MaxSharedMemory))) {
		l /= 2
	}
	return l
}

// treeSpec describes one tree-reduction dispatch.
type treeSpec struct {
	name   string
	n      int64 // output elements
	parts  int64 // chunks per output element
	total  int64 // reduced elements per output element
	chunk  int64 // elements per chunk (the last may be shorter)
	init   bool  // apply the init values (the final dispatch)
	dtypes []hlo.DType
	// source emits the reduced values j (in [0, total)) of output element e.
	source func(g *gen, k *kernel, e, j spirv.ID) []spirv.ID
	// dest returns the buffers and element index that chunk p of output e goes to.
	dest func(k *kernel, e, p spirv.ID) ([]spirv.Buffer, spirv.ID)
	bind func(k *kernel) // binds the destination buffers
}

// treeSizes is how a tree reduction splits its work: Lower and Facts share it.
type treeSizes struct {
	inputs               []*hlo.Instruction
	dims, sizes, outDims []int64
	dtypes               []hlo.DType
	local                uint32
	total, chunk, parts  int64 // parts: chunks per output element
}

func (l *lowering) treeSizes() treeSizes {
	root := l.c.Root
	n := len(root.Operands) / 2
	ts := treeSizes{inputs: root.Operands[:n], dims: sortedDims(root.Attrs.Dimensions), dtypes: make([]hlo.DType, n)}
	for d, size := range ts.inputs[0].Shape.Dims {
		if containsInt(ts.dims, int64(d)) {
			ts.sizes = append(ts.sizes, size)
		} else {
			ts.outDims = append(ts.outDims, size)
		}
	}
	maxSize := 4 // registers are at least 32-bit wide (f16 and bf16 are f32)
	for i, in := range ts.inputs {
		ts.dtypes[i] = in.Shape.DType
		maxSize = max(maxSize, in.Shape.DType.Size())
	}
	ts.local = treeLocal(l.t, n, maxSize)
	ts.total = product(ts.sizes)
	parts := max(1, ts.total/(int64(ts.local)*treePerThread))
	ts.chunk = (ts.total + parts - 1) / parts
	ts.parts = (ts.total + ts.chunk - 1) / ts.chunk
	return ts
}

func (l *lowering) lowerTreeReduce() error {
	ts := l.treeSizes()
	inputs, dims, sizes, outDims, dtypes, local := ts.inputs, ts.dims, ts.sizes, ts.outDims, ts.dtypes, ts.local
	n, x, total, chunk := len(inputs), inputs[0], ts.total, ts.chunk
	var outs []spirv.Buffer
	final := treeSpec{name: "reduce", n: product(outDims), parts: ts.parts,
		total: total, chunk: chunk, init: true, dtypes: dtypes,
		source: func(g *gen, k *kernel, e, j spirv.ID) []spirv.ID {
			idx := scatterIndex(x.Shape.Rank(), dims, k.delinearize(j, sizes), k.delinearize(e, outDims))
			vals := make([]spirv.ID, n)
			for i, in := range inputs {
				vals[i] = g.emit(in, idx)
			}
			return vals
		},
		bind: func(k *kernel) { outs = l.bindOutputs(k) },
		dest: func(k *kernel, e, _ spirv.ID) ([]spirv.Buffer, spirv.ID) { return outs, e },
	}
	if final.parts == 1 {
		return l.treeKernel(final, local)
	}
	return l.treeTwoPass(final, local, func(k *kernel) { outs = l.bindOutputs(k) })
}

// treeTwoPass splits each output element into final.parts chunks: a first dispatch
// reduces every chunk into a scratch buffer (no init), a second reduces the chunks
// of each output element and applies the init values.
func (l *lowering) treeTwoPass(final treeSpec, local uint32, bindOutputs func(k *kernel)) error {
	first := l.p.scratchIndex()
	for _, dt := range final.dtypes {
		l.p.Scratch = append(l.p.Scratch, final.n*final.parts*int64(dt.Size()))
	}
	parts := final.parts
	var partial []spirv.Buffer
	bindPartial := func(k *kernel, access spirv.Access) {
		partial = nil
		for i, dt := range final.dtypes {
			partial = append(partial, k.bind(Arg{Kind: ArgScratch, Index: first + i}, dt, access))
		}
	}
	pass1 := final
	pass1.name, pass1.init = "reduce_partial", false
	pass1.bind = func(k *kernel) { bindPartial(k, 0) }
	pass1.dest = func(k *kernel, e, p spirv.ID) ([]spirv.Buffer, spirv.ID) {
		return partial, k.f.IAdd(k.f.IMul(e, k.ic(parts)), p)
	}
	if err := l.treeKernel(pass1, local); err != nil {
		return err
	}
	pass2 := final
	pass2.total, pass2.parts, pass2.chunk = parts, 1, parts
	pass2.bind = func(k *kernel) {
		bindPartial(k, spirv.ReadOnly)
		bindOutputs(k)
	}
	pass2.source = func(g *gen, k *kernel, e, j spirv.ID) []spirv.ID {
		at := k.f.IAdd(k.f.IMul(e, k.ic(parts)), j)
		vals := make([]spirv.ID, len(partial))
		for i, dt := range final.dtypes {
			vals[i] = k.load(partial[i], at, dt)
		}
		return vals
	}
	return l.treeKernel(pass2, local)
}

// scratchIndex is the index the next scratch buffer will have.
func (p *Program) scratchIndex() int { return len(p.Scratch) }

func containsInt(xs []int64, v int64) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// treeKernel emits one tree-reduction dispatch: a workgroup per (output element,
// chunk), grid-striding when there are more than the grid holds.
func (l *lowering) treeKernel(s treeSpec, local uint32) error {
	k := l.newKernel(s.name, local)
	s.bind(k)
	g := l.kernelGen(k)
	f := k.f
	items := s.n * s.parts
	if items == 0 {
		return nil
	}
	groups := k.grid(items)
	numGroups := int64(groups[0]) * int64(groups[1])
	lid := k.toIndex(f.BuiltInComponent(spirv.BuiltInLocalInvocationId, 0))
	wg, _ := k.linearGroup()
	sub := subgroupReducer(l.c.Root.Called[0], s.dtypes, l.t)
	shared := make([]spirv.ID, len(s.dtypes))
	for i, dt := range s.dtypes {
		shared[i] = k.m.SharedArray("partial", k.regType(dt), local)
	}
	k.countLoop((items+numGroups-1)/numGroups, func() {
		f.Range(wg, k.ic(items), k.ic(numGroups), func(w spirv.ID) {
			g.scoped(func() { l.treeItem(g, s, sub, shared, lid, w, local) })
		})
	})
	return l.add(k, groups)
}

// treeItem reduces item w (output element e, chunk p) with the whole workgroup.
func (l *lowering) treeItem(g *gen, s treeSpec, sub *subgroupOp, shared []spirv.ID, lid, w spirv.ID, local uint32) {
	k, f := g.k, g.k.f
	red := l.c.Root.Called[0]
	e, p := w, k.ic(0)
	if s.parts > 1 {
		e, p = f.SDiv(w, k.ic(s.parts)), f.SRem(w, k.ic(s.parts))
	}
	start := f.IMul(p, k.ic(s.chunk))
	length := f.ISub(k.ic(s.total), start)
	length = f.Select(f.Less(length, k.ic(s.chunk)), length, k.ic(s.chunk))
	accs := l.threadFold(g, k, s, sub, e, start, length, lid, local)
	var total []spirv.ID
	if sub != nil {
		total = l.subgroupCombine(k, sub, accs, shared, lid, local)
	} else {
		total = l.sharedTree(g, k, red, accs, shared, lid, length, local)
	}
	f.If(f.Equal(lid, k.ic(0)), func() {
		g.scoped(func() {
			vals := make([]spirv.ID, len(total))
			for i, t := range total {
				vals[i] = f.Load(t)
			}
			if s.init { // the init values, applied once, first (as cpuref's fold)
				n := len(vals)
				init := make([]spirv.ID, n)
				for i := range init {
					init[i] = g.emit(l.c.Root.Operands[n+i], scalarIndex)
				}
				vals = g.call(red, append(init, vals...))
			}
			bufs, at := s.dest(k, e, p)
			for i, v := range vals {
				k.store(bufs[i], at, v, s.dtypes[i])
			}
		})
	}, nil)
	f.WorkgroupBarrier() // the next item reuses the shared arrays
}

// threadFold folds the invocation's share of a chunk (elements lid, lid+local, …
// below length) into Function variables, which it returns. Invocations without
// elements keep the reducer's identity when the subgroup path needs one, else an
// unused zero.
func (l *lowering) threadFold(g *gen, k *kernel, s treeSpec, sub *subgroupOp, e, start, length, lid spirv.ID, local uint32) []spirv.ID {
	f := k.f
	red := l.c.Root.Called[0]
	accs := make([]spirv.ID, len(s.dtypes))
	for i, dt := range s.dtypes {
		init := k.zero(dt)
		if sub != nil {
			init = sub.identity(k, dt)
		}
		accs[i] = k.variable(k.regType(dt), init, "acc")
	}
	f.If(f.Less(lid, length), func() {
		g.scoped(func() {
			first := s.source(g, k, e, f.IAdd(start, lid))
			for i, a := range accs {
				f.Store(a, first[i])
			}
		})
		steps := (s.chunk + int64(local) - 1) / int64(local)
		k.countLoop(steps, func() {
			f.Range(f.IAdd(lid, k.ic(int64(local))), length, k.ic(int64(local)), func(j spirv.ID) {
				g.scoped(func() {
					vals := s.source(g, k, e, f.IAdd(start, j))
					cur := make([]spirv.ID, len(accs))
					for i, a := range accs {
						cur[i] = f.Load(a)
					}
					res := g.call(red, append(cur, vals...))
					for i, a := range accs {
						f.Store(a, res[i])
					}
				})
			})
		})
	}, nil)
	return accs
}

// sharedTree combines the invocations' values in shared memory: at each halving step
// s, slot lid takes f(slot lid, slot lid+s) when the partner holds data (lid+s <
// length). It returns Function variables holding the result (valid in invocation 0).
func (l *lowering) sharedTree(g *gen, k *kernel, red *hlo.Computation, accs, shared []spirv.ID, lid, length spirv.ID, local uint32) []spirv.ID {
	f := k.f
	slot := func(i int, at spirv.ID) spirv.ID { return f.AccessChain(shared[i], at) }
	for i, a := range accs {
		f.Store(slot(i, lid), f.Load(a))
	}
	f.WorkgroupBarrier()
	for step := int64(local) / 2; step >= 1; step /= 2 {
		partner := f.IAdd(lid, k.ic(step))
		f.If(f.LogicalAnd(f.Less(lid, k.ic(step)), f.Less(partner, length)), func() {
			g.scoped(func() {
				var args []spirv.ID
				for i := range shared {
					args = append(args, f.Load(slot(i, lid)))
				}
				for i := range shared {
					args = append(args, f.Load(slot(i, partner)))
				}
				res := g.call(red, args)
				for i := range shared {
					f.Store(slot(i, lid), res[i])
				}
			})
		}, nil)
		f.WorkgroupBarrier()
	}
	out := make([]spirv.ID, len(accs))
	for i, a := range accs {
		f.Store(a, f.Load(slot(i, k.ic(0))))
		out[i] = a
	}
	return out
}

// subgroupOp is a reducer that subgroup arithmetic can apply: add of f32, s32 or
// u32, or max/min of s32 or u32. (Float max/min are excluded here: the subgroup
// forms do not propagate NaN as XLA's maximum and minimum do. Row kernels combine
// f32 max/min as keyed ops, through an integer key that orders them as XLA does.)
type subgroupOp struct {
	op    hlo.Opcode
	keyed bool // f32 maximum/minimum, combined on orderedKey
}

// subgroupReducer recognises a plain add/max/min reducer of one 32-bit operand.
func subgroupReducer(c *hlo.Computation, dts []hlo.DType, t Target) *subgroupOp {
	if !t.SubgroupArithmetic || len(dts) != 1 || len(c.Instructions) != 3 {
		return nil
	}
	root := c.Root
	if len(root.Operands) != 2 || root.Operands[0].Op != hlo.OpParameter ||
		root.Operands[1].Op != hlo.OpParameter || root.Operands[0] == root.Operands[1] {
		return nil
	}
	switch dt := dts[0]; {
	case root.Op == hlo.OpAdd && (dt == hlo.F32 || dt == hlo.S32 || dt == hlo.U32):
	case (root.Op == hlo.OpMaximum || root.Op == hlo.OpMinimum) && (dt == hlo.S32 || dt == hlo.U32):
	default:
		return nil
	}
	return &subgroupOp{op: root.Op}
}

// identity is the value that leaves the reduction unchanged.
func (s *subgroupOp) identity(k *kernel, dt hlo.DType) spirv.ID {
	t := k.regType(dt)
	switch {
	case s.keyed && s.op == hlo.OpMaximum:
		return k.m.ConstFloat(t, math.Inf(-1))
	case s.keyed:
		return k.m.ConstFloat(t, math.Inf(1))
	case s.op == hlo.OpAdd:
		return k.m.ConstOf(t, 0)
	case s.op == hlo.OpMaximum && dt == hlo.S32:
		return k.m.ConstInt(t, -1<<31)
	case s.op == hlo.OpMaximum:
		return k.m.ConstUint(t, 0)
	case dt == hlo.S32:
		return k.m.ConstInt(t, 1<<31-1)
	}
	return k.m.ConstUint(t, 1<<32-1)
}

// combine reduces v over the subgroup; every lane gets the result.
func (s *subgroupOp) combine(k *kernel, v spirv.ID) spirv.ID {
	if s.keyed {
		return fromOrderedKey(k, s.apply(k.f, orderedKey(k, v, s.op)))
	}
	return s.apply(k.f, v)
}

// apply is the subgroup instruction of the op.
func (s *subgroupOp) apply(f *spirv.Function, v spirv.ID) spirv.ID {
	switch s.op {
	case hlo.OpAdd:
		return f.SubgroupAdd(v)
	case hlo.OpMaximum:
		return f.SubgroupMax(v)
	}
	return f.SubgroupMin(v)
}

// orderedKey maps an f32 to an s32 whose signed order is the order maximum and
// minimum use: -0 below +0, and NaN (made a positive quiet NaN for maximum, a
// negative one for minimum) beyond every number, so that it wins and propagates.
// Non-negative encodings are their own key; negative ones have their magnitude
// bits flipped, so that a larger magnitude is a smaller key.
func orderedKey(k *kernel, v spirv.ID, op hlo.Opcode) spirv.ID {
	f, s32 := k.f, k.m.TypeInt(32, true)
	nan := int64(0x7fc00000)
	if op == hlo.OpMinimum {
		nan = -0x00400000 // 0xffc00000
	}
	bits := f.Select(f.IsNan(v), k.m.ConstInt(s32, nan), f.Bitcast(s32, v))
	return flipNegative(k, bits)
}

// fromOrderedKey inverts orderedKey (flipping is its own inverse).
func fromOrderedKey(k *kernel, key spirv.ID) spirv.ID {
	return k.f.Bitcast(k.regType(hlo.F32), flipNegative(k, key))
}

// flipNegative flips the low 31 bits of a negative s32.
func flipNegative(k *kernel, bits spirv.ID) spirv.ID {
	f, s32 := k.f, k.m.TypeInt(32, true)
	zero := k.m.ConstInt(s32, 0)
	return f.Xor(bits, f.Select(f.Less(bits, zero), k.m.ConstInt(s32, 0x7fffffff), zero))
}

// subgroupCombine reduces each subgroup with one instruction, then invocation 0
// folds the subgroup results from shared memory. The result is in accs[0] of
// invocation 0.
func (l *lowering) subgroupCombine(k *kernel, sub *subgroupOp, accs, shared []spirv.ID, lid spirv.ID, local uint32) []spirv.ID {
	f := k.f
	r := sub.combine(k, f.Load(accs[0]))
	sgid := k.toIndex(f.LoadBuiltIn(spirv.BuiltInSubgroupId))
	sglid := f.LoadBuiltIn(spirv.BuiltInSubgroupLocalInvocationId)
	f.If(f.Equal(sglid, k.u32(0)), func() { f.Store(f.AccessChain(shared[0], sgid), r) }, nil)
	f.WorkgroupBarrier()
	f.If(f.Equal(lid, k.ic(0)), func() {
		count := k.toIndex(f.LoadBuiltIn(spirv.BuiltInNumSubgroups))
		f.Store(accs[0], f.Load(f.AccessChain(shared[0], k.ic(0))))
		k.countLoop(int64(local), func() {
			f.Range(k.ic(1), count, k.ic(1), func(i spirv.ID) {
				x := f.Load(f.AccessChain(shared[0], i))
				var dt hlo.DType
				if k.m.IsFloat(k.m.TypeOf(x)) {
					dt = hlo.F32
				} else if k.m.IsSigned(k.m.TypeOf(x)) {
					dt = hlo.S32
				} else {
					dt = hlo.U32
				}
				res, err := k.binary(sub.op, dt, f.Load(accs[0]), x)
				if err != nil {
					k.failf("%v", err)
				}
				f.Store(accs[0], res)
			})
		})
	}, nil)
	return accs
}
