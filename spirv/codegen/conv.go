package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// emitConvolution is the direct convolution per output element, following XLA's
// HloEvaluator: dim_labels place batch, feature and spatial dims; window positions
// are base_index = out·stride - pad_low + k·rhs_dilation, skipped unless divisible by
// lhs_dilation and inside the input; feature_group_count G splits input features into
// G groups of the kernel's input features and output features into G groups;
// batch_group_count B: output feature o reads the lhs batch of its batch group
// o/(O/B), at group·(N/B) + b. The sum runs over input features, then window
// positions, in row-major order (cpuref's order).
// Accumulation as dot (f32 for f16/bf16, wrapping integers).
func emitConvolution(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	t, ok := newConvTerms(g, in, idx)
	if !ok {
		return 0
	}
	dt := in.Shape.DType
	acc := g.k.variable(g.k.regType(dt), g.k.zero(dt), "conv_acc")
	g.loop(t.total, func(j spirv.ID) { t.accumulate(acc, j) })
	return g.k.round(g.k.sumFromZero(g.k.f.Load(acc), dt), dt)
}

// convTerms are the products one output element of a convolution sums: term j
// (in [0, total)) is input feature j / window size at window position j mod
// window size, row-major.
type convTerms struct {
	g             *gen
	in            *hlo.Instruction
	idx           []spirv.ID
	featBase      spirv.ID // the first input feature of the output feature's group
	batch         spirv.ID // the lhs batch index
	sizes         []int64  // kernel input features, then the window's sizes
	total         int64
	kernelFeature spirv.ID
}

func newConvTerms(g *gen, in *hlo.Instruction, idx []spirv.ID) (*convTerms, bool) {
	k, f := g.k, g.k.f
	lhs, rhs := in.Operands[0], in.Operands[1]
	cd := in.Attrs.Conv
	if cd == nil {
		g.fail(in, "no dim_labels")
		return nil, false
	}
	fg, bg := max(in.Attrs.FeatureGroupCount, 1), max(in.Attrs.BatchGroupCount, 1)
	kIn := rhs.Shape.Dims[cd.KernelInput]
	kOut := rhs.Shape.Dims[cd.KernelOutput]
	inBatch := lhs.Shape.Dims[cd.InputBatch]
	of := idx[cd.OutputFeature]
	t := &convTerms{g: g, in: in, idx: idx, kernelFeature: of, batch: idx[cd.OutputBatch],
		sizes: append([]int64{kIn}, windowSizes(in.Attrs.Window)...)}
	t.total = product(t.sizes)
	// Input feature base: the feature group of the output feature times kIn.
	t.featBase = f.IMul(f.SDiv(of, k.ic(kOut/fg)), k.ic(kIn))
	if bg > 1 {
		// Output feature o is in batch group o/(O/B), which reads lhs batch
		// group·(N/B) + b (docs/cpuref.md).
		group := f.SDiv(of, k.ic(kOut/bg))
		t.batch = f.IAdd(t.batch, f.IMul(group, k.ic(inBatch/bg)))
	}
	return t, true
}

// accumulate adds term j to the register variable acc (when its window position
// lies inside the input).
func (t *convTerms) accumulate(acc, j spirv.ID) {
	g, k, f := t.g, t.g.k, t.g.k.f
	lhs, rhs := t.in.Operands[0], t.in.Operands[1]
	cd, w := t.in.Attrs.Conv, t.in.Attrs.Window
	c := k.delinearize(j, t.sizes)
	ki, pos := c[0], c[1:]
	li := make([]spirv.ID, lhs.Shape.Rank())
	ri := make([]spirv.ID, rhs.Shape.Rank())
	li[cd.InputBatch] = t.batch
	li[cd.InputFeature] = f.IAdd(t.featBase, ki)
	ri[cd.KernelInput] = ki
	ri[cd.KernelOutput] = t.kernelFeature
	var conds []spirv.ID
	for s, wd := range w {
		out := t.idx[cd.OutputSpatial[s]]
		base := []int64{lhs.Shape.Dims[cd.InputSpatial[s]]}
		src, cs := k.windowSource(w[s:s+1], base, []spirv.ID{out}, []spirv.ID{pos[s]})
		conds = append(conds, cs...)
		li[cd.InputSpatial[s]] = src[0]
		kp := pos[s]
		if wd.WindowReversal {
			kp = f.ISub(k.ic(wd.Size-1), kp)
		}
		ri[cd.KernelSpatial[s]] = kp
	}
	f.If(k.all(conds...), func() {
		g.scoped(func() {
			f.Store(acc, k.mulAdd(f.Load(acc), g.emit(lhs, li), g.emit(rhs, ri)))
		})
	}, nil)
}

// Split-K convolution. A convolution whose output elements each sum many terms
// (a filter gradient contracts over batch × height × width: 65536 terms for a
// batch of 64 32×32 images) would make one invocation loop past the target's
// loop-iteration bound (lavapipe ends an invocation's loops after 65535), and
// leaves most of the device idle besides, as such a convolution has few outputs.
// At a kernel's root it runs as two dispatches instead: the first sums each
// chunk of convChunk terms of every output element into a scratch buffer (one
// invocation per element and chunk), the second adds each element's chunks in
// order and rounds. Chunked sums round differently from cpuref's sequential one,
// within the convolution's tolerance; integer results are exact (wrapping adds).

