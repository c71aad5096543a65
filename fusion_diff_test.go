package vkxla_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/bench"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// fusionCase is a program for the fused-vs-unfused-vs-cpuref tests: the module
// build returns, its inputs, the kernels (dispatches) it may take fused, and the
// tolerance against cpuref (nil: the program's, from the tolerance table).
type fusionCase struct {
	name       string
	build      func(b *hlo.Builder) *hlo.Instruction
	inputs     func(rng *rand.Rand, m *hlo.Module) []*hlo.Literal
	maxKernels int
	spec       *vkxla.ErrorSpec
}

// runFusionCases compiles each case with fusion on and off and checks both against
// cpuref, and the fused program's dispatch count.
func runFusionCases(t *testing.T, cases []fusionCase) {
	rt := newRuntime(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := hlo.NewBuilder(sanitize(tc.name))
			m := mustBuild(t, b, tc.build(b))
			inputs := randomInputs(rand.New(rand.NewPCG(5, 7)), m)
			if tc.inputs != nil {
				inputs = tc.inputs(rand.New(rand.NewPCG(5, 7)), m)
			}
			spec := vkxla.ProgramTolerance(m, hlo.F32)
			if tc.spec != nil {
				spec = *tc.spec
			}
			want, err := cpuref.Eval(m, inputs...)
			require.NoError(t, err)
			for _, fused := range []bool{true, false} {
				var opts []vkxla.CompileOption
				if !fused {
					opts = append(opts, vkxla.WithoutPasses("fusion"))
				}
				got, kernels := runCounting(t, rt, m, opts, inputs)
				for i, w := range want.Leaves() {
					require.NoError(t, spec.Check(got[i], w), "fused=%v output %d (tolerance %+v)", fused, i, spec)
				}
				if fused {
					require.LessOrEqual(t, kernels, tc.maxKernels, "fused kernels")
				}
			}
		})
	}
}

// randomInputs draws each parameter uniformly from [-1, 1] (integers: random bits).
func randomInputs(rng *rand.Rand, m *hlo.Module) []*hlo.Literal {
	inputs := make([]*hlo.Literal, len(m.Entry.Params))
	for i, p := range m.Entry.Params {
		inputs[i] = randomLiteral(rng, p.Shape, unitDomain)
	}
	return inputs
}

// runCounting compiles and runs m once and returns its outputs and the number of
// dispatches the run made.
func runCounting(t *testing.T, rt *vkxla.Runtime, m *hlo.Module, opts []vkxla.CompileOption, inputs []*hlo.Literal) ([]*hlo.Literal, int) {
	t.Helper()
	ctx := context.Background()
	exe, err := rt.Compile(ctx, m, append(opts, vkxla.WithProfiling(true))...)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	got, err := exe.Run(ctx, inputs...)
	require.NoError(t, err)
	p, err := exe.Profile()
	require.NoError(t, err)
	n := 0
	for _, k := range p.Kernels {
		n += k.Dispatches
	}
	return got, n
}

// rowReduce reduces x over its minor dims from n on with op.
func rowReduce(b *hlo.Builder, x *hlo.Instruction, op hlo.Opcode, init float64, n int) *hlo.Instruction {
	dt := x.Shape.DType
	var dims []int64
	for d := n; d < x.Shape.Rank(); d++ {
		dims = append(dims, int64(d))
	}
	return b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.ScalarConstant(dt, init)}, b.Reducer(op, dt), dims)
}

// alongRows broadcasts a row value r back over x's dims.
func alongRows(b *hlo.Builder, r, x *hlo.Instruction) *hlo.Instruction {
	dims := make([]int64, r.Shape.Rank())
	for i := range dims {
		dims[i] = int64(i)
	}
	return b.Broadcast(r, x.Shape.Dims, dims)
}

// extremeRows fills x's rows with NaN, ±0, ±inf and ordinary values, a row per
// pattern, so that max and min meet every edge of their order.
func extremeRows(x hlo.Shape) *hlo.Literal {
	lit := hlo.NewLiteral(x)
	cols := int(x.Dims[x.Rank()-1])
	pattern := [][]float64{
		{negZero(), 0}, {0, negZero()}, {negZero(), negZero()}, {nan64(), 1}, {1, nan64(), -inf()},
		{inf(), -inf()}, {-inf(), -inf()}, {-3, 2, 0.5}, {math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32},
		{-0.5, -3, 2, 0.25, -7, 6}, {-1e-3, -2e-3, -1e30, -5},
	}
	for i := range lit.NumElements() {
		row, col := i/cols, i%cols
		p := pattern[row%len(pattern)]
		lit.SetFloat64(i, p[col%len(p)])
	}
	return lit
}

