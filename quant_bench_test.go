package vkxla_test

import (
	"fmt"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// BenchmarkGEMVInt4 is the decode step of a quantised LLM: a GEMV of x [1,4096]
// by a 4096×4096 weight stored as s4 (scaled per group of 128 k, GPTQ/AWQ's
// layout: scales [K/128, N], broadcast and reshaped to [K, N]) against the same
// GEMV with the weight stored f16, in one process (best GPU time of the runs, by
// timestamps). Both compute in f32 (x f32, the weight dequantised or widened to
// f32, f16 scales widened) or both in f16 (the weight dequantised to f16, scaled
// in f16, the dot accumulated in f32 and rounded to f16), in both layouts: W stored K×N (x·W)
// and N×K (x·Wᵀ, PyTorch's [out, in]). Metrics: x-f16 is the f16 GEMV's time over
// the int4 one's (the goal is ≥ 2.5: a quarter of the bytes); MB-int4 and MB-f16
// the bytes each GEMV reads and writes (its inputs and output, once); GB/s-int4
// and GB/s-f16 those over the times.
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench GEMVInt4 -benchtime 5x .
func BenchmarkGEMVInt4(b *testing.B) {
	rt := newRuntime(b)
	for _, cdt := range []hlo.DType{hlo.F32, hlo.F16} {
		for _, tr := range []bool{false, true} {
			q := quantDot{wdt: hlo.S4, cdt: cdt, sdt: hlo.F16, m: 1, k: 4096, n: 4096, transposed: tr, scale: groupScale, group: 128}
			f := quantDot{wdt: hlo.F16, cdt: cdt, sdt: hlo.F16, m: 1, k: 4096, n: 4096, transposed: tr}
			name := fmt.Sprintf("%v/x·W", cdt)
			if tr {
				name = fmt.Sprintf("%v/x·Wᵀ", cdt)
			}
			b.Run(name, func(b *testing.B) {
				qm, fm := q.module(b), f.plainModule(b)
				if cdt == hlo.F32 {
					fm = f.module(b) // x f32 · convert(W f16): the mixed-precision GEMV
				}
				qin, fin := q.inputs(qm, 91), f.inputs(fm, 92)
				times := bestInterleavedN(b, rt, []timedRun{{m: qm, in: qin}, {m: fm, in: fin}})
				qb, fb := moduleBytes(qm), moduleBytes(fm)
				b.ReportMetric(times[1].Seconds()/times[0].Seconds(), "x-f16")
				b.ReportMetric(qb/1e6, "MB-int4")
				b.ReportMetric(fb/1e6, "MB-f16")
				b.ReportMetric(qb/times[0].Seconds()/1e9, "GB/s-int4")
				b.ReportMetric(fb/times[1].Seconds()/1e9, "GB/s-f16")
			})
		}
	}
}

// plainModule is the layer with a weight of the dot's own type: no convert.
func (q quantDot) plainModule(tb testing.TB) *hlo.Module {
	text := q.text()
	m, err := hlo.ParseModule(text)
	if err != nil {
		tb.Fatal(err)
	}
	b := hlo.NewBuilder("f16_linear")
	ps := m.Entry.Params
	x, w := b.Parameter(ps[0].Shape, "x"), b.Parameter(ps[1].Shape.WithDType(q.cdt), "w")
	rc := int64(0)
	if q.transposed {
		rc = 1
	}
	return mustBuild(tb, b, b.DotGeneral(x, w, hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{rc}}))
}

// moduleBytes is what one run of m reads and writes at least: its parameters
// and its result, once each.
func moduleBytes(m *hlo.Module) float64 {
	n := m.Entry.Root.Shape.ByteSize()
	for _, p := range m.Entry.Params {
		n += p.Shape.ByteSize()
	}
	return float64(n)
}
