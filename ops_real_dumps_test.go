package vkxla_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// Differential cases of the ops real XLA and JAX dumps contain that expander passes
// lower (map, mulhi, topk, triangular-solve, cholesky), each written as HLO text
// the way the dumps print it (layouts, numbered names) and compared with cpuref's
// own definition of the op.

func init() {
	opCases[hlo.OpMap] = mapCases
	opCases[hlo.OpMulHi] = mulHiCases
	opCases[hlo.OpTopK] = topKCases
	opCases[hlo.OpTriangularSolve] = triangularSolveCases
	opCases[hlo.OpCholesky] = choleskyCases
	opCases[hlo.OpBitcast] = layoutBitcastCases
}

// textCase parses a dump into a differential case.
func textCase(t testing.TB, name, text string, spec vkxla.ErrorSpec, inputs ...*hlo.Literal) opCase {
	t.Helper()
	m, err := hlo.ParseModule(text)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return opCase{name: name, module: m, inputs: inputs, spec: spec}
}

// uniform fills a literal of shape s with values in [lo, hi), plus add on the
// diagonal of its trailing square matrices when diag.
func uniform(g *gen, s hlo.Shape, lo, hi, diag float64) *hlo.Literal {
	l := hlo.NewLiteral(s)
	n := s.Dims[s.Rank()-1]
	for i := range l.NumElements() {
		v := lo + (hi-lo)*g.rng.Float64()
		if s.Rank() >= 2 && int64(i)/n%s.Dims[s.Rank()-2] == int64(i)%n {
			v += diag
		}
		if s.DType.IsFloat() {
			l.SetFloat64(i, v)
		} else {
			l.SetInt64(i, int64(math.Floor(v)))
		}
	}
	return l
}

func randomBits(g *gen, s hlo.Shape) *hlo.Literal {
	l := hlo.NewLiteral(s)
	for i := range l.NumElements() {
		l.SetBits(i, g.rng.Uint64())
	}
	return l
}

func has(g *gen, dt hlo.DType) bool {
	for _, d := range g.dtypes {
		if d == dt {
			return true
		}
	}
	return false
}

// mapCases: a JAX-style body with a constant, a compare and select and a convert
// over two element types, and XLA's MapBinaryAdder.
func mapCases(t testing.TB, g *gen) []opCase {
	relu := textCase(t, "relu_scaled f32×s32", `HloModule jit_map_relu, entry_computation_layout={(f32[4,33]{1,0}, s32[4,33]{1,0})->f32[4,33]{1,0}}
relu_scaled.4 {
  x.5 = f32[] parameter(0)
  n.6 = s32[] parameter(1)
  zero.7 = f32[] constant(0)
  gt.8 = pred[] compare(x.5, zero.7), direction=GT
  sel.9 = f32[] select(gt.8, x.5, zero.7)
  cvt.10 = f32[] convert(n.6)
  ROOT mul.11 = f32[] multiply(sel.9, cvt.10)
}
ENTRY main.12 {
  Arg_0.1 = f32[4,33]{1,0} parameter(0)
  Arg_1.2 = s32[4,33]{1,0} parameter(1)
  ROOT map.3 = f32[4,33]{1,0} map(Arg_0.1, Arg_1.2), dimensions={0,1}, to_apply=relu_scaled.4
}`, vkxla.Tolerance(hlo.OpMultiply, hlo.F32),
		uniform(g, hlo.MakeShape(hlo.F32, 4, 33), -1, 1, 0), uniform(g, hlo.MakeShape(hlo.S32, 4, 33), -9, 9, 0))
	adder := textCase(t, "MapBinaryAdder s32", `HloModule MapBinaryAdder.v3
add_S32.v3 {
  lhs = s32[] parameter(0)
  rhs = s32[] parameter(1)
  ROOT add = s32[] add(lhs, rhs)
}
ENTRY MapBinaryAdder.v3 {
  param0 = s32[70]{0} parameter(0)
  param1 = s32[70]{0} parameter(1)
  ROOT map = s32[70]{0} map(param0, param1), dimensions={0}, to_apply=add_S32.v3
}`, exact(), randomBits(g, hlo.MakeShape(hlo.S32, 70)), randomBits(g, hlo.MakeShape(hlo.S32, 70)))
	return []opCase{relu, adder}
}