// convChunk is the most terms one invocation of the first pass sums.
const convChunk = 4096

// convChunkSize is convChunk, or a quarter of the target's loop bound when that
// is smaller (the invocation's grid-stride loop needs its share too).
func convChunkSize(t Target) int64 {
	if lim := t.MaxLoopIterations; lim > 0 {
		return max(1, min(convChunk, lim/4))
	}
	return convChunk
}

// useSplitConv picks the split for a root convolution of more than four chunks of
// terms per output element.
func useSplitConv(root *hlo.Instruction, t Target) bool {
	if root.Op != hlo.OpConvolution || root.Attrs.Conv == nil {
		return false
	}
	cd, rhs := root.Attrs.Conv, root.Operands[1]
	terms := rhs.Shape.Dims[cd.KernelInput] * product(windowSizes(root.Attrs.Window))
	return terms > 4*convChunkSize(t)
}

// partialDType is the type a split convolution's partial sums are kept in: the
// accumulator's (f32 for f16 and bf16).
func partialDType(dt hlo.DType) hlo.DType {
	if isNarrowFloat(dt) {
		return hlo.F32
	}
	return dt
}

// splitConvSizes are a split convolution's chunk (terms per partial sum) and the
// partial sums per output element; Lower and Facts both size by them.
func splitConvSizes(root *hlo.Instruction, t Target) (chunk, parts int64) {
	chunk = convChunkSize(t)
	rhs, cd := root.Operands[1], root.Attrs.Conv
	total := rhs.Shape.Dims[cd.KernelInput] * product(windowSizes(root.Attrs.Window))
	return chunk, (total + chunk - 1) / chunk
}

// splitConvFacts: a scratch buffer of the partial sums, the partial pass writing
// it and the sum pass reading it into the output.
func (l *lowering) splitConvFacts() {
	root := l.c.Root
	n := root.Shape.NumElements()
	if n == 0 {
		return
	}
	_, parts := splitConvSizes(root, l.t)
	l.partialSumFacts("conv_partial", "conv_sum", n*parts*int64(partialDType(root.Shape.DType).Size()))
}

func (l *lowering) lowerSplitConv() error {
	root := l.c.Root
	n := root.Shape.NumElements()
	if n == 0 {
		return nil
	}
	pdt := partialDType(root.Shape.DType)
	chunk, parts := splitConvSizes(root, l.t)
	scratch := l.p.scratchIndex()
	l.p.Scratch = append(l.p.Scratch, n*parts*int64(pdt.Size()))
	if err := l.convPartials(scratch, pdt, chunk, parts); err != nil {
		return err
	}
	return l.convSumPartials(scratch, pdt, parts)
}

// convPartials is the first pass: partial[e·parts + p] = the sum of output
// element e's terms p·chunk … (p+1)·chunk − 1.
func (l *lowering) convPartials(scratch int, pdt hlo.DType, chunk, parts int64) error {
	root := l.c.Root
	dt := root.Shape.DType
	k := l.newKernel("conv_partial", defaultLocal)
	f := k.f
	partial := k.bind(Arg{Kind: ArgScratch, Index: scratch}, pdt, 0)
	g := l.kernelGen(k)
	groups := k.gridStride(root.Shape.NumElements()*parts, func(i spirv.ID) {
		g.scoped(func() {
			e, p := f.SDiv(i, k.ic(parts)), f.SRem(i, k.ic(parts))
			t, ok := newConvTerms(g, root, k.delinearize(e, root.Shape.Dims))
			if !ok {
				return
			}
			acc := k.variable(k.regType(dt), k.zero(dt), "conv_acc")
			start := f.IMul(p, k.ic(chunk))
			end := f.IAdd(start, k.ic(chunk))
			end = f.Select(f.Less(end, k.ic(t.total)), end, k.ic(t.total))
			k.countLoop(chunk, func() {
				f.Range(start, end, k.ic(1), func(j spirv.ID) { g.scoped(func() { t.accumulate(acc, j) }) })
			})
			k.store(partial, i, f.Load(acc), pdt)
		})
	})
	return l.add(k, groups)
}

// convSumPartials is the second pass: each output element is the sum of its
// chunks, in chunk order, rounded to the result type.
func (l *lowering) convSumPartials(scratch int, pdt hlo.DType, parts int64) error {
	root := l.c.Root
	dt := root.Shape.DType
	k := l.newKernel("conv_sum", defaultLocal)
	f := k.f
	partial := k.bind(Arg{Kind: ArgScratch, Index: scratch}, pdt, spirv.ReadOnly)
	outs := l.bindOutputs(k)
	groups := k.gridStride(root.Shape.NumElements(), func(e spirv.ID) {
		acc := k.variable(k.regType(pdt), k.zero(pdt), "conv_sum")
		base := f.IMul(e, k.ic(parts))
		k.loop(parts, func(p spirv.ID) {
			f.Store(acc, f.Add(f.Load(acc), k.load(partial, f.IAdd(base, p), pdt)))
		})
		k.store(outs[0], e, k.round(k.sumFromZero(f.Load(acc), dt), dt), dt)
	})
	return l.add(k, groups)
}
