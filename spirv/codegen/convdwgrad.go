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
	l.partialSumFacts("conv_dwgrad_partial", "conv_gemm_sum", cg.partialBytes(parts))
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
	v := dwGradViews{lhs: l.vec4Source(k, int(cg.lhs.Attrs.ParameterNumber), cg.lhs.Shape.DType),
		rhs:   l.vec4Source(k, int(cg.rhs.Attrs.ParameterNumber), cg.rhs.Shape.DType),
		lDims: quarterMinor(cg.lhs.Shape.Dims), rDims: quarterMinor(cg.rhs.Shape.Dims)}
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
						terms := cg.dwGradTerms(k, pos, v.lDims)
						k.loop(cg.kIn, func(kv spirv.ID) { cg.dwGradAdd(k, v, acc, rows, terms, pos, cq, kv) })
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

// dwGradTerm is one spatial dim's part of an image read: its offset in the vec4
// view (the input position, clamped into the image, times the dim's stride) and
// whether the position lies inside the image (0: always).
type dwGradTerm struct{ offset, valid spirv.ID }

// dwGradTerms is, per spatial dim s and output tap index t in that dim, the
// image read's part at gradient pixel pos: computed once per dim and index (3+3
// for a 3×3 filter), not once per output tap (9), as a tap's read is the sum of
// its dims' offsets.
func (cg convGEMM) dwGradTerms(k *kernel, pos []spirv.ID, dims4 []int64) [][]dwGradTerm {
	cd, dims := cg.cd, cg.lhs.Shape.Dims
	terms := make([][]dwGradTerm, len(cd.InputSpatial))
	for s, d := range cd.InputSpatial {
		stride := k.ic(product(dims4[d+1:]))
		for t := range cg.rowDims[1+s] {
			src, cs := k.windowSource(cg.w[s:s+1], dims[d:d+1], []spirv.ID{k.ic(t)}, pos[s:s+1])
			term := dwGradTerm{}
			if len(cs) > 0 {
				src[0] = k.clampIndex(src[0], 0, dims[d]-1)
				term.valid = k.all(cs...)
			}
			term.offset = k.f.IMul(src[0], stride)
			terms[s] = append(terms[s], term)
		}
	}
	return terms
}

// dwGradViews are the vec4 views of the images and the gradient, with their dims
// in vec4s.
type dwGradViews struct {
	lhs, rhs     vec4Source
	lDims, rDims []int64
}

// dwGradAdd adds image kv's products at gradient pixel pos (its image reads'
// parts in terms) for feature quad cq into every output tap's accumulator.
func (cg convGEMM) dwGradAdd(k *kernel, v dwGradViews, acc []spirv.ID, rows [][]int64, terms [][]dwGradTerm, pos []spirv.ID, cq, kv spirv.ID) {
	f, cd := k.f, cg.cd
	zero := k.m.ConstOf(k.m.TypeVector(k.m.TypeF32(), 4), 0)
	dy := k.loadVec4(v.rhs, k.linearize(cg.filterIndex(k, kv, cq, pos), v.rDims))
	li := make([]spirv.ID, len(v.lDims))
	li[cd.InputBatch], li[cd.InputFeature] = cq, kv
	for _, d := range cd.InputSpatial {
		li[d] = k.ic(0)
	}
	base := k.linearize(li, v.lDims)
	for r, row := range rows {
		at, valid := base, []spirv.ID{}
		for s := range row {
			at = f.IAdd(at, terms[s][row[s]].offset)
			if c := terms[s][row[s]].valid; c != 0 {
				valid = append(valid, c)
			}
		}
		x := k.loadVec4(v.lhs, at)
		if len(valid) > 0 {
			x = f.Select(k.all(valid...), x, zero)
		}
		f.Store(acc[r], f.FAdd(f.Load(acc[r]), f.FMul(x, dy)))
	}
}