// mulHiCases: every integer type the device has, on random bits (edges included
// by chance of the high bits) — the expansion must be exact.
func mulHiCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range []hlo.DType{hlo.S8, hlo.U16, hlo.S32, hlo.U32, hlo.S64, hlo.U64} {
		if !has(g, dt) || (dt.Bits() < 64 && !has(g, map[bool]hlo.DType{true: hlo.S64, false: hlo.U64}[dt.IsSigned()])) {
			continue
		}
		s := hlo.MakeShape(dt, 3, 41)
		x, y := randomBits(g, s), randomBits(g, s)
		for i := range 4 { // the extremes: min·min, min·max, max·max, −1·−1 for signed
			x.SetBits(i, []uint64{1 << (dt.Bits() - 1), 1 << (dt.Bits() - 1), math.MaxUint64, math.MaxUint64}[i])
			y.SetBits(i, []uint64{1 << (dt.Bits() - 1), 1<<(dt.Bits()-1) - 1, math.MaxUint64 >> 1, math.MaxUint64}[i])
		}
		out = append(out, textCase(t, dt.String(), fmt.Sprintf(`HloModule jit_mulhi
ENTRY main.4 {
  Arg_0.1 = %[1]v[3,41]{1,0} parameter(0)
  Arg_1.2 = %[1]v[3,41]{1,0} parameter(1)
  ROOT mulhi.3 = %[1]v[3,41]{1,0} mulhi(Arg_0.1, Arg_1.2)
}`, dt), exact(), x, y))
	}
	return out
}

// topKCases: jax.lax.top_k's dump, largest and smallest, f32 (with ties: values on
// a coarse grid) and s32.
func topKCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range []hlo.DType{hlo.F32, hlo.S32} {
		x := uniform(g, hlo.MakeShape(dt, 5, 130), -20, 20, 0)
		if dt == hlo.F32 {
			for i := range x.NumElements() {
				x.SetFloat64(i, math.Round(x.Float64(i))/4)
			}
		}
		for _, largest := range []bool{true, false} {
			out = append(out, textCase(t, fmt.Sprintf("%v/largest=%v", dt, largest), fmt.Sprintf(`HloModule jit_top_k
ENTRY main.6 {
  Arg_0.1 = %[1]v[5,130]{1,0} parameter(0)
  topk.2 = (%[1]v[5,7]{1,0}, s32[5,7]{1,0}) topk(Arg_0.1), k=7, largest=%[2]v
  get-tuple-element.3 = %[1]v[5,7]{1,0} get-tuple-element(topk.2), index=0
  get-tuple-element.4 = s32[5,7]{1,0} get-tuple-element(topk.2), index=1
  ROOT tuple.5 = (%[1]v[5,7]{1,0}, s32[5,7]{1,0}) tuple(get-tuple-element.3, get-tuple-element.4)
}`, dt, largest), exact(), x))
		}
	}
	return out
}

// triangularSolveCases: jax.scipy.linalg.solve_triangular's dumps, batched, on
// matrices with 4 added to the diagonal (well conditioned), every transpose kind
// on the left and the right side.
func triangularSolveCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range []hlo.DType{hlo.F32, hlo.F64} {
		if !has(g, dt) {
			continue
		}
		a := uniform(g, hlo.MakeShape(dt, 2, 3, 9, 9), -1, 1, 4)
		for i, opts := range []string{"left_side=true, lower=true, transpose_a=NO_TRANSPOSE",
			"left_side=true, transpose_a=TRANSPOSE", "left_side=true, lower=true, unit_diagonal=true, transpose_a=ADJOINT",
			"lower=true, transpose_a=NO_TRANSPOSE", "transpose_a=TRANSPOSE"} {
			bDims := "[2,3,9,5]"
			if i >= 3 {
				bDims = "[2,3,5,9]"
			}
			var bs hlo.Shape
			if i >= 3 {
				bs = hlo.MakeShape(dt, 2, 3, 5, 9)
			} else {
				bs = hlo.MakeShape(dt, 2, 3, 9, 5)
			}
			out = append(out, textCase(t, fmt.Sprintf("%v/%s", dt, opts), fmt.Sprintf(`HloModule jit_solve_triangular
ENTRY main.4 {
  Arg_0.1 = %[1]v[2,3,9,9]{3,2,1,0} parameter(0)
  Arg_1.2 = %[1]v%[2]s{3,2,1,0} parameter(1)
  ROOT triangular-solve.3 = %[1]v%[2]s{3,2,1,0} triangular-solve(Arg_0.1, Arg_1.2), %[3]s
}`, dt, bDims, opts), vkxla.Tolerance(hlo.OpTriangularSolve, dt), a, uniform(g, bs, -1, 1, 0)))
		}
	}
	return out
}

