package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Depthwise convolution: feature_group_count equal to the input features, one
// output feature per group (MobileNet's depthwise layers). Each output element
// sums only the window's taps of one input feature, so the kernel is bound by
// memory, not arithmetic: each invocation computes four neighbouring output
// features (the output's feature dimension is its minor one) as a vec4 at a run
// of depthwiseRun positions along the last spatial dimension, reading per tap a
// vec4 of four input features (where the
// input's feature dimension is minor; else four elements through the emitter)
// and a vec4 of the filter (where its output-feature dimension is minor). Taps
// are summed from zero in row-major order, cpuref's order; f16 and bf16
// accumulate in f32 and round once. Windows of up to depthwiseUnroll taps are
// unrolled. A kernel whose root is an epilogue of the convolution (a bias add,
// ReLU6, a residual, converts: passes' convolution epilogues) applies it in the
// output stage through the GEMM's hook (epilogue.go), as the implicit GEMM does.

const depthwiseUnroll = 25

// depthwiseView is the view of a depthwise convolution the kernel takes.
type depthwiseView struct {
	cg convGEMM // groups = features; kIn = n = 1
	c  int64    // features
}

func depthwiseOf(in *hlo.Instruction) (depthwiseView, bool) {
	cg, ok := convGEMMView(in)
	if !ok || cg.groups < 4 || cg.kIn != 1 || cg.n != 1 || cg.groups%4 != 0 || len(cg.taps) == 0 {
		return depthwiseView{}, false
	}
	if cg.cd.OutputFeature != int64(in.Shape.Rank()-1) {
		return depthwiseView{}, false
	}
	return depthwiseView{cg: cg, c: cg.groups}, true
}

// useDepthwise: a float depthwise convolution whose output features (a multiple
// of 4) are its output's minor dimension, with a window the kernel's loops and
// unrolling allow.
func useDepthwise(root *hlo.Instruction, t Target) bool {
	dw, ok := depthwiseOf(root)
	if !ok {
		return false
	}
	taps := product(dw.cg.taps)
	return taps <= depthwiseUnroll || t.MaxLoopIterations <= 0 || taps <= t.MaxLoopIterations/4
}

// depthwiseRun is the output positions along the last spatial dimension each
// invocation computes: their input columns overlap (a 3×3 stride-1 window reads
// 6 columns for 4 outputs, not 12) and the filter's vec4s are read once for all.
const depthwiseRun = 4

func (l *lowering) lowerDepthwise() error {
	conv := gemmConv(l.c) // the root, or the convolution whose epilogue it is
	dw, _ := depthwiseOf(conv)
	cg := dw.cg
	l.p.InPlace = l.epilogueInPlace(conv)
	k := l.newKernel("depthwise", defaultLocal)
	out := l.bindOutputs(k)[0]
	out4 := k.f.View(out, "out0_vec4", k.vec4Type(l.p.Outputs[0].DType)) // the output's vec4 groups
	g := l.kernelGen(k)
	f, m := k.f, k.m
	vec4 := m.TypeVector(m.TypeF32(), 4)
	quads := dw.c / 4
	last := len(cg.rowDims) - 1 // the last spatial dim, walked in runs
	run := min(depthwiseRun, cg.rowDims[last])
	runDims := append([]int64(nil), cg.rowDims...)
	runDims[last] = ceilDiv(runDims[last], run)
	outer, lastW := cg.taps[:len(cg.taps)-1], cg.w[len(cg.w)-1]
	groups := k.gridStride(product(runDims)*quads, func(i spirv.ID) {
		g.scoped(func() {
			pixel, cq := f.SDiv(i, k.ic(quads)), f.SRem(i, k.ic(quads))
			row := k.delinearize(pixel, runDims)
			row[last] = f.IMul(row[last], k.ic(run)) // the run's first position
			acc := make([]spirv.ID, run)
			for j := range acc {
				acc[j] = k.variable(vec4, m.ConstOf(vec4, 0), "dw_acc")
			}
			body := func(pos []spirv.ID) {
				// Input column o·stride + j·stride + t·dilation is read once for
				// every (j, t) that lands on it.
				cols := map[int64]spirv.ID{}
				for t := range lastW.Size {
					w := l.depthwiseFilter(g, cg, append(append([]spirv.ID(nil), pos...), k.ic(t)), cq)
					for j := range run {
						off := j*lastW.Stride + t*lastW.WindowDilation
						x, ok := cols[off]
						if !ok {
							x = l.depthwiseInput(g, cg, row, pos, off, cq)
							cols[off] = x
						}
						f.Store(acc[j], f.FAdd(f.Load(acc[j]), f.FMul(x, w)))
					}
				}
			}
			if n := product(outer); n <= depthwiseUnroll {
				for t := range n {
					g.scoped(func() { body(constIndex(k, unravel(t, outer))) })
				}
			} else {
				k.loopTaps(g, outer, body)
			}
			for j := range run {
				at := append([]spirv.ID(nil), row...)
				at[last] = f.IAdd(row[last], k.ic(j))
				store := func() { l.depthwiseStore(g, cg, out4, at, cq, f.Load(acc[j])) }
				if cg.rowDims[last]%run == 0 {
					store()
					continue
				}
				f.If(f.Less(at[last], k.ic(cg.rowDims[last])), store, nil)
			}
		})
	})
	return l.add(k, groups)
}

