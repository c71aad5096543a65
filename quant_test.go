package vkxla_test

// Quantised dots (issue 21): a weight stored as s4, u4, s8, u8 or an 8-bit (or
// 4-bit) float, widened to f32 (or f16) and optionally scaled per output channel
// or per group of K, then contracted; the convert and the scale join the dot's
// kernel (passes/fusion_operand_convert.go), which reads the weight at its stored
// width. GPU against cpuref, which computes the dequantised weight exactly and
// then the dot in f32, within the dot's tolerance (the order of the f32 sums may
// differ).

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// quantScale is how a quantised weight is scaled: not at all, per output channel
// (a scale [N]), or per group of g consecutive k (a scale [K/g, N], or [N, K/g]
// for a weight stored N×K).
type quantScale int

const (
	noScale quantScale = iota
	channelScale
	groupScale
)

func (s quantScale) String() string { return [...]string{"unscaled", "per-channel", "per-group"}[s] }

// quantDot is a quantised linear layer y = x·dequant(W): x xdt[M,K], W wdt stored
// [K,N] or (transposed, PyTorch's [out,in]) [N,K], the dequantised weight and
// the dot in cdt (f32, or f16), scales of sdt.
type quantDot struct {
	wdt, cdt, sdt hlo.DType
	m, k, n       int64
	transposed    bool
	scale         quantScale
	group         int64
}

func (q quantDot) name() string {
	layout := "x·W"
	if q.transposed {
		layout = "x·Wᵀ"
	}
	return fmt.Sprintf("%v→%v/%s/%dx%dx%d/%v", q.wdt, q.cdt, layout, q.m, q.k, q.n, q.scale)
}

// text is the layer in HLO text, as a front end writes it.
func (q quantDot) text() string {
	wd := [2]int64{q.k, q.n}
	rc := 0
	if q.transposed {
		wd, rc = [2]int64{q.n, q.k}, 1
	}
	w := hlo.MakeShape(q.cdt, wd[0], wd[1])
	body := fmt.Sprintf("  x = %v parameter(0)\n  w = %v parameter(1)\n  wc = %v convert(w)\n",
		hlo.MakeShape(q.cdt, q.m, q.k), hlo.MakeShape(q.wdt, wd[0], wd[1]), w)
	operand := "wc"
	sw := hlo.MakeShape(q.sdt, wd[0], wd[1]) // the scale broadcast to W's shape
	switch q.scale {
	case channelScale:
		dim := 1
		if q.transposed {
			dim = 0
		}
		body += fmt.Sprintf("  s = %v parameter(2)\n  sb = %v broadcast(s), dimensions={%d}\n", hlo.MakeShape(q.sdt, q.n), sw, dim)
	case groupScale:
		groups := q.k / q.group
		s, g3, dims := hlo.MakeShape(q.sdt, groups, q.n), hlo.MakeShape(q.sdt, groups, q.group, q.n), "0,2"
		if q.transposed {
			s, g3, dims = hlo.MakeShape(q.sdt, q.n, groups), hlo.MakeShape(q.sdt, q.n, groups, q.group), "0,1"
		}
		body += fmt.Sprintf("  s = %v parameter(2)\n  sg = %v broadcast(s), dimensions={%s}\n  sb = %v reshape(sg)\n", s, g3, dims, sw)
	}
	if q.scale != noScale {
		scale := "sb"
		if q.sdt != q.cdt {
			body += fmt.Sprintf("  sc = %v convert(sb)\n", w)
			scale = "sc"
		}
		body += fmt.Sprintf("  ws = %v multiply(wc, %s)\n", w, scale)
		operand = "ws"
	}
	return fmt.Sprintf("HloModule quant_linear\nENTRY main {\n%s  ROOT y = %v dot(x, %s), lhs_contracting_dims={1}, rhs_contracting_dims={%d}\n}\n",
		body, hlo.MakeShape(q.cdt, q.m, q.n), operand, rc)
}

func (q quantDot) module(tb testing.TB) *hlo.Module {
	m, err := hlo.ParseModule(q.text())
	require.NoError(tb, err, q.text())
	return m
}

// inputs are x uniform in [-1, 1], W across its type's values (integers over
// their whole range, floats in [-4, 4]) and scales in [1/64, 1/8].
func (q quantDot) inputs(m *hlo.Module, seed uint64) []*hlo.Literal {
	rng := rnd(seed)
	ps := m.Entry.Params
	in := []*hlo.Literal{lit(rng, q.cdt, unitDomain, ps[0].Shape.Dims...), quantWeights(rng, ps[1].Shape)}
	if q.scale != noScale {
		in = append(in, lit(rng, q.sdt, domain{1.0 / 64, 1.0 / 8}, ps[2].Shape.Dims...))
	}
	return in
}

// quantWeights fills a weight of a quantised type.
func quantWeights(rng *rand.Rand, s hlo.Shape) *hlo.Literal {
	l := hlo.NewLiteral(s)
	dt := s.DType
	for i := range l.NumElements() {
		switch {
		case dt.IsFloat():
			l.SetFloat64(i, 8*rng.Float64()-4)
		case dt.IsUnsigned():
			l.SetUint64(i, rng.Uint64N(1<<dt.Bits()))
		default:
			l.SetInt64(i, rng.Int64N(1<<dt.Bits())-1<<(dt.Bits()-1))
		}
	}
	return l
}