// choleskyCases: jnp.linalg.cholesky's dump of x·xᵀ + 12·I (positive definite,
// well conditioned) in both triangles, batched, and a batch holding a matrix that
// is not positive definite: its factor is NaN throughout, as XLA's.
func choleskyCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range []hlo.DType{hlo.F32, hlo.F64} {
		if !has(g, dt) {
			continue
		}
		for _, lower := range []bool{true, false} {
			out = append(out, textCase(t, fmt.Sprintf("%v/lower=%v", dt, lower), fmt.Sprintf(`HloModule jit_cholesky
ENTRY main.11 {
  Arg_0.1 = %[1]v[4,12,12]{2,1,0} parameter(0)
  dot.2 = %[1]v[4,12,12]{2,1,0} dot(Arg_0.1, Arg_0.1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  iota.3 = s32[4,12,12]{2,1,0} iota(), iota_dimension=1
  iota.4 = s32[4,12,12]{2,1,0} iota(), iota_dimension=2
  compare.5 = pred[4,12,12]{2,1,0} compare(iota.3, iota.4), direction=EQ
  constant.6 = %[1]v[] constant(12)
  broadcast.7 = %[1]v[4,12,12]{2,1,0} broadcast(constant.6), dimensions={}
  constant.8 = %[1]v[] constant(0)
  broadcast.9 = %[1]v[4,12,12]{2,1,0} broadcast(constant.8), dimensions={}
  select.10 = %[1]v[4,12,12]{2,1,0} select(compare.5, broadcast.7, broadcast.9)
  add.11 = %[1]v[4,12,12]{2,1,0} add(dot.2, select.10)
  ROOT cholesky.12 = %[1]v[4,12,12]{2,1,0} cholesky(add.11), lower=%[2]v
}`, dt, lower), vkxla.Tolerance(hlo.OpCholesky, dt), uniform(g, hlo.MakeShape(dt, 4, 12, 12), -1, 1, 0)))
		}
		notPD := hlo.NewLiteral(hlo.MakeShape(dt, 2, 2, 2))
		for i, v := range []float64{1, 2, 2, 1, 4, 0, 2, 5} {
			notPD.SetFloat64(i, v)
		}
		out = append(out, textCase(t, fmt.Sprintf("%v/not positive definite", dt), fmt.Sprintf(`HloModule jit_cholesky
ENTRY main.3 {
  Arg_0.1 = %[1]v[2,2,2]{2,1,0} parameter(0)
  ROOT cholesky.2 = %[1]v[2,2,2]{2,1,0} cholesky(Arg_0.1), lower=true
}`, dt), vkxla.Tolerance(hlo.OpCholesky, dt), notPD))
	}
	return out
}