// TestRowFusionDifferential runs the row kernels (docs/passes.md, "Row fusion") fused
// and unfused against cpuref: subgroup rows (f32 add, max and min, s32) and
// single-invocation rows (f16 sums, a product reducer), vec4 and scalar sweeps, row
// and column ranks above one, and the special values whose order max and min
// keep. Softmax and layernorm take one kernel fused.
func TestRowFusionDifferential(t *testing.T) {
	exact := &vkxla.ErrorSpec{}
	softmax := func(rows, cols int64) func(b *hlo.Builder) *hlo.Instruction {
		return func(b *hlo.Builder) *hlo.Instruction { return bench.Softmax(b, rows, cols) }
	}
	layernorm := func(rows, cols int64) func(b *hlo.Builder) *hlo.Instruction {
		return func(b *hlo.Builder) *hlo.Instruction { return bench.LayerNorm(b, rows, cols) }
	}
	rowExtreme := func(op hlo.Opcode, init float64) func(b *hlo.Builder) *hlo.Instruction {
		return func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(f32(18, 12), "x")
			return alongRows(b, rowReduce(b, x, op, init, 1), x)
		}
	}
	special := func(_ *rand.Rand, m *hlo.Module) []*hlo.Literal {
		return []*hlo.Literal{extremeRows(m.Entry.Params[0].Shape)}
	}
	runFusionCases(t, []fusionCase{
		{name: "softmax 37x129 (scalar sweep)", build: softmax(37, 129), maxKernels: 1},
		{name: "softmax 64x1024 (vec4 sweep)", build: softmax(64, 1024), maxKernels: 1},
		{name: "softmax 5x3 (rows shorter than a subgroup)", build: softmax(5, 3), maxKernels: 1},
		{name: "softmax of a product, in place over it", build: softmaxOfProduct(false), maxKernels: 2},
		{name: "softmax of a product plus the product (exp computed twice)", build: softmaxOfProduct(true), maxKernels: 2},
		{name: "bf16 softmax (exp kept in the bf16 output)", build: softmaxBF16, maxKernels: 1},
		{name: "layernorm 16x96", build: layernorm(16, 96), maxKernels: 1},
		{name: "layernorm 300x40", build: layernorm(300, 40), maxKernels: 1},
		{name: "rank-2 rows and columns", maxKernels: 1, build: func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(f32(3, 5, 4, 8), "x")
			mean := b.Div(rowReduce(b, x, hlo.OpAdd, 0, 2), b.BroadcastScalar(b.ScalarConstant(hlo.F32, 32), 3, 5))
			xc := b.Sub(x, alongRows(b, mean, x))
			return b.Mul(xc, alongRows(b, b.Rsqrt(rowReduce(b, b.Mul(xc, xc), hlo.OpAdd, 1, 2)), x))
		}},
		{name: "f32 row max with NaN and signed zeros", build: rowExtreme(hlo.OpMaximum, math.Inf(-1)), inputs: special, maxKernels: 1, spec: exact},
		{name: "f32 row min with NaN and signed zeros", build: rowExtreme(hlo.OpMinimum, math.Inf(1)), inputs: special, maxKernels: 1, spec: exact},
		{name: "f32 row max", build: rowExtreme(hlo.OpMaximum, math.Inf(-1)), maxKernels: 1, spec: exact},
		{name: "f32 row min", build: rowExtreme(hlo.OpMinimum, math.Inf(1)), maxKernels: 1, spec: exact},
		{name: "f32 row max from a NaN init", build: rowExtreme(hlo.OpMaximum, math.NaN()), inputs: special, maxKernels: 1, spec: exact},
		{name: "s32 rows: x - max + sum", maxKernels: 1, spec: exact, build: func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(hlo.MakeShape(hlo.S32, 9, 20), "x")
			d := b.Sub(x, alongRows(b, rowReduce(b, x, hlo.OpMaximum, math.MinInt32, 1), x))
			return b.Add(d, alongRows(b, rowReduce(b, d, hlo.OpAdd, 0, 1), x))
		}},
		{name: "f16 row sums (one invocation per row, cpuref's order)", maxKernels: 1, spec: exact, build: func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(hlo.MakeShape(hlo.F16, 7, 24), "x")
			return b.Sub(x, alongRows(b, rowReduce(b, x, hlo.OpAdd, 0, 1), x))
		}},
		{name: "f32 row product (one invocation per row, cpuref's order)", maxKernels: 1, spec: exact, build: func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(f32(11, 16), "x")
			return b.Mul(x, alongRows(b, rowReduce(b, x, hlo.OpMultiply, 1, 1), x))
		}},
	})
}

