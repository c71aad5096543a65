package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// The filter gradient of a depthwise convolution. Autodiff gives a depthwise
// convolution's filter gradient as a convolution with one batch group per
// feature, each group one output feature: out[tap, c] = Σ over images and
// gradient pixels of image[c, pixel at tap] · gradient[c, pixel]. As an
// implicit GEMM that is a 9×1 product per feature, so it has its own kernel,
// memory-bound like the depthwise forward one: each invocation sums, for four
// features at once (vec4 loads of images and gradient, both feature-minor:
// NHWC), every output tap (unrolled, up to depthwiseUnroll) over one range of
// gradient pixels (dwGradChunk terms), into a scratch buffer of partial sums in
// the split implicit GEMM's layout, which convGEMMSum then adds up in range
// order and rounds, through the epilogue if any. One gradient vec4 serves all
// the taps. Sums run over pixels, then images, range by range: another order
// than cpuref's, within the convolution's tolerance.

// dwGradChunk is the terms (gradient pixels × images) one invocation sums per
// output tap: enough work per invocation for the taps' set-up, and enough ranges
// that a filter gradient of few features fills the device.
const dwGradChunk = 256

// dwGradOf is the view of a depthwise filter gradient the kernel takes: batch
// groups of one output feature and one output batch each, a multiple of 4
// groups, at most depthwiseUnroll output taps, the groups the minor dim of the
// images (as their batch), the gradient (as its output features) and the output,
// both operands inputs of the kernel (read through vec4 views).
func dwGradOf(in *hlo.Instruction) (convGEMM, bool) {
	cg, ok := groupedGEMMView(in)
	if !ok || !cg.byBatch || cg.n != 1 || cg.rowDims[0] != 1 || cg.groups%4 != 0 || cg.m > depthwiseUnroll {
		return convGEMM{}, false
	}
	cd := cg.cd
	minor := func(x *hlo.Instruction, dim int64) bool {
		return x.Op == hlo.OpParameter && dim == int64(x.Shape.Rank()-1)
	}
	if !minor(cg.lhs, cd.InputBatch) || !minor(cg.rhs, cd.KernelOutput) || cd.OutputFeature != int64(in.Shape.Rank()-1) {
		return convGEMM{}, false
	}
	return cg, true
}

// useDWGrad: one gradient pixel's loop over the images fits the target's loop
// bound, and the partial sums fit one binding.
func useDWGrad(cg convGEMM, t Target) bool {
	if lim := t.MaxLoopIterations; lim > 0 && 1+cg.kIn > lim/4 {
		return false
	}
	parts, _ := dwGradParts(cg, t)
	return t.MaxStorageBufferRange <= 0 || cg.partialBytes(parts) <= t.MaxStorageBufferRange
}

// dwGradParts is the number of gradient-pixel ranges the kernel sums separately,
// and the pixels per range.
func dwGradParts(cg convGEMM, t Target) (parts, perPart int64) {
	taps := product(cg.taps)
	perPart = max(1, dwGradChunk/cg.kIn)
	if lim := t.MaxLoopIterations; lim > 0 {
		perPart = min(perPart, max(1, lim/4/(1+cg.kIn)))
	}
	perPart = min(perPart, taps)
	return ceilDiv(taps, perPart), perPart
}

func (l *lowering) dwGradFacts(cg convGEMM) {
	parts, _ := dwGradParts(cg, l.t)
	scratch := l.p.scratchIndex()
	l.p.Scratch = append(l.p.Scratch, cg.partialBytes(parts))
	l.dispatchFact("conv_dwgrad_partial", scratchArgs(scratch, 1))
	l.dispatchFact("conv_gemm_sum", scratchArgs(scratch, 1), l.outputArgs())
}

func (l *lowering) lowerDWGrad(cg convGEMM) error {
	parts, perPart := dwGradParts(cg, l.t)
	scratch := l.p.scratchIndex()
	l.p.Scratch = append(l.p.Scratch, cg.partialBytes(parts))
	if err := l.dwGradPartials(cg, scratch, parts, perPart); err != nil {
		return err
	}
	return l.convGEMMSum(cg, scratch, parts)
}

