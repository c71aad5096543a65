package cpuref

import (
	"context"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// evalRngText evaluates a module from state and returns its root and the state after.
func evalRngText(t *testing.T, text string, state [2]uint64, inputs ...*hlo.Literal) (*hlo.Literal, [2]uint64) {
	t.Helper()
	m, err := hlo.ParseModule(text)
	require.NoError(t, err)
	out, next, err := Limits{}.EvalWithRngState(context.Background(), m, state, inputs...)
	require.NoError(t, err)
	return out, next
}

// rng-get-and-update-state returns the state and advances it by delta, a 128-bit
// add (the low word carries into the high one), in evaluation order.
func TestRngGetAndUpdateState(t *testing.T) {
	text := `HloModule s
ENTRY e {
  a = u64[2] rng-get-and-update-state(), delta=3
  b = u64[2] rng-get-and-update-state(), delta=10
  ROOT t = (u64[2], u64[2]) tuple(a, b)
}`
	out, next := evalRngText(t, text, [2]uint64{5, 7})
	assert.Equal(t, []uint64{5, 7}, mustValues[uint64](t, out.Elems()[0]))
	assert.Equal(t, []uint64{8, 7}, mustValues[uint64](t, out.Elems()[1]))
	assert.Equal(t, [2]uint64{18, 7}, next)

	out, next = evalRngText(t, text, [2]uint64{math.MaxUint64 - 1, 7})
	assert.Equal(t, []uint64{1, 8}, mustValues[uint64](t, out.Elems()[1]))
	assert.Equal(t, [2]uint64{11, 8}, next)
}

func mustValues[T hlo.Native](t *testing.T, l *hlo.Literal) []T {
	t.Helper()
	v, err := hlo.Values[T](l)
	require.NoError(t, err)
	return v
}

// philoxWords are the 32-bit words rng draws from counter state (key hlo.RngKey):
// block j's four words are words 4j..4j+3 (philox4x32 is checked against
// Random123's known answers in rng_test.go).
func philoxWords(state [2]uint64, n int) []uint32 {
	k := hlo.RngKey
	key := [2]uint32{uint32(k), uint32(k >> 32)}
	var words []uint32
	for j := uint64(0); len(words) < n; j++ {
		c := hlo.AdvanceRngState(state, j)
		w := philox4x32([4]uint32{uint32(c[0]), uint32(c[0] >> 32), uint32(c[1]), uint32(c[1] >> 32)}, key)
		words = append(words, w[:]...)
	}
	return words[:n]
}

// Uniform draws follow the definition: integers a + (w mod (b − a)), floats
// a + (w>>9)·2⁻²³·(b − a) in f32 arithmetic, from the Philox words of the state.
// Each rng advances the state by its 32-bit units.
func TestRngUniformFromDefinition(t *testing.T) {
	state := [2]uint64{0x0123456789abcdef, 42}
	out, next := evalRngText(t, `HloModule u
ENTRY e {
  a = s32[] constant(-3)
  b = s32[] constant(7)
  i = s32[2,3] rng(a, b), distribution=rng_uniform
  lo = f32[] constant(-1.5)
  hi = f32[] constant(2.25)
  f = f32[5] rng(lo, hi), distribution=rng_uniform
  ROOT t = (s32[2,3], f32[5]) tuple(i, f)
}`, state)
	words := philoxWords(state, 6)
	var wantInts []int32
	for _, w := range words {
		wantInts = append(wantInts, -3+int32(w%10))
	}
	assert.Equal(t, wantInts, mustValues[int32](t, out.Elems()[0]))

	fstate := hlo.AdvanceRngState(state, 6) // the s32[2,3] took 6 units
	var wantF []float32
	for _, w := range philoxWords(fstate, 5) {
		u := float32(w>>9) * float32(math.Ldexp(1, -23))
		wantF = append(wantF, u*float32(2.25-(-1.5))+float32(-1.5))
	}
	assert.Equal(t, wantF, mustValues[float32](t, out.Elems()[1]))
	assert.Equal(t, hlo.AdvanceRngState(state, 11), next)
}

// b ≤ a makes every element a (XLA leaves it undefined).
func TestRngEmptyRangeGivesA(t *testing.T) {
	out, _ := evalRngText(t, `HloModule u
ENTRY e {
  a = u32[] constant(9)
  ROOT i = u32[6] rng(a, a), distribution=rng_uniform
}`, [2]uint64{1, 2})
	assert.Equal(t, []uint32{9, 9, 9, 9, 9, 9}, mustValues[uint32](t, out))
}

// Normal draws follow the definition: Box–Muller of unit draws paired along the
// split dimension, z0 = sin(2π·x1)·r at even and z1 = cos(2π·x1)·r at odd
// coordinates, r = sqrt(−2·ln(max(x0, 1e−7))), then a + b·z (f64 arithmetic on f64).
func TestRngNormalFromDefinition(t *testing.T) {
	state := [2]uint64{77, 0}
	out, _ := evalRngText(t, `HloModule n
ENTRY e {
  a = f64[] constant(1)
  b = f64[] constant(3)
  ROOT n = f64[3] rng(a, b), distribution=rng_normal
}`, state)
	// f64[3] pairs as f64[2,2]: four 64-bit draws, two per Philox block.
	w := philoxWords(state, 8)
	unit := func(i int) float64 {
		bits := uint64(w[2*i]) | uint64(w[2*i+1])<<32
		return float64(bits>>12) * math.Ldexp(1, -52)
	}
	var want []float64
	for pair := range 2 {
		x0, x1 := unit(2*pair), unit(2*pair+1)
		r := math.Sqrt(-2 * math.Log(math.Max(x0, float64(float32(1e-7)))))
		v := 2 * math.Pi * x1
		want = append(want, 1+3*(math.Sin(v)*r), 1+3*(math.Cos(v)*r))
	}
	got := mustValues[float64](t, out)
	for i := range got {
		assert.InEpsilon(t, want[i], got[i], 1e-15, "element %d", i)
	}
}

// Statistical checks with fixed states. Integers: every value in [a, b) and a
// chi-square of the counts below the 0.1% critical value of its degrees of freedom
// — an off-by-one range leaves a bin empty or fills one outside. Floats: every
// value in [a, b), and the Kolmogorov–Smirnov distance to the uniform or normal
// CDF below 1.95/√n (α = 0.001) — a wrong scale, shift or standard deviation moves
// the distance far beyond it.
const ksCritical = 1.95 // α = 0.001

func TestRngUniformIntegersChiSquare(t *testing.T) {
	for _, c := range []struct {
		ty    string
		a, b  int64
		chi2  float64 // critical value at α = 0.001 for b−a−1 degrees of freedom
		state [2]uint64
	}{
		{"s32", -3, 7, 27.88, [2]uint64{1, 0}},
		{"s64", -1 << 40, -1<<40 + 5, 18.47, [2]uint64{2, 3}},
		{"u32", 0, 2, 10.83, [2]uint64{math.MaxUint64, 9}},
		{"u64", 100, 113, 32.91, [2]uint64{4, 4}},
	} {
		t.Run(c.ty, func(t *testing.T) {
			const n = 60000
			out, _ := evalRngText(t, `HloModule u
ENTRY e {
  a = `+c.ty+`[] parameter(0)
  b = `+c.ty+`[] parameter(1)
  ROOT r = `+c.ty+`[60000] rng(a, b), distribution=rng_uniform
}`, c.state, intScalar(c.ty, c.a), intScalar(c.ty, c.b))
			counts := make([]float64, c.b-c.a)
			for i := range n {
				v := out.Int64(i)
				if c.ty[0] == 'u' {
					v = int64(out.Uint64(i))
				}
				require.True(t, v >= c.a && v < c.b, "element %d = %d outside [%d, %d)", i, v, c.a, c.b)
				counts[v-c.a]++
			}
			expect := float64(n) / float64(len(counts))
			chi2 := 0.0
			for _, k := range counts {
				chi2 += (k - expect) * (k - expect) / expect
			}
			assert.Less(t, chi2, c.chi2, "counts %v", counts)
		})
	}
}

func intScalar(ty string, v int64) *hlo.Literal {
	dt, _ := hlo.ParseDType(ty)
	l := hlo.NewLiteral(hlo.Scalar(dt))
	l.SetInt64(0, v)
	return l
}

func TestRngUniformFloatsKS(t *testing.T) {
	for _, c := range []struct {
		ty   string
		a, b float64
		cell float64 // the type's grid spacing in [a, b), in CDF units
	}{{"f32", -2, 5, 0}, {"f64", 0.25, 0.5, 0}, {"f16", 1, 3, 0x1p-9 / 2}, {"bf16", -4, -2, 0x1p-6 / 2}} {
		t.Run(c.ty, func(t *testing.T) {
			xs := drawFloats(t, c.ty, "rng_uniform", c.a, c.b, [2]uint64{11, 12})
			for i, x := range xs {
				require.True(t, x >= c.a && x < c.b, "element %d = %v outside [%v, %v)", i, x, c.a, c.b)
			}
			// f16 and bf16 round the draw to their grid, which moves the
			// empirical CDF by up to a cell.
			d := ksDistance(xs, func(x float64) float64 { return (x - c.a) / (c.b - c.a) })
			assert.Less(t, d, ksCritical/math.Sqrt(float64(len(xs)))+c.cell)
		})
	}
}

func TestRngNormalKS(t *testing.T) {
	for _, c := range []struct {
		ty         string
		mean, sd   float64
		dims       string
		state      [2]uint64
		wrongSDHit bool
	}{{"f32", 1.5, 2.5, "[300,201]", [2]uint64{3, 1}, true}, {"f64", -4, 0.5, "[60001]", [2]uint64{8, 0}, true}} {
		t.Run(c.ty, func(t *testing.T) {
			xs := drawFloatsDims(t, c.ty, "rng_normal", c.mean, c.sd, c.dims, c.state)
			cdf := func(sd float64) func(float64) float64 {
				return func(x float64) float64 { return 0.5 * math.Erfc(-(x-c.mean)/(sd*math.Sqrt2)) }
			}
			limit := ksCritical / math.Sqrt(float64(len(xs)))
			assert.Less(t, ksDistance(xs, cdf(c.sd)), limit)
			// The test would catch a draw with the variance for the standard deviation.
			assert.Greater(t, ksDistance(xs, cdf(c.sd*c.sd)), limit)
		})
	}
}

func drawFloats(t *testing.T, ty, dist string, a, b float64, state [2]uint64) []float64 {
	return drawFloatsDims(t, ty, dist, a, b, "[60000]", state)
}

func drawFloatsDims(t *testing.T, ty, dist string, a, b float64, dims string, state [2]uint64) []float64 {
	t.Helper()
	dt, err := hlo.ParseDType(ty)
	require.NoError(t, err)
	la, lb := hlo.NewLiteral(hlo.Scalar(dt)), hlo.NewLiteral(hlo.Scalar(dt))
	la.SetFloat64(0, a)
	lb.SetFloat64(0, b)
	out, _ := evalRngText(t, `HloModule d
ENTRY e {
  a = `+ty+`[] parameter(0)
  b = `+ty+`[] parameter(1)
  ROOT r = `+ty+dims+` rng(a, b), distribution=`+dist+`
}`, state, la, lb)
	xs := make([]float64, out.NumElements())
	for i := range xs {
		xs[i] = out.Float64(i)
	}
	return xs
}

// ksDistance is the Kolmogorov–Smirnov statistic of the sample against cdf.
func ksDistance(xs []float64, cdf func(float64) float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := float64(len(s))
	d := 0.0
	for i, x := range s {
		f := cdf(x)
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
	}
	return d
}