// softmaxOfProduct is softmax(p) over the rows of the product p = a·w, plus p when
// plusP: p dies at the softmax's row kernel, which may then write over it, and
// which keeps exp(p − max) in its output buffer between sweeps unless a later
// sweep reads p itself (plusP), which the early store would have overwritten.
func softmaxOfProduct(plusP bool) func(b *hlo.Builder) *hlo.Instruction {
	return func(b *hlo.Builder) *hlo.Instruction {
		a, w := b.Parameter(f32(24, 16), "a"), b.Parameter(f32(16, 64), "w")
		p := b.Dot(a, w)
		e := b.Exp(b.Sub(p, alongRows(b, rowReduce(b, p, hlo.OpMaximum, math.Inf(-1), 1), p)))
		y := b.Div(e, alongRows(b, rowReduce(b, e, hlo.OpAdd, 0, 1), p))
		if plusP {
			y = b.Add(y, p)
		}
		return y
	}
}

// softmaxBF16 is softmax over the rows of bf16[12, 40], computed in f32 and rounded
// to bf16 at each op, as XLA does.
func softmaxBF16(b *hlo.Builder) *hlo.Instruction {
	x := b.Parameter(hlo.MakeShape(hlo.BF16, 12, 40), "x")
	e := b.Exp(b.Sub(x, alongRows(b, rowReduce(b, x, hlo.OpMaximum, math.Inf(-1), 1), x)))
	return b.Div(e, alongRows(b, rowReduce(b, e, hlo.OpAdd, 0, 1), x))
}

// epilogue builds act(dot(x, w) + bias) for x of dims [batch..., m, k] and w [batch..., k, n]
// of type dt, the bias a row of n broadcast over the product.
func epilogue(dt hlo.DType, batch []int64, m, k, n int64, act func(b *hlo.Builder, h *hlo.Instruction) *hlo.Instruction) func(b *hlo.Builder) *hlo.Instruction {
	return func(b *hlo.Builder) *hlo.Instruction {
		x := b.Parameter(hlo.MakeShape(dt, append(append([]int64{}, batch...), m, k)...), "x")
		w := b.Parameter(hlo.MakeShape(dt, append(append([]int64{}, batch...), k, n)...), "w")
		bias := b.Parameter(hlo.MakeShape(dt, n), "bias")
		var bd []int64
		for i := range batch {
			bd = append(bd, int64(i))
		}
		r := int64(len(batch))
		d := b.DotGeneral(x, w, hlo.DotDims{LhsBatch: bd, RhsBatch: bd, LhsContracting: []int64{r + 1}, RhsContracting: []int64{r}})
		h := b.Add(d, b.Broadcast(bias, d.Shape.Dims, []int64{r + 1}))
		return act(b, h)
	}
}

// gelu is the tanh approximation frontends emit: 0.5·h·(1 + tanh(√(2/π)·(h + 0.044715·h³))).
func gelu(b *hlo.Builder, h *hlo.Instruction) *hlo.Instruction {
	c := func(v float64) *hlo.Instruction {
		return b.BroadcastScalar(b.ScalarConstant(h.Shape.DType, v), h.Shape.Dims...)
	}
	inner := b.Mul(c(math.Sqrt(2/math.Pi)), b.Add(h, b.Mul(c(0.044715), b.Mul(h, b.Mul(h, h)))))
	return b.Mul(b.Mul(c(0.5), h), b.Add(c(1), b.Tanh(inner)))
}

