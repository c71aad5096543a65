package vkxla_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// BenchmarkSinCos measures what sine and cosine cost on f32[1M] against an
// elementwise copy (negate: one load, one store, one instruction) in the same
// process: "small" arguments in [-8, 8] (rotary embeddings' range; the fast path),
// "rotary" in [-4000, 4000] (f32's fast path below 2^11, half the elements the
// exact path), "huge" in [1e6, 1e30] (every element takes the exact Payne–Hanek
// path). Metrics from the best GPU time of the
// runs (timestamps): ns/elem, and x-copy = time ÷ the copy's time.
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench SinCos -benchtime 20x .
func BenchmarkSinCos(b *testing.B) {
	rt := newRuntime(b)
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(11, 3))
	input := func(lo, hi float64) *hlo.Literal {
		l := hlo.NewLiteral(hlo.MakeShape(hlo.F32, n))
		for i := range n {
			l.SetFloat64(i, lo+(hi-lo)*rng.Float64())
		}
		return l
	}
	small, rotary := input(-8, 8), input(-4000, 4000)
	huge := hlo.NewLiteral(hlo.MakeShape(hlo.F32, n))
	for i := range n {
		huge.SetFloat64(i, 1e6*float64(rng.Float32())*1e24)
	}
	var copyTime time.Duration
	variants := []struct {
		name string
		op   hlo.Opcode
		in   *hlo.Literal
	}{
		{"copy", hlo.OpNegate, small},
		{"sin-small", hlo.OpSin, small},
		{"cos-small", hlo.OpCos, small},
		{"sin-rotary", hlo.OpSin, rotary},
		{"sin-huge", hlo.OpSin, huge},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			best := bestGPUTime(b, rt, v.op, v.in)
			if v.name == "copy" {
				copyTime = best
			} else if copyTime == 0 {
				copyTime = bestGPUTime(b, rt, hlo.OpNegate, small)
			}
			b.ReportMetric(float64(best.Nanoseconds())/n, "ns/elem")
			b.ReportMetric(float64(best)/float64(copyTime), "x-copy")
		})
	}
}

// bestGPUTime runs op over in for the benchmark's iterations and returns the best
// GPU time of a run.
func bestGPUTime(b *testing.B, rt *vkxla.Runtime, op hlo.Opcode, in *hlo.Literal) time.Duration {
	bl := hlo.NewBuilder(op.String())
	return bestModuleTime(b, rt, mustBuild(b, bl, bl.Unary(op, bl.Parameter(in.Shape(), "x"))), in)
}

// bestModuleTime runs m on inputs for the benchmark's iterations and returns the
// best GPU time of a run.
func bestModuleTime(b *testing.B, rt *vkxla.Runtime, m *hlo.Module, inputs ...*hlo.Literal) time.Duration {
	ctx := context.Background()
	exe, err := rt.Compile(ctx, m, vkxla.WithProfiling(true))
	require.NoError(b, err)
	defer func() { require.NoError(b, exe.Close()) }()
	var best time.Duration
	for b.Loop() {
		_, err := exe.Run(ctx, inputs...)
		require.NoError(b, err)
		p, err := exe.Profile()
		require.NoError(b, err)
		if d := p.Total(); best == 0 || d < best {
			best = d
		}
	}
	return best
}

// BenchmarkSinCosF32Exhaustive checks sine and cosine of every f32 in [2^-12, 2^14)
// (218M values: the whole fast path above the tiny-argument cutoff and the exact
// path's first binades) and 16M random finite f32 against float32(math.Sin(float64))
// (cpuref's definition), reporting the largest distance as max-ulp; it fails beyond
// the tolerance table's bound. About 100 s on lavapipe, so a benchmark, not a test:
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench SinCosF32Exhaustive -benchtime 1x .
func BenchmarkSinCosF32Exhaustive(b *testing.B) {
	rt := newRuntime(b)
	const chunk = 1 << 24
	shape := hlo.MakeShape(hlo.F32, chunk)
	lo, hi := uint32(0x39800000), uint32(0x46800000) // the encodings of 2^-12 and 2^14
	rng := rand.New(rand.NewPCG(5, 8))
	random := func(int) uint32 {
		for {
			if v := rng.Uint32(); v&0x7f800000 != 0x7f800000 {
				return v
			}
		}
	}
	for b.Loop() {
		for _, op := range []hlo.Opcode{hlo.OpSin, hlo.OpCos} {
			ref := map[hlo.Opcode]func(float64) float64{hlo.OpSin: math.Sin, hlo.OpCos: math.Cos}[op]
			bl := hlo.NewBuilder(op.String())
			exe, err := rt.Compile(context.Background(), mustBuild(b, bl, bl.Unary(op, bl.Parameter(shape, "x"))))
			require.NoError(b, err)
			worst := 0.0
			check := func(n int, gen func(i int) uint32) {
				for start := 0; start < n; start += chunk {
					in := hlo.NewLiteral(shape)
					for i := range chunk {
						in.SetBits(i, uint64(gen(start+i)))
					}
					got, err := exe.Run(context.Background(), in)
					require.NoError(b, err)
					for i := range chunk {
						x := math.Float32frombits(uint32(in.Bits(i)))
						want := math.Float32bits(float32(ref(float64(x))))
						worst = max(worst, vkxla.ULPDistance(hlo.F32, got[0].Bits(i), uint64(want)))
					}
				}
			}
			check(int(hi-lo), func(i int) uint32 { return min(lo+uint32(i), hi-1) })
			check(chunk, random)
			require.NoError(b, exe.Close())
			b.ReportMetric(worst, op.String()+"-max-ulp")
			require.LessOrEqual(b, worst, vkxla.Tolerance(op, hlo.F32).ULP, "%v", op)
		}
	}
}
