package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// convGeometry is a convolution's dimension numbers resolved against its operands.
type convGeometry struct {
	dn             *hlo.ConvDims
	win            []hlo.WindowDim
	lhs, rhs, out  hlo.Shape
	lStr, rStr     []int64
	inFeatPerGroup int64 // kernel input features = lhs features / feature_group_count
	outPerFGroup   int64 // output features per feature group
	outPerBGroup   int64 // output features per batch group
	batchPerGroup  int64 // lhs batch / batch_group_count = output batch
	kernelSpatial  []int64
}

// evalConvolution is XLA's general convolution, as StableHLO specifies it. For
// output element (b, o, s…) with feature group g = o / (O/feature_group_count) and
// batch group h = o / (O/batch_group_count):
//
//	out = Σ_c Σ_k lhs[h*(N/batch_group_count) + b, g*C' + c, s*stride + k*rhs_dilation - pad_low (in lhs_dilation units)]
//	          * rhs[c, o, k (reversed where window_reversal)]
//
// where C' is the kernel's input feature count; positions on padding or in an
// lhs-dilation hole contribute nothing. The sum runs over c (outer) then the kernel
// spatial positions k in row-major order, accumulating as dot does (dot.go).
func evalConvolution(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	g, err := newConvGeometry(in, ops[0].Shape(), ops[1].Shape())
	if err != nil {
		return nil, err
	}
	mac, err := newMacOperands(in.Shape.DType, ops[0], ops[1])
	if err != nil {
		return nil, err
	}
	out := hlo.NewLiteral(in.Shape)
	i := 0
	lhsSpatial := make([]int64, len(g.dn.InputSpatial))
	ev.forEachIndex(in.Shape.Dims, func(idx []int64) {
		mac.store(out, i, g.sum(mac, idx, lhsSpatial))
		i++
	})
	return out, nil
}

// sum accumulates one output element; lhsSpatial is scratch space.
func (g *convGeometry) sum(mac *macOperands, idx, lhsSpatial []int64) accumulator {
	dn := g.dn
	o := idx[dn.OutputFeature]
	fGroup, bGroup := o/g.outPerFGroup, o/g.outPerBGroup
	lBase := (bGroup*g.batchPerGroup+idx[dn.OutputBatch])*g.lStr[dn.InputBatch] +
		fGroup*g.inFeatPerGroup*g.lStr[dn.InputFeature]
	rBase := o * g.rStr[dn.KernelOutput]
	var acc accumulator
	for c := int64(0); c < g.inFeatPerGroup; c++ {
		lc := lBase + c*g.lStr[dn.InputFeature]
		rc := rBase + c*g.rStr[dn.KernelInput]
		forEachIndex(g.kernelSpatial, func(k []int64) {
			lo, ok := g.lhsOffset(idx, k)
			if ok {
				mac.add(&acc, lc+lo, rc+g.rhsOffset(k))
			}
		})
	}
	return acc
}

// lhsOffset is the lhs offset (spatial part) under kernel position k of output idx.
func (g *convGeometry) lhsOffset(idx, k []int64) (int64, bool) {
	var p int64
	for j, w := range g.win {
		pos := idx[g.dn.OutputSpatial[j]]*w.Stride + k[j]*w.WindowDilation - w.PadLow
		if pos < 0 || pos%w.BaseDilation != 0 {
			return 0, false
		}
		pos /= w.BaseDilation
		d := g.dn.InputSpatial[j]
		if pos >= g.lhs.Dims[d] {
			return 0, false
		}
		p += pos * g.lStr[d]
	}
	return p, true
}

// rhsOffset is the kernel offset (spatial part) of kernel position k.
func (g *convGeometry) rhsOffset(k []int64) int64 {
	var p int64
	for j, w := range g.win {
		kk := k[j]
		if w.WindowReversal {
			kk = g.kernelSpatial[j] - 1 - kk
		}
		p += kk * g.rStr[g.dn.KernelSpatial[j]]
	}
	return p
}