// TestEpilogueFusionDifferential runs dot epilogues (docs/passes.md, "Dot
// epilogues") fused into the GEMM's output stage and unfused against cpuref: bias
// and every activation, a residual add written in place, converts both ways,
// batched products, a column count the vec4 store cannot take, and a product too
// small for the GEMM (the elemental dot). Each is one kernel fused.
func TestEpilogueFusionDifferential(t *testing.T) {
	scalar := func(b *hlo.Builder, h *hlo.Instruction, v float64) *hlo.Instruction {
		return b.BroadcastScalar(b.ScalarConstant(h.Shape.DType, v), h.Shape.Dims...)
	}
	relu := func(b *hlo.Builder, h *hlo.Instruction) *hlo.Instruction { return b.Max(h, scalar(b, h, 0)) }
	relu6 := func(b *hlo.Builder, h *hlo.Instruction) *hlo.Instruction {
		return b.Clamp(b.ScalarConstant(h.Shape.DType, 0), h, b.ScalarConstant(h.Shape.DType, 6))
	}
	erfGelu := func(b *hlo.Builder, h *hlo.Instruction) *hlo.Instruction {
		return b.Mul(b.Mul(scalar(b, h, 0.5), h), b.Add(scalar(b, h, 1), b.Erf(b.Mul(h, scalar(b, h, 1/math.Sqrt2)))))
	}
	unary := func(op hlo.Opcode) func(b *hlo.Builder, h *hlo.Instruction) *hlo.Instruction {
		return func(b *hlo.Builder, h *hlo.Instruction) *hlo.Instruction { return b.Unary(op, h) }
	}
	runFusionCases(t, []fusionCase{
		{name: "dot+bias+gelu (an MLP layer)", build: epilogue(hlo.F32, nil, 64, 128, 96, gelu), maxKernels: 1},
		{name: "dot+bias+erf gelu", build: epilogue(hlo.F32, nil, 48, 64, 40, erfGelu), maxKernels: 1},
		{name: "dot+bias+relu", build: epilogue(hlo.F32, nil, 64, 64, 64, relu), maxKernels: 1},
		{name: "dot+bias+relu6 (clamp)", build: epilogue(hlo.F32, nil, 33, 70, 36, relu6), maxKernels: 1},
		{name: "dot+bias+tanh", build: epilogue(hlo.F32, nil, 40, 64, 24, unary(hlo.OpTanh)), maxKernels: 1},
		{name: "dot+bias+logistic, N not a multiple of 4", build: epilogue(hlo.F32, nil, 40, 64, 30, unary(hlo.OpLogistic)), maxKernels: 1},
		{name: "batched dot+bias+scale", maxKernels: 1, build: epilogue(hlo.F32, []int64{3}, 20, 32, 28, func(b *hlo.Builder, h *hlo.Instruction) *hlo.Instruction {
			return b.Mul(h, scalar(b, h, 0.125))
		})},
		{name: "bf16 dot+bias, converted to f32", maxKernels: 1, build: epilogue(hlo.BF16, nil, 32, 64, 32, func(b *hlo.Builder, h *hlo.Instruction) *hlo.Instruction {
			return b.Convert(h, hlo.F32)
		})},
		{name: "f32 dot+bias+relu, converted to bf16", maxKernels: 1, build: epilogue(hlo.F32, nil, 32, 64, 32, func(b *hlo.Builder, h *hlo.Instruction) *hlo.Instruction {
			return b.Convert(relu(b, h), hlo.BF16)
		})},
		{name: "f16 dot+bias+tanh", build: epilogue(hlo.F16, nil, 32, 48, 32, unary(hlo.OpTanh)), maxKernels: 1},
		{name: "small dot+bias+relu (elemental dot)", build: epilogue(hlo.F32, nil, 4, 6, 5, relu), maxKernels: 1},
		{name: "dot+residual (in place over the residual)", maxKernels: 1, build: func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(f32(64, 96), "x")
			w := b.Parameter(f32(96, 96), "w")
			res := b.Parameter(f32(64, 96), "res")
			return b.Add(b.Dot(x, w), b.Exp(res))
		}},
	})
}

// adam returns one Adam update of a parameter of type dt and dims: p − lr·m'/(√v' + ε)
// with m' = β1·m + (1−β1)·g and v' = β2·v + (1−β2)·g², returning (p', m', v').
func adam(dt hlo.DType, dims ...int64) func(b *hlo.Builder) *hlo.Instruction {
	return func(b *hlo.Builder) *hlo.Instruction {
		s := hlo.MakeShape(dt, dims...)
		p, g := b.Parameter(s, "p"), b.Parameter(s, "g")
		m, v := b.Parameter(s, "m"), b.Parameter(s, "v")
		lr := b.Parameter(hlo.Scalar(dt), "lr")
		c := func(x float64) *hlo.Instruction { return b.BroadcastScalar(b.ScalarConstant(dt, x), dims...) }
		mn := b.Add(b.Mul(c(0.9), m), b.Mul(c(0.1), g))
		vn := b.Add(b.Mul(c(0.999), v), b.Mul(c(0.001), b.Mul(g, g)))
		step := b.Mul(b.BroadcastScalar(lr, dims...), b.Div(mn, b.Add(b.Sqrt(vn), c(1e-8))))
		return b.Tuple(b.Sub(p, step), mn, vn)
	}
}

// TestMultiOutputFusionDifferential runs multi-output kernels (docs/passes.md,
// "Multi-output fusion") fused and unfused against cpuref: an Adam update of one
// tensor is one kernel writing p', m' and v' (vec4 and scalar, f32 and f16).
func TestMultiOutputFusionDifferential(t *testing.T) {
	positive := func(rng *rand.Rand, m *hlo.Module) []*hlo.Literal {
		in := randomInputs(rng, m)
		v := in[3] // the second moment is non-negative
		for i := range v.NumElements() {
			v.SetFloat64(i, math.Abs(v.Float64(i)))
		}
		return in
	}
	runFusionCases(t, []fusionCase{
		{name: "adam f32[256,64]", build: adam(hlo.F32, 256, 64), inputs: positive, maxKernels: 1},
		{name: "adam f32[7,9]", build: adam(hlo.F32, 7, 9), inputs: positive, maxKernels: 1},
		{name: "adam f16[40]", build: adam(hlo.F16, 40), inputs: positive, maxKernels: 1},
	})
}
