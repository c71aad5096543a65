package cpuref

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// The batch-norm ops, defined directly from XLA's formulas in float64 (the
// expander pass lowers them to HLO arithmetic in the operand's type):
//
//	mean_c = Σ x / N, var_c = Σ (x − mean_c)² / N   (N: elements per feature c)
//	y = (x − mean_c) · rsqrt(var_c + ε) · scale_c + offset_c
//
// and for the gradient, with x̂ = (x − mean_c) · rsqrt(var_c + ε):
//
//	grad_offset_c = Σ dy, grad_scale_c = Σ dy · x̂
//	grad_x = scale_c · rsqrt(var_c + ε) / N · (N·dy − grad_offset_c − x̂ · grad_scale_c)

// featureOf returns, for each element of x, its feature index, and the feature count.
func featureOf(x *hlo.Literal, fi int64) ([]int, int) {
	s := x.Shape()
	c := s.Dims[fi]
	stride := int64(1)
	for d := int(fi) + 1; d < s.Rank(); d++ {
		stride *= s.Dims[d]
	}
	feat := make([]int, x.NumElements())
	for i := range feat {
		feat[i] = int((int64(i) / stride) % c)
	}
	return feat, int(c)
}

// channelMoments returns the per-feature mean and (biased) variance.
func channelMoments(x *hlo.Literal, feat []int, c int) (mean, variance []float64) {
	mean, variance = make([]float64, c), make([]float64, c)
	n := float64(len(feat)) / float64(c)
	for i, f := range feat {
		mean[f] += x.Float64(i)
	}
	for f := range mean {
		mean[f] /= n
	}
	for i, f := range feat {
		d := x.Float64(i) - mean[f]
		variance[f] += d * d
	}
	for f := range variance {
		variance[f] /= n
	}
	return mean, variance
}

func perFeature(dt hlo.DType, vals []float64) *hlo.Literal {
	l := hlo.NewLiteral(hlo.MakeShape(dt, int64(len(vals))))
	for i, v := range vals {
		l.SetFloat64(i, v)
	}
	return l
}

// normalize returns (x − mean)·rsqrt(var + ε)·scale + offset.
func normalize(x *hlo.Literal, feat []int, mean, variance, scale, offset []float64, eps float64) *hlo.Literal {
	y := hlo.NewLiteral(x.Shape())
	for i, f := range feat {
		y.SetFloat64(i, (x.Float64(i)-mean[f])/math.Sqrt(variance[f]+eps)*scale[f]+offset[f])
	}
	return y
}

func evalBatchNormTraining(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	feat, c := featureOf(x, in.Attrs.FeatureIndex)
	mean, variance := channelMoments(x, feat, c)
	y := normalize(x, feat, mean, variance, decodeF64(ops[1]), decodeF64(ops[2]), float64(in.Attrs.Epsilon))
	return hlo.TupleLiteral(y, perFeature(x.DType(), mean), perFeature(x.DType(), variance)), nil
}

func evalBatchNormInference(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	feat, _ := featureOf(x, in.Attrs.FeatureIndex)
	return normalize(x, feat, decodeF64(ops[3]), decodeF64(ops[4]), decodeF64(ops[1]),
		decodeF64(ops[2]), float64(in.Attrs.Epsilon)), nil
}

func evalBatchNormGrad(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x, dy := ops[0], ops[4]
	scale, mean, variance := decodeF64(ops[1]), decodeF64(ops[2]), decodeF64(ops[3])
	feat, c := featureOf(x, in.Attrs.FeatureIndex)
	n := float64(len(feat)) / float64(c)
	eps := float64(in.Attrs.Epsilon)
	rstd := make([]float64, c)
	for f := range rstd {
		rstd[f] = 1 / math.Sqrt(variance[f]+eps)
	}
	gOffset, gScale := make([]float64, c), make([]float64, c)
	for i, f := range feat {
		gOffset[f] += dy.Float64(i)
		gScale[f] += dy.Float64(i) * (x.Float64(i) - mean[f]) * rstd[f]
	}
	gx := hlo.NewLiteral(x.Shape())
	for i, f := range feat {
		xhat := (x.Float64(i) - mean[f]) * rstd[f]
		gx.SetFloat64(i, scale[f]*rstd[f]/n*(n*dy.Float64(i)-gOffset[f]-xhat*gScale[f]))
	}
	dt := x.DType()
	return hlo.TupleLiteral(gx, perFeature(dt, gScale), perFeature(dt, gOffset)), nil
}
