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
	k, f := g.k, g.k.f
	lhs, rhs := in.Operands[0], in.Operands[1]
	cd := in.Attrs.Conv
	if cd == nil {
		g.fail(in, "no dim_labels")
		return 0
	}
	w := in.Attrs.Window
	fg, bg := in.Attrs.FeatureGroupCount, in.Attrs.BatchGroupCount
	fg, bg = max(fg, 1), max(bg, 1)
	kIn := rhs.Shape.Dims[cd.KernelInput]
	kOut := rhs.Shape.Dims[cd.KernelOutput]
	inBatch := lhs.Shape.Dims[cd.InputBatch]
	of := idx[cd.OutputFeature]
	// Input feature base: the feature group of the output feature times kIn.
	featBase := f.IMul(f.SDiv(of, k.ic(kOut/fg)), k.ic(kIn))
	batch := idx[cd.OutputBatch]
	if bg > 1 {
		// Output feature o is in batch group o/(O/B), which reads lhs batch
		// group·(N/B) + b (docs/cpuref.md).
		group := f.SDiv(of, k.ic(kOut/bg))
		batch = f.IAdd(batch, f.IMul(group, k.ic(inBatch/bg)))
	}
	sizes := append([]int64{kIn}, windowSizes(w)...)
	dt := in.Shape.DType
	acc := k.variable(k.regType(dt), k.zero(dt), "conv_acc")
	g.loop(product(sizes), func(j spirv.ID) {
		c := k.delinearize(j, sizes)
		ki, pos := c[0], c[1:]
		li := make([]spirv.ID, lhs.Shape.Rank())
		ri := make([]spirv.ID, rhs.Shape.Rank())
		li[cd.InputBatch] = batch
		li[cd.InputFeature] = f.IAdd(featBase, ki)
		ri[cd.KernelInput] = ki
		ri[cd.KernelOutput] = of
		var conds []spirv.ID
		for s, wd := range w {
			out := idx[cd.OutputSpatial[s]]
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
	})
	return k.round(f.Load(acc), dt)
}
