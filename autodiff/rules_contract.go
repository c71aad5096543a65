package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// widened differentiates a dot or convolution whose result type is wider than
// its operands' (preferred_element_type) as the upcast contraction it is: rule
// runs on the operands converted to the result type, and each cotangent is
// converted back to its operand's type.
func widened(rule arrayRule) arrayRule {
	return func(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
		rt := n.orig.Shape.DType
		if n.args[0].Shape.DType == rt {
			return rule(e, n, ct)
		}
		up := &node{orig: n.orig, out: n.out, args: make([]*hlo.Instruction, len(n.args))}
		for i, x := range n.args {
			up.args[i] = e.b.Convert(x, rt)
			e.active[up.args[i]] = e.active[x]
		}
		grads, err := rule(e, up, ct)
		for i, g := range grads {
			if g != nil {
				grads[i] = e.b.Convert(g, n.args[i].Shape.DType)
			}
		}
		return grads, err
	}
}

// vjpDot: each operand's cotangent is a dot of the result's cotangent with the
// other operand, contracting the other operand's free dims, then transposed into the
// operand's dimension order. Any dimension numbers.
func vjpDot(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	lhs, rhs := n.args[0], n.args[1]
	d := n.orig.Attrs.Dot
	lhsFree := hlo.Complement(lhs.Shape.Rank(), d.LhsBatch, d.LhsContracting)
	rhsFree := hlo.Complement(rhs.Shape.Rank(), d.RhsBatch, d.RhsContracting)
	nb, nlf := len(d.LhsBatch), len(lhsFree)
	grads := make([]*hlo.Instruction, 2)
	if e.needs(n, 0) {
		grads[0] = e.dotOperandGrad(ct, rhs, dotSide{d.LhsBatch, d.LhsContracting, lhsFree, lhs.Shape.Rank(), nb},
			dotSide{d.RhsBatch, d.RhsContracting, rhsFree, rhs.Shape.Rank(), nb + nlf})
	}
	if e.needs(n, 1) {
		grads[1] = e.dotOperandGrad(ct, lhs, dotSide{d.RhsBatch, d.RhsContracting, rhsFree, rhs.Shape.Rank(), nb + nlf},
			dotSide{d.LhsBatch, d.LhsContracting, lhsFree, lhs.Shape.Rank(), nb})
	}
	return grads, nil
}

// dotSide describes one dot operand: its batch, contracting and free dims, its rank,
// and where its free dims start in the dot's result.
type dotSide struct {
	batch, contracting, free []int64
	rank                     int
	freeAt                   int
}

// dotOperandGrad computes the cotangent of operand self from the result cotangent ct
// and the other operand.
func (e *engine) dotOperandGrad(ct, other *hlo.Instruction, self, oth dotSide) *hlo.Instruction {
	ctBatch := hlo.Iota64(len(self.batch))
	ctOtherFree := make([]int64, len(oth.free))
	for i := range oth.free {
		ctOtherFree[i] = int64(oth.freeAt + i)
	}
	res := e.b.DotGeneral(ct, other, hlo.DotDims{
		LhsBatch: ctBatch, RhsBatch: oth.batch,
		LhsContracting: ctOtherFree, RhsContracting: oth.free,
	})
	// The result holds batch dims, self's free dims (ct's remaining ones), then
	// other's contracting dims in increasing order; map each back to self's dim.
	src := append([]int64{}, self.batch...)
	src = append(src, self.free...)
	for _, oc := range hlo.Complement(other.Shape.Rank(), oth.batch, oth.free) {
		src = append(src, self.contracting[indexOf(oth.contracting, oc)])
	}
	perm := make([]int64, self.rank)
	for p, dim := range src {
		perm[dim] = int64(p)
	}
	if isIdentity(perm) {
		return res
	}
	return e.b.Transpose(res, perm...)
}

func indexOf(s []int64, v int64) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// vjpConvolution: the input's cotangent is a convolution of the result's cotangent
// with the spatially reversed kernel (strides become input dilation and the other
// way round); the kernel's is a convolution of the input with the result's
// cotangent, batch and feature roles swapped. Feature groups become batch groups in
// the kernel gradient and move into the reversed kernel's output features in the
// input gradient; batch groups likewise. Window reversal is a convolution with the
// kernel reversed in those dims, so it is made explicit first.
func vjpConvolution(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	fgc, bgc := max(n.orig.Attrs.FeatureGroupCount, 1), max(n.orig.Attrs.BatchGroupCount, 1)
	if fgc > 1 && bgc > 1 {
		return nil, fmt.Errorf("convolution with both feature and batch groups has no VJP rule: %w", ErrNotDifferentiable)
	}
	c := conv{x: n.args[0], k: n.args[1], dims: n.orig.Attrs.Conv, fgc: fgc, bgc: bgc,
		win: append([]hlo.WindowDim(nil), n.orig.Attrs.Window...)}
	var reversed []int64
	for i := range c.win {
		if c.win[i].WindowReversal {
			reversed = append(reversed, c.dims.KernelSpatial[i])
			c.win[i].WindowReversal = false
		}
	}
	if len(reversed) > 0 {
		c.k = e.b.Reverse(c.k, reversed...)
	}
	grads := make([]*hlo.Instruction, 2)
	if e.needs(n, 0) {
		grads[0] = e.convInputGrad(c, ct)
	}
	if e.needs(n, 1) {
		grads[1] = e.convKernelGrad(c, ct)
		if len(reversed) > 0 {
			grads[1] = e.b.Reverse(grads[1], reversed...)
		}
	}
	return grads, nil
}