// TestWidenedContractions: dot and convolution whose result type is wider than
// their operands' (XLA's preferred_element_type), as quantised and mixed-precision
// dumps print them: integer results exact, float results within the dot bound.
func TestWidenedContractions(t *testing.T) {
	rt := newRuntime(t)
	g := &gen{rng: rand.New(rand.NewPCG(3, 5)), dtypes: supportedDTypes(rt.Device().Caps())}
	for _, c := range [][2]hlo.DType{{hlo.S8, hlo.S32}, {hlo.U8, hlo.S32}, {hlo.U8, hlo.U32}, {hlo.BF16, hlo.F32},
		{hlo.F16, hlo.F32}, {hlo.F32, hlo.F64}} {
		if !has(g, c[0]) || !has(g, c[1]) {
			continue
		}
		spec := vkxla.Tolerance(hlo.OpDot, c[1])
		lo, hi := -1.0, 1.0
		if !c[0].IsFloat() {
			lo, hi = -300, 300 // every bit pattern of the narrow type, once wrapped
		}
		x, y := wrapLiteral(uniform(g, hlo.MakeShape(hlo.S64, 4, 64), lo, hi, 0), c[0]), wrapLiteral(uniform(g, hlo.MakeShape(hlo.S64, 64, 24), lo, hi, 0), c[0])
		if c[0].IsFloat() {
			x, y = uniform(g, hlo.MakeShape(c[0], 4, 64), lo, hi, 0), uniform(g, hlo.MakeShape(c[0], 64, 24), lo, hi, 0)
		}
		t.Run(fmt.Sprintf("dot %v→%v", c[0], c[1]), func(t *testing.T) {
			m := textCase(t, "dot", fmt.Sprintf(`HloModule jit_quantized_matmul
ENTRY main.4 {
  Arg_0.1 = %[1]v[4,64]{1,0} parameter(0)
  Arg_1.2 = %[1]v[64,24]{1,0} parameter(1)
  ROOT dot.3 = %[2]v[4,24]{1,0} dot(Arg_0.1, Arg_1.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`, c[0], c[1]), spec).module
			checkAgainstCPU(t, rt, m, spec, x, y)
		})
		k := uniform(g, hlo.MakeShape(c[0], 3, 3, 8, 5), lo/300, hi/300, 0)
		img := uniform(g, hlo.MakeShape(c[0], 2, 9, 9, 8), lo/300, hi/300, 0)
		if !c[0].IsFloat() {
			k = wrapLiteral(uniform(g, hlo.MakeShape(hlo.S64, 3, 3, 8, 5), lo, hi, 0), c[0])
			img = wrapLiteral(uniform(g, hlo.MakeShape(hlo.S64, 2, 9, 9, 8), lo, hi, 0), c[0])
		}
		t.Run(fmt.Sprintf("convolution %v→%v", c[0], c[1]), func(t *testing.T) {
			m := textCase(t, "conv", fmt.Sprintf(`HloModule jit_conv_general_dilated
ENTRY main.4 {
  Arg_0.1 = %[1]v[2,9,9,8]{3,2,1,0} parameter(0)
  Arg_1.2 = %[1]v[3,3,8,5]{3,2,1,0} parameter(1)
  ROOT convolution.3 = %[2]v[2,7,7,5]{3,2,1,0} convolution(Arg_0.1, Arg_1.2), window={size=3x3}, dim_labels=b01f_01io->b01f
}`, c[0], c[1]), spec).module
			checkAgainstCPU(t, rt, m, spec, img, k)
		})
	}
}

// wrapLiteral converts an s64 literal to integer type dt, wrapping.
func wrapLiteral(l *hlo.Literal, dt hlo.DType) *hlo.Literal {
	out := hlo.NewLiteral(l.Shape().WithDType(dt))
	for i := range l.NumElements() {
		out.SetBits(i, uint64(l.Int64(i)))
	}
	return out
}

// layoutBitcastCases: bitcasts as layout assignment leaves them in dumps — a row-major
// reshape, a column-major matrix read as its transpose, a rank-3 layout read flat,
// and an s32 ↔ f32 reinterpretation inside a layout change.
func layoutBitcastCases(t testing.TB, g *gen) []opCase {
	x := uniform(g, hlo.MakeShape(hlo.F32, 4, 6, 5), -1, 1, 0)
	var out []opCase
	for _, c := range []struct{ name, from, to string }{
		{"reshape", "f32[4,6,5]{2,1,0}", "f32[24,5]{1,0}"},
		{"transpose", "f32[4,6,5]{0,1,2}", "f32[5,6,4]{2,1,0}"},
		{"flatten", "f32[4,6,5]{1,2,0}", "f32[120]{0}"},
		{"both", "f32[4,6,5]{0,2,1}", "f32[30,4]{0,1}"},
		{"s32", "f32[4,6,5]{1,0,2}", "s32[5,24]{1,0}"},
	} {
		out = append(out, textCase(t, c.name, `HloModule jit_layout_bitcast
ENTRY main.4 {
  Arg_0.1 = `+c.from+` parameter(0)
  bitcast.2 = `+c.to+` bitcast(Arg_0.1)
  ROOT copy.3 = `+c.to+` copy(bitcast.2)
}`, exact(), x))
	}
	return out
}
