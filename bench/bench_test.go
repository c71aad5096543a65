package bench

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

func f32Bytes(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func TestChecks(t *testing.T) {
	x, y := f32Bytes(1, -2, 0.5), f32Bytes(3, 4, -1)
	require.NoError(t, checkSaxpy(x, y, f32Bytes(5, 0, 0)))
	require.ErrorContains(t, checkSaxpy(x, y, f32Bytes(5, 0, 0.1)), "element 2")

	// [1 2; 3 4]·[5 6; 7 8] = [19 22; 43 50]
	a, b := f32Bytes(1, 2, 3, 4), f32Bytes(5, 6, 7, 8)
	require.NoError(t, checkGemm(a, b, f32Bytes(19, 22, 43, 50), 2, 2, 2))
	require.ErrorContains(t, checkGemm(a, b, f32Bytes(19, 22, 43, 51), 2, 2, 2), "C[1,1]")

	require.NoError(t, checkNegate(x, f32Bytes(-1, 2, -0.5)))
	require.Error(t, checkNegate(x, f32Bytes(-1, 2, 0.5)))
}

func TestSamples(t *testing.T) {
	require.Equal(t, []int{0, 1, 2}, samples(3, 10))
	s := samples(1000, 5)
	require.Equal(t, []int{0, 249, 499, 749, 999}, s)
}

func TestWorkloadsBuild(t *testing.T) {
	b := hlo.NewBuilder("saxpy")
	m, err := b.Build(Saxpy(b, 8))
	require.NoError(t, err)
	require.Len(t, m.Entry.Params, 3)
	b = hlo.NewBuilder("gemm")
	_, err = b.Build(Gemm(b, 2, 3, 4))
	require.NoError(t, err)
	lit := F32Literal(1, 4, 4)
	for i := range 16 {
		v := f32At(lit.Bytes(), i)
		require.True(t, v >= -1 && v < 1, "%v", v)
	}
	require.Equal(t, lit.Bytes(), F32Literal(1, 4, 4).Bytes(), "deterministic")
}

func TestFiguresAndTables(t *testing.T) {
	w := SaxpyWorkload(1 << 20)
	require.InDelta(t, 12.582912, w.Figure(time.Millisecond), 1e-9) // 12 MiB in 1 ms
	require.InDelta(t, 2.0, Speedup(time.Millisecond, 2*time.Millisecond), 1e-12)
	lat := DispatchWorkload(16)
	require.True(t, lat.Latency())
	require.InDelta(t, 60.0, lat.Figure(60*time.Microsecond), 1e-9)

	var gen, base Stats
	gen.Add(Sample{Wall: 3 * time.Millisecond, GPU: 2 * time.Millisecond, Dispatches: 3})
	base.Add(Sample{Wall: 2 * time.Millisecond, GPU: time.Millisecond, Dispatches: 1})
	// Two more rounds, one where the baseline hit a load spike: the best times
	// ignore it, and so does the median of the round ratios (1/2, 8/2, 1/2).
	for _, spike := range []time.Duration{8, 1} {
		gen.Add(Sample{Wall: 3 * time.Millisecond, GPU: 2 * time.Millisecond, Dispatches: 3})
		base.Add(Sample{Wall: 9 * time.Millisecond, GPU: spike * time.Millisecond, Dispatches: 1})
	}
	res := Result{Workload: w, Variants: []Measured{
		{Name: "vkxla (3 kernels)", Generated: true, Stats: gen, PeakBytes: 100},
		{Name: "saxpy_vec4", Stats: base, PeakBytes: 50},
	}}
	var out bytes.Buffer
	WriteSummary(&out, []Result{res})
	require.Contains(t, out.String(), "| saxpy f32[1048576] | vkxla (3 kernels) | 6.29 GB/s | saxpy_vec4 | 12.6 GB/s | 0.50× | 0.50× | 100 |")
	out.Reset()
	WriteDetails(&out, []Result{res})
	require.Equal(t, 4, strings.Count(out.String(), "\n"))
}
