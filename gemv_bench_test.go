package vkxla_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// gemvBench is a dot of m rows over a matrix W: W stored K×N (x·W), or N×K
// (transposed: x·Wᵀ, q·Kᵀ), with batch dims in front, of dt (operands) and out
// (the result: f32 for a mixed-precision dot); or (right) m columns x on the
// right of W: W·x with W stored N×K, or (transposed) K×N (Wᵀ·x).
type gemvBench struct {
	name       string
	dt, out    hlo.DType
	batch      []int64
	m, k, n    int64
	transposed bool
	right      bool
}

// w is the matrix's parameter number.
func (gb gemvBench) w() int {
	if gb.right {
		return 0
	}
	return 1
}

func (gb gemvBench) module(tb testing.TB) *hlo.Module {
	if gb.right {
		return gb.rightModule(tb)
	}
	lhs := append(append([]int64(nil), gb.batch...), gb.m, gb.k)
	rhs := append(append([]int64(nil), gb.batch...), gb.k, gb.n)
	res := append(append([]int64(nil), gb.batch...), gb.m, gb.n)
	nb := int64(len(gb.batch))
	rc := nb
	if gb.transposed {
		rhs[nb], rhs[nb+1], rc = gb.n, gb.k, nb+1
	}
	batchDims := ""
	if nb > 0 {
		batchDims = "lhs_batch_dims={0}, rhs_batch_dims={0}, "
	}
	text := fmt.Sprintf(`HloModule gemv_bench
ENTRY main {
  x = %v parameter(0)
  w = %v parameter(1)
  ROOT y = %v dot(x, w), %slhs_contracting_dims={%d}, rhs_contracting_dims={%d}
}`, hlo.MakeShape(gb.dt, lhs...), hlo.MakeShape(gb.dt, rhs...), hlo.MakeShape(gb.out, res...), batchDims, nb+1, rc)
	m, err := hlo.ParseModule(text)
	require.NoError(tb, err)
	return m
}

func (gb gemvBench) rightModule(tb testing.TB) *hlo.Module {
	w, lc := hlo.MakeShape(gb.dt, gb.n, gb.k), 1
	if gb.transposed {
		w, lc = hlo.MakeShape(gb.dt, gb.k, gb.n), 0
	}
	m, err := hlo.ParseModule(fmt.Sprintf(`HloModule gemv_right_bench
ENTRY main {
  w = %v parameter(0)
  x = %v parameter(1)
  ROOT y = %v dot(w, x), lhs_contracting_dims={%d}, rhs_contracting_dims={0}
}`, w, hlo.MakeShape(gb.dt, gb.k, gb.m), hlo.MakeShape(gb.out, gb.n, gb.m), lc))
	require.NoError(tb, err)
	return m
}

// BenchmarkGEMV measures dots of a few rows (codegen's GEMV: memory-bound, each
// element of W read once) against an elementwise copy of W in the same process
// (best GPU time of the runs, by timestamps): GB/s counts W, x and y once each;
// copy-GB/s is the copy's (W read and written); x-copy is the ratio (the target
// is ≥ 0.5). The shapes are a GPT-2 decode step's: the QKV projection [1,768] ×
// [768,2304] in both layouts, 4 rows, bf16 and bf16×bf16→f32 (one kernel: the
// operand converts fused), and attention of one query over a 512-position KV cache
// per head; and W·x, the vector on the right, with W stored 2304×768 or
// 768×2304.
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench GEMV -benchtime 5x .
func BenchmarkGEMV(b *testing.B) {
	rt := newRuntime(b)
	for _, gb := range []gemvBench{
		{name: "x·W-768x2304", dt: hlo.F32, out: hlo.F32, m: 1, k: 768, n: 2304},
		{name: "x·Wᵀ-768x2304", dt: hlo.F32, out: hlo.F32, m: 1, k: 768, n: 2304, transposed: true},
		{name: "4rows-x·W-768x3072", dt: hlo.F32, out: hlo.F32, m: 4, k: 768, n: 3072},
		{name: "bf16-x·W-768x2304", dt: hlo.BF16, out: hlo.BF16, m: 1, k: 768, n: 2304},
		{name: "bf16→f32-x·W-768x2304", dt: hlo.BF16, out: hlo.F32, m: 1, k: 768, n: 2304},
		{name: "q·Kᵀ-12x512x64", dt: hlo.F32, out: hlo.F32, batch: []int64{12}, m: 1, k: 64, n: 512, transposed: true},
		{name: "p·V-12x512x64", dt: hlo.F32, out: hlo.F32, batch: []int64{12}, m: 1, k: 512, n: 64},
		{name: "W·x-2304x768", dt: hlo.F32, out: hlo.F32, m: 1, k: 768, n: 2304, right: true},
		{name: "Wᵀ·x-768x2304", dt: hlo.F32, out: hlo.F32, m: 1, k: 768, n: 2304, right: true, transposed: true},
	} {
		b.Run(gb.name, func(b *testing.B) {
			m := gb.module(b)
			in := []*hlo.Literal{lit(rnd(71), gb.dt, unitDomain, m.Entry.Params[0].Shape.Dims...),
				lit(rnd(72), gb.dt, unitDomain, m.Entry.Params[1].Shape.Dims...)}
			w := in[gb.w()]
			dot, base := bestInterleaved(b, rt, m, in, copyModule(b, w.Shape()), []*hlo.Literal{w})
			bytes := float64(in[0].Shape().ByteSize() + in[1].Shape().ByteSize() + m.Entry.Root.Shape.ByteSize())
			copyBytes := float64(2 * w.Shape().ByteSize())
			b.ReportMetric(bytes/dot.Seconds()/1e9, "GB/s")
			b.ReportMetric(copyBytes/base.Seconds()/1e9, "copy-GB/s")
			b.ReportMetric(bytes/dot.Seconds()/(copyBytes/base.Seconds()), "x-copy")
		})
	}
}