func newConvGeometry(in *hlo.Instruction, lhs, rhs hlo.Shape) (*convGeometry, error) {
	dn := in.Attrs.Conv
	if dn == nil {
		return nil, fmt.Errorf("convolution has no dimension numbers")
	}
	g := &convGeometry{dn: dn, win: in.Attrs.Window, lhs: lhs, rhs: rhs, out: in.Shape,
		lStr: lhs.Strides(), rStr: rhs.Strides()}
	if err := g.checkDims(); err != nil {
		return nil, err
	}
	fgc, bgc := groupCount(in.Attrs.FeatureGroupCount), groupCount(in.Attrs.BatchGroupCount)
	c, o, n := lhs.Dims[dn.InputFeature], rhs.Dims[dn.KernelOutput], lhs.Dims[dn.InputBatch]
	if c%fgc != 0 || rhs.Dims[dn.KernelInput] != c/fgc || o%fgc != 0 || o%bgc != 0 || n%bgc != 0 {
		return nil, fmt.Errorf("convolution of %v with kernel %v: feature_group_count %d and batch_group_count %d do not divide the features and batch",
			lhs, rhs, fgc, bgc)
	}
	g.inFeatPerGroup, g.outPerFGroup, g.outPerBGroup, g.batchPerGroup = c/fgc, o/fgc, o/bgc, n/bgc
	g.kernelSpatial = pick(rhs.Dims, dn.KernelSpatial)
	return g, g.checkOutput()
}

func groupCount(n int64) int64 {
	if n <= 0 {
		return 1
	}
	return n
}

// checkDims validates the dimension numbers and window against the operand ranks.
func (g *convGeometry) checkDims() error {
	dn, n := g.dn, len(g.dn.InputSpatial)
	if len(dn.KernelSpatial) != n || len(dn.OutputSpatial) != n || len(g.win) != n {
		return fmt.Errorf("convolution spatial dimensions: input %d, kernel %d, output %d, window %d",
			n, len(dn.KernelSpatial), len(dn.OutputSpatial), len(g.win))
	}
	if g.lhs.Rank() != n+2 || g.rhs.Rank() != n+2 || g.out.Rank() != n+2 {
		return fmt.Errorf("convolution ranks %v, %v → %v do not have %d spatial dimensions", g.lhs, g.rhs, g.out, n)
	}
	checks := []struct {
		what string
		dims []int64
		rank int
	}{
		{"input", append([]int64{dn.InputBatch, dn.InputFeature}, dn.InputSpatial...), g.lhs.Rank()},
		{"kernel", append([]int64{dn.KernelInput, dn.KernelOutput}, dn.KernelSpatial...), g.rhs.Rank()},
		{"output", append([]int64{dn.OutputBatch, dn.OutputFeature}, dn.OutputSpatial...), g.out.Rank()},
	}
	for _, c := range checks {
		if err := checkDimList("convolution "+c.what, c.dims, c.rank); err != nil {
			return err
		}
	}
	for j, w := range g.win {
		if w.Stride < 1 || w.WindowDilation < 1 || w.BaseDilation < 1 || w.Size != g.rhs.Dims[dn.KernelSpatial[j]] {
			return fmt.Errorf("convolution window dimension %d (%+v) invalid for kernel %v", j, w, g.rhs)
		}
	}
	return nil
}

// checkOutput compares the declared output dimensions with the geometry.
func (g *convGeometry) checkOutput() error {
	dn := g.dn
	if g.out.Dims[dn.OutputBatch] != g.batchPerGroup || g.out.Dims[dn.OutputFeature] != g.rhs.Dims[dn.KernelOutput] {
		return fmt.Errorf("convolution result %v: batch or feature size does not match the operands %v, %v", g.out, g.lhs, g.rhs)
	}
	for j, w := range g.win {
		want := windowOutputDim(g.lhs.Dims[dn.InputSpatial[j]], w)
		if got := g.out.Dims[dn.OutputSpatial[j]]; got != want {
			return fmt.Errorf("convolution spatial dimension %d gives %d positions, result declares %d", j, want, got)
		}
	}
	return nil
}