// conv is a convolution's operands and attributes, with no window reversal.
type conv struct {
	x, k     *hlo.Instruction
	dims     *hlo.ConvDims
	win      []hlo.WindowDim
	fgc, bgc int64
}

// dilated is the extent of n elements with d-1 holes between neighbours.
func dilated(n, d int64) int64 {
	if n == 0 {
		return 0
	}
	return 1 + d*(n-1)
}

func (e *engine) convInputGrad(c conv, ct *hlo.Instruction) *hlo.Instruction {
	x, k, cd, win, fgc, bgc := c.x, c.k, c.dims, c.win, c.fgc, c.bgc
	kernel := k
	groups := int64(1)
	if fgc > 1 || bgc > 1 {
		groups = max(fgc, bgc)
		kernel = e.splitAxis(kernel, cd.KernelOutput, groups)
		kernel = e.mergeAxis(kernel, cd.KernelOutput, cd.KernelInput)
	}
	kernel = e.b.Reverse(kernel, cd.KernelSpatial...)
	tw := make([]hlo.WindowDim, len(win))
	for i, w := range win {
		xs := dilated(x.Shape.Dims[cd.InputSpatial[i]], w.BaseDilation)
		ks := dilated(k.Shape.Dims[cd.KernelSpatial[i]], w.WindowDilation)
		os := dilated(ct.Shape.Dims[cd.OutputSpatial[i]], w.Stride)
		lo := ks - w.PadLow - 1
		tw[i] = hlo.WindowDim{Size: w.Size, Stride: w.BaseDilation, PadLow: lo, PadHigh: xs + ks - 1 - os - lo,
			WindowDilation: w.WindowDilation, BaseDilation: w.Stride}
	}
	td := hlo.ConvDims{
		InputBatch: cd.OutputBatch, InputFeature: cd.OutputFeature, InputSpatial: cd.OutputSpatial,
		KernelInput: cd.KernelOutput, KernelOutput: cd.KernelInput, KernelSpatial: cd.KernelSpatial,
		OutputBatch: cd.InputBatch, OutputFeature: cd.InputFeature, OutputSpatial: cd.InputSpatial,
	}
	out := e.b.Conv(ct, kernel, tw, td, groups, 1)
	if bgc > 1 {
		out = e.splitAxis(out, cd.InputFeature, bgc)
		out = e.mergeAxis(out, cd.InputFeature, cd.InputBatch)
	}
	return out
}

func (e *engine) convKernelGrad(c conv, ct *hlo.Instruction) *hlo.Instruction {
	x, k, cd, win, fgc, bgc := c.x, c.k, c.dims, c.win, c.fgc, c.bgc
	tw := make([]hlo.WindowDim, len(win))
	for i, w := range win {
		xs := dilated(x.Shape.Dims[cd.InputSpatial[i]], w.BaseDilation)
		ks := dilated(k.Shape.Dims[cd.KernelSpatial[i]], w.WindowDilation)
		os := dilated(ct.Shape.Dims[cd.OutputSpatial[i]], w.Stride)
		hi := os - xs + ks - w.PadLow - 1
		tw[i] = hlo.WindowDim{Size: ct.Shape.Dims[cd.OutputSpatial[i]], Stride: w.WindowDilation,
			PadLow: w.PadLow, PadHigh: hi, WindowDilation: w.Stride, BaseDilation: w.BaseDilation}
	}
	td := hlo.ConvDims{
		InputBatch: cd.InputFeature, InputFeature: cd.InputBatch, InputSpatial: cd.InputSpatial,
		KernelInput: cd.OutputBatch, KernelOutput: cd.OutputFeature, KernelSpatial: cd.OutputSpatial,
		OutputBatch: cd.KernelInput, OutputFeature: cd.KernelOutput, OutputSpatial: cd.KernelSpatial,
	}
	// Feature groups of the forward conv are batch groups here, and the other way.
	return e.b.Conv(x, ct, tw, td, bgc, fgc)
}

// splitAxis splits dim into (groups, size/groups), groups major.
func (e *engine) splitAxis(x *hlo.Instruction, dim, groups int64) *hlo.Instruction {
	dims := append([]int64{}, x.Shape.Dims[:dim]...)
	dims = append(dims, groups, x.Shape.Dims[dim]/groups)
	dims = append(dims, x.Shape.Dims[dim+1:]...)
	return e.b.Reshape(x, dims...)
}

// mergeAxis removes axis src of x and merges it into axis dst (dst numbered after
// the removal) as the major part: the inverse of splitAxis when dst == src.
func (e *engine) mergeAxis(x *hlo.Instruction, src, dst int64) *hlo.Instruction {
	var perm []int64
	for i := range int64(x.Shape.Rank()) {
		if i != src {
			perm = append(perm, i)
		}
	}
	perm = append(perm[:dst], append([]int64{src}, perm[dst:]...)...)
	t := e.b.Transpose(x, perm...)
	return e.b.Reshape(t, mergedDims(x.Shape.Dims, perm, dst)...)
}

// mergedDims gives the dims after transposing by perm and merging positions dst and
// dst+1.
func mergedDims(dims, perm []int64, dst int64) []int64 {
	var out []int64
	for i, p := range perm {
		if int64(i) == dst+1 {
			out[len(out)-1] *= dims[p]
			continue
		}
		out = append(out, dims[p])
	}
	return out
}
