package autodiff

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// The finite-difference harness. A case builds a function of some parameters; the
// harness draws random inputs, takes a random cotangent ct for every floating-point
// leaf of the result, and checks the VJP module's gradient of L(x) = Σ ct·f(x) for
// each differentiated parameter element against the central difference
// (L(x+h) - L(x-h)) / 2h, all in f64 on cpuref.
//
// Step and tolerance: h = 1e-6; |vjp - fd| <= fdAtol + fdRtol·|fd|. The central
// difference's truncation error is O(h²·f”') ≈ 1e-12 and its rounding error
// ε·|L|/h ≈ 1e-10 for |L| ≈ 1, so 1e-6 leaves a wide margin while a wrong rule
// (errors of order 1) still fails.
const (
	fdStep = 1e-6
	fdAtol = 1e-6
	fdRtol = 1e-5
)

// fdCase is one function to check.
type fdCase struct {
	name   string
	params []hlo.Shape
	// build returns the result from the parameters.
	build func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction
	// gen draws parameter i's value; nil draws floats uniform in [-2, 2] (integer
	// parameters: uniform in [0, 4)).
	gen func(r *rand.Rand, i int, s hlo.Shape) *hlo.Literal
	// wrt lists the differentiated parameters; nil means every float parameter.
	wrt []int
	// step overrides fdStep (for functions of f32 parameters, whose steps must be
	// exactly representable).
	step float64
}

func f64s(dims ...int64) hlo.Shape { return hlo.MakeShape(hlo.F64, dims...) }

func randomLiteral(r *rand.Rand, s hlo.Shape, lo, hi float64) *hlo.Literal {
	lit := hlo.NewLiteral(s)
	for i := range lit.NumElements() {
		v := lo + (hi-lo)*r.Float64()
		if s.DType.IsFloat() {
			lit.SetFloat64(i, v)
		} else {
			lit.SetInt64(i, int64(math.Floor(v)))
		}
	}
	return lit
}

func buildModule(t *testing.T, c fdCase) *hlo.Module {
	t.Helper()
	b := hlo.NewBuilder(sanitize(c.name))
	ps := make([]*hlo.Instruction, len(c.params))
	for i, s := range c.params {
		ps[i] = b.Parameter(s, "")
	}
	m, err := b.Build(c.build(b, ps))
	require.NoError(t, err)
	return m
}

func sanitize(name string) string {
	out := []rune{}
	for _, r := range name {
		if r == ' ' || r == '/' {
			r = '_'
		}
		out = append(out, r)
	}
	return string(out)
}

func (c fdCase) inputs(r *rand.Rand) []*hlo.Literal {
	in := make([]*hlo.Literal, len(c.params))
	for i, s := range c.params {
		if c.gen != nil {
			if lit := c.gen(r, i, s); lit != nil {
				in[i] = lit
				continue
			}
		}
		if s.DType.IsFloat() {
			in[i] = randomLiteral(r, s, -2, 2)
		} else {
			in[i] = randomLiteral(r, s, 0, 4)
		}
	}
	return in
}

func (c fdCase) wrtParams() []int {
	if c.wrt != nil {
		return c.wrt
	}
	var w []int
	for i, s := range c.params {
		if s.DType.IsFloat() {
			w = append(w, i)
		}
	}
	return w
}

// floatLeaves flattens a literal's float array leaves, depth first.
func floatLeaves(l *hlo.Literal) []*hlo.Literal {
	if l.Shape().IsTuple() {
		var out []*hlo.Literal
		for _, e := range l.Elems() {
			out = append(out, floatLeaves(e)...)
		}
		return out
	}
	if l.DType().IsFloat() {
		return []*hlo.Literal{l}
	}
	return nil
}

func countLeaves(s hlo.Shape) int {
	if !s.IsTuple() {
		return 1
	}
	n := 0
	for _, e := range s.Elems {
		n += countLeaves(e)
	}
	return n
}

// checkFD runs the case's check on a few random draws.
func checkFD(t *testing.T, c fdCase) {
	t.Helper()
	m := buildModule(t, c)
	wrt := c.wrtParams()
	vjp, err := VJP(m, wrt, nil)
	require.NoError(t, err, "VJP of %s", c.name)
	r := rand.New(rand.NewPCG(1, uint64(len(c.name))))
	for range 2 {
		in := c.inputs(r)
		out, err := cpuref.Eval(m, in...)
		require.NoError(t, err)
		var cts []*hlo.Literal
		for _, leaf := range floatLeaves(out) {
			cts = append(cts, randomLiteral(r, leaf.Shape(), -1, 1))
		}
		got, err := cpuref.Eval(vjp, append(append([]*hlo.Literal{}, in...), cts...)...)
		require.NoError(t, err, "evaluating the VJP of %s", c.name)
		nOut := countLeaves(m.Entry.Root.Shape)
		for k, p := range wrt {
			grad := got.Elems()[nOut+k]
			require.True(t, grad.Shape().Equal(in[p].Shape()), "gradient shape %v for parameter %v", grad.Shape(), in[p].Shape())
			if !in[p].DType().IsFloat() {
				for i := range grad.NumElements() {
					require.Zero(t, grad.Bits(i), "%s: integer parameter %d gets a zero gradient", c.name, p)
				}
				continue
			}
			for i := range in[p].NumElements() {
				fd := centralDifference(t, m, in, cts, p, i, c.stepSize())
				g := grad.Float64(i)
				require.InDelta(t, fd, g, fdAtol+fdRtol*math.Abs(fd),
					"%s: d/d param %d element %d: vjp %g, finite difference %g", c.name, p, i, g, fd)
			}
		}
	}
}

// centralDifference estimates dL/dx where x is element i of parameter p.
func centralDifference(t *testing.T, m *hlo.Module, in, cts []*hlo.Literal, p, i int, h float64) float64 {
	t.Helper()
	at := func(delta float64) float64 {
		shifted := append([]*hlo.Literal{}, in...)
		x := in[p].Clone()
		x.SetFloat64(i, x.Float64(i)+delta)
		shifted[p] = x
		out, err := cpuref.Eval(m, shifted...)
		require.NoError(t, err)
		var l float64
		for k, leaf := range floatLeaves(out) {
			for j := range leaf.NumElements() {
				l += cts[k].Float64(j) * leaf.Float64(j)
			}
		}
		return l
	}
	return (at(h) - at(-h)) / (2 * h)
}

func (c fdCase) stepSize() float64 {
	if c.step != 0 {
		return c.step
	}
	return fdStep
}

func runFD(t *testing.T, cases []fdCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkFD(t, c) })
	}
}