// kernelCount is the number of kernels (fusions and unfused ops) of the
// optimised entry computation, parameters and tuples aside.
func kernelCount(m *hlo.Module) int {
	n := 0
	for _, in := range m.Entry.Instructions {
		if in.Op != hlo.OpParameter && in.Op != hlo.OpTuple && in.Op != hlo.OpGetTupleElement {
			n++
		}
	}
	return n
}

func TestQuantisedDotOnDevice(t *testing.T) {
	rt := newRuntime(t)
	var cases []quantDot
	for _, wdt := range []hlo.DType{hlo.S4, hlo.U4, hlo.S8, hlo.U8, hlo.F8E4M3FN, hlo.F8E5M2, hlo.F4E2M1FN} {
		for _, s := range []quantScale{noScale, channelScale, groupScale} {
			q := quantDot{wdt: wdt, cdt: hlo.F32, sdt: hlo.F32, scale: s, group: 32}
			// GEMVs in both layouts (K a multiple of 8, and odd: a packed tail),
			// an odd N (x·W rows that start mid-byte), and a small GEMM.
			for _, shape := range []struct {
				m, k, n int64
				tr      bool
			}{{1, 256, 64, false}, {1, 256, 64, true}, {1, 77, 96, false}, {2, 77, 64, true}, {1, 96, 75, false}, {20, 77, 40, false}, {20, 64, 40, true}} {
				if s == groupScale && shape.k%q.group != 0 {
					continue
				}
				q.m, q.k, q.n, q.transposed = shape.m, shape.k, shape.n, shape.tr
				cases = append(cases, q)
			}
		}
	}
	// The sliced one-row GEMV (N·K ≥ 2^18: K in slices of 128 k, partial sums),
	// each slice inside one scale group.
	for _, wdt := range []hlo.DType{hlo.S4, hlo.U8, hlo.F8E5M2} {
		for _, s := range []quantScale{noScale, channelScale, groupScale} {
			cases = append(cases, quantDot{wdt: wdt, cdt: hlo.F32, sdt: hlo.F16, m: 1, k: 1024, n: 256, scale: s, group: 128})
		}
	}
	// The sliced GEMV with N not a multiple of 32 (16 columns: two words per k,
	// not one RGBA32 texel).
	cases = append(cases, quantDot{wdt: hlo.S4, cdt: hlo.F32, sdt: hlo.F16, m: 1, k: 1152, n: 240, scale: groupScale, group: 128})
	// f16 layers: the weight dequantised to f16, f16 scales (converted to f32 for
	// an f32 dot, or an f16 dot throughout).
	cases = append(cases,
		quantDot{wdt: hlo.S4, cdt: hlo.F32, sdt: hlo.F16, m: 1, k: 256, n: 64, scale: groupScale, group: 32},
		quantDot{wdt: hlo.S4, cdt: hlo.F16, sdt: hlo.F16, m: 1, k: 256, n: 64, scale: channelScale},
		quantDot{wdt: hlo.F8E4M3FN, cdt: hlo.F16, sdt: hlo.F16, m: 1, k: 256, n: 64, transposed: true, scale: channelScale},
		quantDot{wdt: hlo.U4, cdt: hlo.F16, sdt: hlo.F16, m: 20, k: 77, n: 40},
	)
	for i, q := range cases {
		t.Run(q.name(), func(t *testing.T) {
			m := q.module(t)
			exe, err := rt.Compile(t.Context(), m)
			require.NoError(t, err)
			require.Equal(t, 1, kernelCount(exe.OptimizedModule()), "the convert and the scale join the dot's kernel:\n%s", hlo.Print(exe.OptimizedModule()))
			require.NoError(t, exe.Close())
			checkAgainstCPU(t, rt, m, vkxla.Tolerance(hlo.OpDot, q.cdt), q.inputs(m, uint64(100+i))...)
		})
	}
}

// TestQuantisedLinearDump: the dump-style two-layer module is two kernels (each
// dot with its weight's convert and scale, the first with its bias and ReLU as
// the epilogue), and matches cpuref.
func TestQuantisedLinearDump(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModuleFile("testdata/programs/quant_linear.hlo")
	require.NoError(t, err)
	exe, err := rt.Compile(t.Context(), m)
	require.NoError(t, err)
	require.Equal(t, 2, kernelCount(exe.OptimizedModule()), "%s", hlo.Print(exe.OptimizedModule()))
	require.NoError(t, exe.Close())
	rng := rnd(31)
	ps := m.Entry.Params
	in := []*hlo.Literal{lit(rng, hlo.F32, unitDomain, ps[0].Shape.Dims...), quantWeights(rng, ps[1].Shape),
		lit(rng, hlo.F16, domain{1.0 / 64, 1.0 / 8}, ps[2].Shape.Dims...), lit(rng, hlo.F32, unitDomain, ps[3].Shape.Dims...),
		quantWeights(rng, ps[4].Shape), lit(rng, hlo.F32, domain{1.0 / 512, 1.0 / 64}, ps[5].Shape.Dims...)}
	checkAgainstCPU(t, rt, m, vkxla.ProgramTolerance(m, hlo.F32), in...)
}
