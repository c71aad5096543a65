package cpuref

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// Whole programs from HLO text, checked against the same math written as plain Go
// loops in float64. The tolerance covers float32 rounding of the interpreter.

func randomF32(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.Float64()*2 - 1)
	}
	return v
}

func assertClose(t *testing.T, want []float64, got *hlo.Literal) {
	t.Helper()
	w := make([]float32, len(want))
	for i, x := range want {
		w[i] = float32(x)
	}
	require.NoError(t, hlo.LiteralsClose(got, mat(got.Shape().Dims, w...), 1e-5, 1e-5))
}

const mlpText = `HloModule mlp

ENTRY main {
  x = f32[4,8] parameter(0)
  w1 = f32[8,16] parameter(1)
  b1 = f32[16] parameter(2)
  w2 = f32[16,3] parameter(3)
  b2 = f32[3] parameter(4)
  h = f32[4,16] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b1b = f32[4,16] broadcast(b1), dimensions={1}
  hb = f32[4,16] add(h, b1b)
  zero = f32[] constant(0)
  zeros = f32[4,16] broadcast(zero), dimensions={}
  relu = f32[4,16] maximum(hb, zeros)
  o = f32[4,3] dot(relu, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b2b = f32[4,3] broadcast(b2), dimensions={1}
  ROOT y = f32[4,3] add(o, b2b)
}`

func TestProgramMLP(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	x, w1, b1, w2, b2 := randomF32(r, 32), randomF32(r, 128), randomF32(r, 16), randomF32(r, 48), randomF32(r, 3)
	out := evalText(t, mlpText, mat(dims(4, 8), x...), mat(dims(8, 16), w1...), vec(b1...),
		mat(dims(16, 3), w2...), vec(b2...))

	want := make([]float64, 0, 12)
	for i := 0; i < 4; i++ {
		h := make([]float64, 16)
		for j := range h {
			h[j] = float64(b1[j])
			for k := 0; k < 8; k++ {
				h[j] += float64(x[i*8+k]) * float64(w1[k*16+j])
			}
			h[j] = math.Max(h[j], 0)
		}
		for j := 0; j < 3; j++ {
			y := float64(b2[j])
			for k := range h {
				y += h[k] * float64(w2[k*3+j])
			}
			want = append(want, y)
		}
	}
	assertClose(t, want, out)
}

// softmaxText is written the way XLA dumps modules: %-names, layouts, metadata and an
// entry_computation_layout header.
const softmaxText = `HloModule softmax, entry_computation_layout={(f32[3,5]{1,0})->f32[3,5]{1,0}}

%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(f32[] %a, f32[] %b)
}

%add (a.1: f32[], b.1: f32[]) -> f32[] {
  %a.1 = f32[] parameter(0)
  %b.1 = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a.1, f32[] %b.1)
}

ENTRY %main (x: f32[3,5]) -> f32[3,5] {
  %x = f32[3,5]{1,0} parameter(0), metadata={op_name="x"}
  %ninf = f32[] constant(-inf)
  %rowmax = f32[3]{0} reduce(f32[3,5]{1,0} %x, f32[] %ninf), dimensions={1}, to_apply=%max
  %mb = f32[3,5]{1,0} broadcast(f32[3]{0} %rowmax), dimensions={0}
  %d = f32[3,5]{1,0} subtract(f32[3,5]{1,0} %x, f32[3,5]{1,0} %mb)
  %e = f32[3,5]{1,0} exponential(f32[3,5]{1,0} %d)
  %zero = f32[] constant(0)
  %sum = f32[3]{0} reduce(f32[3,5]{1,0} %e, f32[] %zero), dimensions={1}, to_apply=%add
  %sb = f32[3,5]{1,0} broadcast(f32[3]{0} %sum), dimensions={0}
  ROOT %y = f32[3,5]{1,0} divide(f32[3,5]{1,0} %e, f32[3,5]{1,0} %sb)
}`

func TestProgramSoftmax(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	x := randomF32(r, 15)
	x[7] = 30 // a large logit must not overflow: the max is subtracted first
	out := evalText(t, softmaxText, mat(dims(3, 5), x...))

	want := make([]float64, 15)
	for i := 0; i < 3; i++ {
		row := x[i*5 : i*5+5]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, float64(v))
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - m)
		}
		for j, v := range row {
			want[i*5+j] = math.Exp(float64(v)-m) / s
		}
	}
	assertClose(t, want, out)
}

const layernormText = `HloModule layernorm

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[2,6] parameter(0)
  gamma = f32[6] parameter(1)
  beta = f32[6] parameter(2)
  zero = f32[] constant(0)
  n = f32[] constant(6)
  nb = f32[2] broadcast(n), dimensions={}
  sum = f32[2] reduce(x, zero), dimensions={1}, to_apply=add
  mean = f32[2] divide(sum, nb)
  meanb = f32[2,6] broadcast(mean), dimensions={0}
  xc = f32[2,6] subtract(x, meanb)
  sq = f32[2,6] multiply(xc, xc)
  sqsum = f32[2] reduce(sq, zero), dimensions={1}, to_apply=add
  var = f32[2] divide(sqsum, nb)
  eps = f32[] constant(1e-05)
  epsb = f32[2] broadcast(eps), dimensions={}
  ve = f32[2] add(var, epsb)
  rs = f32[2] rsqrt(ve)
  rsb = f32[2,6] broadcast(rs), dimensions={0}
  norm = f32[2,6] multiply(xc, rsb)
  gb = f32[2,6] broadcast(gamma), dimensions={1}
  bb = f32[2,6] broadcast(beta), dimensions={1}
  scaled = f32[2,6] multiply(norm, gb)
  ROOT y = f32[2,6] add(scaled, bb)
}`

func TestProgramLayerNorm(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	x, gamma, beta := randomF32(r, 12), randomF32(r, 6), randomF32(r, 6)
	out := evalText(t, layernormText, mat(dims(2, 6), x...), vec(gamma...), vec(beta...))

	want := make([]float64, 12)
	for i := 0; i < 2; i++ {
		row := x[i*6 : i*6+6]
		var mean, variance float64
		for _, v := range row {
			mean += float64(v) / 6
		}
		for _, v := range row {
			variance += (float64(v) - mean) * (float64(v) - mean) / 6
		}
		for j, v := range row {
			want[i*6+j] = (float64(v)-mean)/math.Sqrt(variance+1e-5)*float64(gamma[j]) + float64(beta[j])
		}
	}
	assertClose(t, want, out)
}
