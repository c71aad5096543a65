package vkxla_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// BenchmarkComplexTranscendentalSweep runs c64 tanh, tan, expm1, log1p and power
// on 64K values per domain, both parts log-uniform in magnitude with random signs
// (1e-30–1e30, 1e-3–30, 1e-8–1, and 1e-8–1e-2 shifted by 2πk in the imaginary
// part, expm1's zeros), power's exponents log-uniform in 1e-3–3 (1e-3–30 in the
// last), against cpuref: it fails where an element of finite cpuref value is
// beyond the op's tolerance or a non-finite part differs (checkSweep), and reports
// the worst part error relative to the modulus (at least 2^-126) as worst-rel. The
// differential suite holds the cases it found (complex_transcendental_device_test.go).
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench ComplexTranscendentalSweep -benchtime 1x .
func BenchmarkComplexTranscendentalSweep(b *testing.B) {
	rt := newRuntime(b)
	const n = 1 << 16
	r := rand.New(rand.NewPCG(3, 4))
	logUniform := func(lo, hi float64) float64 {
		v := math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo)))
		if r.IntN(2) == 0 {
			v = -v
		}
		return float64(float32(v))
	}
	sample := func(lo, hi float64, shift bool) *hlo.Literal {
		l := hlo.NewLiteral(hlo.MakeShape(hlo.C64, n))
		for i := range n {
			im := logUniform(lo, hi)
			if shift {
				im = float64(float32(im + 2*math.Pi*float64(r.IntN(2001)-1000)))
			}
			l.SetComplex128(i, complex(logUniform(lo, hi), im))
		}
		return l
	}
	for di, d := range [][2]float64{{1e-30, 1e30}, {1e-3, 30}, {1e-8, 1}, {1e-8, 1e-2}} {
		last := di == 3
		x, w := sample(d[0], d[1], last), sample(1e-3, 3, false)
		if last {
			w = sample(1e-3, 30, false)
		}
		for _, op := range []hlo.Opcode{hlo.OpTanh, hlo.OpTan, hlo.OpExpm1, hlo.OpLog1p, hlo.OpPower} {
			b.Run(fmt.Sprintf("%v/%g-%g", op, d[0], d[1]), func(b *testing.B) {
				bl := hlo.NewBuilder("sweep")
				p := bl.Parameter(x.Shape(), "x")
				inputs := []*hlo.Literal{x}
				var root *hlo.Instruction
				if op == hlo.OpPower {
					inputs, root = append(inputs, w), bl.Pow(p, bl.Parameter(w.Shape(), "w"))
				} else {
					root = bl.Unary(op, p)
				}
				m := mustBuild(b, bl, root)
				want, err := cpuref.Eval(m, inputs...)
				require.NoError(b, err)
				exe, err := rt.Compile(context.Background(), m)
				require.NoError(b, err)
				defer func() { require.NoError(b, exe.Close()) }()
				var got []*hlo.Literal
				for b.Loop() {
					got, err = exe.Run(context.Background(), inputs...)
					require.NoError(b, err)
				}
				checkSweep(b, vkxla.Tolerance(op, hlo.C64), got[0], want.Leaves()[0])
				worst, _ := worstModulusError(got[0], want.Leaves()[0])
				b.ReportMetric(worst, "worst-rel")
			})
		}
	}
}

// checkSweep holds each element whose cpuref value is finite within spec, and
// requires the infinite and NaN parts of the others to match. (Beside an infinite
// part the finite one is compared relative to itself, which multiplies power's
// angle error by the ratio of the parts: near f32 overflow, (5.5412e37, −inf)
// against (5.5404e37, −inf) is 1.5e-4 apart; the sweep leaves those to the
// differential suite's special pairs.)
func checkSweep(b *testing.B, spec vkxla.ErrorSpec, got, want *hlo.Literal) {
	nonFinite := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	for i := range want.NumElements() {
		g, w := got.Complex128(i), want.Complex128(i)
		if !nonFinite(real(w)) && !nonFinite(imag(w)) {
			require.NoError(b, spec.Check(hlo.ScalarLiteral(complex64(g)), hlo.ScalarLiteral(complex64(w))), "element %d", i)
			continue
		}
		for _, p := range [][2]float64{{real(g), real(w)}, {imag(g), imag(w)}} {
			if nonFinite(p[1]) {
				require.True(b, p[0] == p[1] || math.IsNaN(p[0]) && math.IsNaN(p[1]), "element %d: got %v, want %v", i, g, w)
			}
		}
	}
}