// depthwiseInput is the vec4 of input features 4cq … 4cq+3 that output pixel row
// reads at the outer taps pos and, along the last spatial dimension, at offset
// off from the row's first position (j·stride + tap·dilation), zero where that
// falls in padding, a dilation hole or past the input.
func (l *lowering) depthwiseInput(g *gen, cg convGEMM, row, pos []spirv.ID, off int64, cq spirv.ID) spirv.ID {
	k, f := g.k, g.k.f
	cd, dims := cg.cd, cg.lhs.Shape.Dims
	li := make([]spirv.ID, len(dims))
	li[cd.InputBatch] = row[0]
	var conds []spirv.ID
	last := len(cd.InputSpatial) - 1
	for s, d := range cd.InputSpatial[:last] {
		src, cs := k.windowSource(cg.w[s:s+1], dims[d:d+1], row[1+s:2+s], pos[s:s+1])
		li[d] = src[0]
		if len(cs) > 0 {
			conds = append(conds, cs...)
			li[d] = k.clampIndex(src[0], 0, dims[d]-1)
		}
	}
	// The last dim: always range-checked, as the run's positions past the output
	// may read past the input.
	wd, d := cg.w[last], cd.InputSpatial[last]
	v := f.IAdd(f.IMul(row[1+last], k.ic(wd.Stride)), k.ic(off-wd.PadLow))
	conds = append(conds, k.inRange(v, k.ic(0), k.ic(dilatedExtent(dims[d], wd.BaseDilation))))
	if wd.BaseDilation != 1 {
		conds = append(conds, f.Equal(f.SRem(v, k.ic(wd.BaseDilation)), k.ic(0)))
		v = f.SDiv(v, k.ic(wd.BaseDilation))
	}
	li[d] = k.clampIndex(v, 0, dims[d]-1)
	x := l.depthwiseQuad(g, cg.lhs, li, cd.InputFeature, cg.groups, cq)
	return f.Select(k.all(conds...), x, k.m.ConstOf(k.m.TypeOf(x), 0))
}

// depthwiseQuad is the vec4 of x's elements at idx with dimension dim (of size
// elements) at 4cq … 4cq+3: where x is an input with dim minor, one read from its
// vec4Source (a texel fetch where allowed: every input vec4 is read once per tap
// that covers it), else four elements through the emitter.
func (l *lowering) depthwiseQuad(g *gen, x *hlo.Instruction, idx []spirv.ID, dim, size int64, cq spirv.ID) spirv.ID {
	k := g.k
	at := func() spirv.ID {
		q := append([]spirv.ID(nil), idx...)
		q[dim] = cq
		return k.linearize(q, quarterMinor(x.Shape.Dims))
	}
	if src, ok := l.vec4View(k, x, dim, size); ok {
		return k.loadVec4(src, at())
	}
	return quadOf(g, x, idx, dim, cq)
}

// depthwiseFilter is the vec4 of the filter of output features 4cq … 4cq+3 at tap
// pos (reversed where the window is).
func (l *lowering) depthwiseFilter(g *gen, cg convGEMM, pos []spirv.ID, cq spirv.ID) spirv.ID {
	return l.depthwiseQuad(g, cg.rhs, cg.filterIndex(g.k, g.k.ic(0), cq, pos), cg.cd.KernelOutput, cg.groups, cq)
}

// quadOf is the vec4 of x's elements at idx with dimension dim at 4cq … 4cq+3,
// read through the emitter.
func quadOf(g *gen, x *hlo.Instruction, idx []spirv.ID, dim int64, cq spirv.ID) spirv.ID {
	k, f := g.k, g.k.f
	parts := make([]spirv.ID, 4)
	base := f.IMul(cq, k.ic(4))
	for u := range parts {
		at := append([]spirv.ID(nil), idx...)
		at[dim] = f.IAdd(base, k.ic(int64(u)))
		parts[u] = g.emit(x, at)
	}
	return f.CompositeConstruct(k.m.TypeVector(k.m.TypeF32(), 4), parts...)
}

// depthwiseStore writes the four sums (from zero) of output pixel row, features
// 4cq … 4cq+3: through the kernel's epilogue when its root is one of the
// convolution (epilogue.go: a bias add, ReLU6, a residual, converts), so the
// convolution's value never goes to memory; one vector store of four f32, or of
// four rounded f16/bf16.
func (l *lowering) depthwiseStore(g *gen, cg convGEMM, out4 spirv.Buffer, row []spirv.ID, cq, v spirv.ID) {
	k, f := g.k, g.k.f
	dt, conv := l.p.Outputs[0].DType, cg.in
	dims := conv.Shape.Dims
	idx := cg.outputIndex(k, dims, row, cq)
	group := k.linearize(idx, quarterMinor(dims)) // the vec4 of the four outputs
	var lanes [4]spirv.ID
	for u := range lanes {
		lanes[u] = k.sumFromZero(f.CompositeExtract(v, uint32(u)), conv.Shape.DType)
	}
	g.scoped(func() {
		if conv != l.c.Root { // the epilogue reads a bias (or residual) quad as a vec4
			idxs := k.epilogueLanes(dims, idx[:len(idx)-1], f.IMul(group, k.ic(4)), cq, group)
			for u := range lanes {
				lanes[u] = l.gemmEpilogue(g, conv, idxs[u], k.round(lanes[u], conv.Shape.DType))
			}
		}
		if conv == l.c.Root { // an epilogue's value is already of the output's type
			for u := range lanes {
				lanes[u] = k.round(lanes[u], dt)
			}
		}
		k.storeVec4(out4, group, lanes, dt)
	})
}

// unravel splits a row-major linear index into indices of dims.
func unravel(i int64, dims []int64) []int64 {
	idx := make([]int64, len(dims))
	for d := len(dims) - 1; d >= 0; d-- {
		idx[d] = i % dims[d]
		i /= dims[d]
	}
	return idx
}

// constIndex is idx as index constants.
func constIndex(k *kernel, idx []int64) []spirv.ID {
	out := make([]spirv.ID, len(idx))
	for i, v := range idx {
		out[i] = k.ic(v)
	}
	return out
}