// dwGradPartials is the first pass: partial[p][g][row] (convGEMMSum's layout,
// n = 1) = output row's sum for feature g over gradient pixels p·perPart …
// (p+1)·perPart − 1, four features per invocation.
func (l *lowering) dwGradPartials(cg convGEMM, scratch int, parts, perPart int64) error {
	k := l.newKernel("conv_dwgrad_partial", defaultLocal)
	f, m := k.f, k.m
	partial := k.bind(Arg{Kind: ArgScratch, Index: scratch}, hlo.F32, 0)
	g := l.kernelGen(k)
	cd := cg.cd
	lhs4 := k.vec4Input(int(cg.lhs.Attrs.ParameterNumber), cg.lhs.Shape.DType)
	rhs4 := k.vec4Input(int(cg.rhs.Attrs.ParameterNumber), cg.rhs.Shape.DType)
	lDims4, rDims4 := quarterMinor(cg.lhs.Shape.Dims), quarterMinor(cg.rhs.Shape.Dims)
	vec4 := m.TypeVector(m.TypeF32(), 4)
	zero := m.ConstOf(vec4, 0)
	quads := cg.groups / 4
	taps := product(cg.taps)
	rows := make([][]int64, cg.m) // each output row's spatial indices
	for r := range rows {
		rows[r] = unravel(int64(r), cg.rowDims)[1:]
	}
	groups := k.gridStride(parts*quads, func(i spirv.ID) {
		g.scoped(func() {
			p, cq := f.SDiv(i, k.ic(quads)), f.SRem(i, k.ic(quads))
			acc := make([]spirv.ID, cg.m)
			for r := range acc {
				acc[r] = k.variable(vec4, zero, "dwgrad_acc")
			}
			start := f.IMul(p, k.ic(perPart))
			end := f.Select(f.Less(f.IAdd(start, k.ic(perPart)), k.ic(taps)), f.IAdd(start, k.ic(perPart)), k.ic(taps))
			k.countLoop(perPart, func() {
				f.Range(start, end, k.ic(1), func(tap spirv.ID) {
					g.scoped(func() {
						pos := k.delinearize(tap, cg.taps)
						k.loop(cg.kIn, func(kv spirv.ID) {
							ri := make([]spirv.ID, len(rDims4))
							ri[cd.KernelInput], ri[cd.KernelOutput] = kv, cq
							for s, d := range cd.KernelSpatial {
								ri[d] = pos[s]
								if cg.w[s].WindowReversal {
									ri[d] = f.ISub(k.ic(cg.w[s].Size-1), pos[s])
								}
							}
							dy := k.loadVec4(rhs4, k.linearize(ri, rDims4))
							for r, row := range rows {
								li := make([]spirv.ID, len(lDims4))
								li[cd.InputBatch], li[cd.InputFeature] = cq, kv
								var conds []spirv.ID
								for s, d := range cd.InputSpatial {
									src, cs := k.windowSource(cg.w[s:s+1], cg.lhs.Shape.Dims[d:d+1], []spirv.ID{k.ic(row[s])}, pos[s:s+1])
									li[d] = src[0]
									if len(cs) > 0 {
										conds = append(conds, cs...)
										li[d] = k.clampIndex(src[0], 0, cg.lhs.Shape.Dims[d]-1)
									}
								}
								x := k.loadVec4(lhs4, k.linearize(li, lDims4))
								if len(conds) > 0 {
									x = f.Select(k.all(conds...), x, zero)
								}
								f.Store(acc[r], f.FAdd(f.Load(acc[r]), f.FMul(x, dy)))
							}
						})
					})
				})
			})
			// Feature 4cq + j, row r of part p: (p·groups + 4cq + j)·m + r.
			for j := range int64(4) {
				base := f.IMul(f.IAdd(f.IMul(p, k.ic(cg.groups)), f.IAdd(f.IMul(cq, k.ic(4)), k.ic(j))), k.ic(cg.m))
				for r := range acc {
					k.store(partial, f.IAdd(base, k.ic(int64(r))), f.CompositeExtract(f.Load(acc[r]), uint32(j)), hlo.F32)
				}
			}
		})
	})
	return l.add(k, groups)
}
