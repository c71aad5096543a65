package vkxla_test

import (
	"testing"
	"time"

	"github.com/vkxla/vkxla/hlo"
)

// BenchmarkPhilox measures rng-bit-generator's Philox4x32-10 bits (u32[1M] and
// u64[512K], 4 MiB each) against an elementwise copy of f32[1M] (negate: one load,
// one store) in the same process. Metrics from the best GPU time of the runs
// (timestamps): ns/elem, and x-copy = time ÷ the copy's time.
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench Philox -benchtime 10x .
func BenchmarkPhilox(b *testing.B) {
	rt := newRuntime(b)
	const n = 1 << 20
	copyIn := hlo.NewLiteral(hlo.MakeShape(hlo.F32, n))
	state := hlo.MustFromSlice([]int64{3}, []uint64{0x243F6A8885A308D3, 7, 1})
	var copyTime time.Duration
	for _, v := range []struct {
		name string
		bits hlo.Shape
	}{{"copy", hlo.Shape{}}, {"u32", hlo.MakeShape(hlo.U32, n)}, {"u64", hlo.MakeShape(hlo.U64, n/2)}} {
		b.Run(v.name, func(b *testing.B) {
			if v.name == "copy" {
				copyTime = bestGPUTime(b, rt, hlo.OpNegate, copyIn)
				b.ReportMetric(float64(copyTime.Nanoseconds())/n, "ns/elem")
				return
			}
			if copyTime == 0 {
				copyTime = bestGPUTime(b, rt, hlo.OpNegate, copyIn)
			}
			bl := hlo.NewBuilder("philox_" + v.name)
			st := bl.Parameter(state.Shape(), "state")
			m := mustBuild(b, bl, bl.GetTupleElement(bl.RngBitGenerator(st, hlo.RngPhilox, v.bits), 1))
			best := bestModuleTime(b, rt, m, state)
			b.ReportMetric(float64(best.Nanoseconds())/float64(v.bits.NumElements()), "ns/elem")
			b.ReportMetric(float64(best)/float64(copyTime), "x-copy")
		})
	}
}
