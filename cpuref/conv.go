package cpuref

import (
	"fmt"
	"math"

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
	c, err := g.contraction()
	if err != nil {
		return nil, err
	}
	out := hlo.NewLiteral(in.Shape)
	if in.Shape.DType.IsComplex() {
		if err := sameComplexType(in, ops[0], ops[1]); err != nil {
			return nil, err
		}
		evalComplexDot(c, ops[0], ops[1], out)
		return out, nil
	}
	mac, err := newMacOperands(in.Shape.DType, ops[0], ops[1])
	if err != nil {
		return nil, err
	}
	mac.run(ev, c, ops[1], out)
	return out, nil
}

// contraction is the convolution as matrix products (contract.go): rows are the
// output positions (batch, then the output spatial dimensions in order), columns the
// output features of one group, and the contracting positions (c, k) run over c
// (outer) then the kernel positions k; a row's terms skip the positions on padding
// or in an lhs-dilation hole, as the serial sum does. A group is a run of output
// features with the same feature group and batch group.
func (g *convGeometry) contraction() (*contraction, error) {
	dn := g.dn
	nk := int64(1)
	for _, d := range g.kernelSpatial {
		nk *= d
	}
	if depth := g.inFeatPerGroup * nk; depth > math.MaxInt32 {
		return nil, fmt.Errorf("convolution contracts %d positions, over %d", depth, math.MaxInt32)
	}
	width := gcd(g.outPerFGroup, g.outPerBGroup)
	rowDims := append([]int64{g.out.Dims[dn.OutputBatch]}, pick(g.out.Dims, dn.OutputSpatial)...)
	var rowIdx [][]int64 // each row's output index (feature 0)
	forEachIndex(rowDims, func(r []int64) {
		idx := make([]int64, g.out.Rank())
		idx[dn.OutputBatch] = r[0]
		for j, d := range dn.OutputSpatial {
			idx[d] = r[1+j]
		}
		rowIdx = append(rowIdx, idx)
	})
	var kpos [][]int64
	var rhsOff []int64
	forEachIndex(g.kernelSpatial, func(k []int64) {
		kpos = append(kpos, append([]int64(nil), k...))
		rhsOff = append(rhsOff, g.rhsOffset(k))
	})
	oStr := g.out.Strides()
	rowOff := make([]int64, len(rowIdx))
	for r, idx := range rowIdx {
		for d, v := range idx {
			rowOff[r] += v * oStr[d]
		}
	}
	cols := int(width)
	return &contraction{
		groups: int(g.rhs.Dims[dn.KernelOutput] / max(width, 1)), rows: len(rowIdx), cols: cols,
		depth: int(g.inFeatPerGroup * nk),
		rhsIndex: func(grp, k, n int) int64 {
			o := int64(grp*cols + n)
			return int64(k)/nk*g.rStr[dn.KernelInput] + o*g.rStr[dn.KernelOutput] + rhsOff[int64(k)%nk]
		},
		outIndex: func(grp, r, n int) int { return int(rowOff[r] + int64(grp*cols+n)*oStr[dn.OutputFeature]) },
		terms: func(grp, r int, l []int64, k []int32) ([]int64, []int32) {
			o := int64(grp * cols)
			idx := rowIdx[r]
			lBase := (o/g.outPerBGroup*g.batchPerGroup+idx[dn.OutputBatch])*g.lStr[dn.InputBatch] +
				o/g.outPerFGroup*g.inFeatPerGroup*g.lStr[dn.InputFeature]
			start := len(l)
			var valid []int32 // the kernel positions inside the input, and their offsets
			for j, kk := range kpos {
				if lo, ok := g.lhsOffset(idx, kk); ok {
					l, valid = append(l, lBase+lo), append(valid, int32(j))
				}
			}
			offs := append([]int64(nil), l[start:]...)
			l = l[:start]
			for c := int64(0); c < g.inFeatPerGroup; c++ {
				lc := c * g.lStr[dn.InputFeature]
				for i, j := range valid {
					l, k = append(l, offs[i]+lc), append(k, int32(c*nk)+j)
				}
			}
			return l, k
		},
	}, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
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
