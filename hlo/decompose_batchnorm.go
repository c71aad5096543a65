package hlo

// decomposeBatchNorm lowers batch-norm-training, -inference and -grad to arithmetic
// and reductions in the operand's type, as XLA's BatchNormExpander does, with N the
// elements per feature:
//
//	mean = Σx/N, var = Σ(x−mean)²/N (two passes, not E[x²]−mean², for accuracy)
//	y = (x−mean)·(rsqrt(var+ε)·scale) + offset
//	grad_offset = Σdy, grad_scale = Σ dy·(x−mean) · rsqrt(var+ε)
//	grad_x = (scale·rsqrt(var+ε)/N) · (N·dy − grad_offset − (x−mean)·rsqrt(var+ε)·grad_scale)
//
// f16 and bf16 operands are computed in f32 and the results rounded once, as the
// sums over a batch would otherwise lose most of a half's 11 (or 8) bits.
func decomposeBatchNorm(in *Instruction) (*Computation, error) {
	b, args := operandParams(in)
	dt := args[0].Shape.DType
	wide := dt
	if dt.Bits() < 32 {
		wide = F32
	}
	for i, a := range args {
		args[i] = convertTo(b, a, wide)
	}
	bn := newBatchNorm(b, in, args[0])
	var results []*Instruction
	switch in.Op {
	case OpBatchNormTraining:
		results = bn.training(args[1], args[2])
	case OpBatchNormInference:
		results = bn.inference(args[1], args[2], args[3], args[4])
	default:
		results = bn.grad(args[1], args[2], args[3], args[4])
	}
	for i, r := range results {
		results[i] = convertTo(b, r, dt)
	}
	if len(results) == 1 {
		return b.BuildComputation(results[0])
	}
	return b.BuildComputation(b.Tuple(results...))
}

// convertTo converts x to dt unless it has that type already.
func convertTo(b *Builder, x *Instruction, dt DType) *Instruction {
	if x == nil || x.Shape.DType == dt {
		return x
	}
	return b.Convert(x, dt)
}

// batchNorm builds one batch-norm op's arithmetic over x.
type batchNorm struct {
	b       *Builder
	x       *Instruction
	fi      int64
	dt      DType
	c       int64
	n       float64 // elements per feature
	reduced []int64 // every dimension but the feature's
	eps     float32
}

func newBatchNorm(b *Builder, in, x *Instruction) *batchNorm {
	s := x.Shape
	bn := &batchNorm{b: b, x: x, fi: in.Attrs.FeatureIndex, dt: s.DType, eps: in.Attrs.Epsilon}
	bn.c = s.Dims[bn.fi]
	bn.n = 1
	for d, size := range s.Dims {
		if int64(d) != bn.fi {
			bn.reduced = append(bn.reduced, int64(d))
			bn.n *= float64(size)
		}
	}
	return bn
}

// perFeature is a scalar constant broadcast to f[C].
func (bn *batchNorm) perFeature(v float64) *Instruction {
	return bn.b.BroadcastScalar(bn.b.ScalarConstant(bn.dt, v), bn.c)
}

// spread broadcasts an f[C] value along x's feature dimension.
func (bn *batchNorm) spread(v *Instruction) *Instruction {
	return bn.b.Broadcast(v, bn.x.Shape.Dims, []int64{bn.fi})
}

// sum reduces an x-shaped value to f[C].
func (bn *batchNorm) sum(v *Instruction) *Instruction {
	b := bn.b
	return b.Reduce([]*Instruction{v}, []*Instruction{b.ScalarConstant(bn.dt, 0)}, b.Reducer(OpAdd, bn.dt), bn.reduced)
}

func (bn *batchNorm) rstd(variance *Instruction) *Instruction {
	return bn.b.Rsqrt(bn.b.Add(variance, bn.perFeature(float64(bn.eps))))
}

// normalize is (x−mean)·(rstd·scale) + offset, from x − mean.
func (bn *batchNorm) normalize(centered, rstd, scale, offset *Instruction) *Instruction {
	b := bn.b
	return b.Add(b.Mul(centered, bn.spread(b.Mul(rstd, scale))), bn.spread(offset))
}

func (bn *batchNorm) training(scale, offset *Instruction) []*Instruction {
	b := bn.b
	count := bn.perFeature(bn.n)
	mean := b.Div(bn.sum(bn.x), count)
	centered := b.Sub(bn.x, bn.spread(mean))
	variance := b.Div(bn.sum(b.Mul(centered, centered)), count)
	return []*Instruction{bn.normalize(centered, bn.rstd(variance), scale, offset), mean, variance}
}

func (bn *batchNorm) inference(scale, offset, mean, variance *Instruction) []*Instruction {
	centered := bn.b.Sub(bn.x, bn.spread(mean))
	return []*Instruction{bn.normalize(centered, bn.rstd(variance), scale, offset)}
}

func (bn *batchNorm) grad(scale, mean, variance, dy *Instruction) []*Instruction {
	b := bn.b
	rstd := bn.rstd(variance)
	centered := b.Sub(bn.x, bn.spread(mean))
	gradOffset := bn.sum(dy)
	gradScale := b.Mul(bn.sum(b.Mul(dy, centered)), rstd)
	count := b.BroadcastScalar(b.ScalarConstant(bn.dt, bn.n), bn.x.Shape.Dims...)
	inner := b.Sub(b.Sub(b.Mul(dy, count), bn.spread(gradOffset)),
		b.Mul(b.Mul(centered, bn.spread(rstd)), bn.spread(gradScale)))
	factor := b.Div(b.Mul(scale, rstd), bn.perFeature(bn.n))
	return []*Instruction{b.Mul(bn.spread(factor), inner), gradScale, gradOffset}
}
