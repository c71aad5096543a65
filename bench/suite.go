package bench

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/shaders"
)

// SaxpyWorkload is a·x + y over f32[n]; the figure is GB/s of the 12·n bytes a
// saxpy must move (read x, read y, write the result), whatever the variant moves.
func SaxpyWorkload(n int) Workload {
	inputs := func() []*hlo.Literal {
		x, y := saxpyInputs(n)
		return []*hlo.Literal{ScalarF32(SaxpyA), x, y}
	}
	return Workload{
		Name: fmt.Sprintf("saxpy f32[%d]", n),
		Unit: "GB/s",
		Work: 12 * float64(n),
		Generated: []Variant{
			Executable("vkxla", func() (*hlo.Module, error) {
				b := hlo.NewBuilder("saxpy")
				return b.Build(Saxpy(b, n))
			}, inputs, func(in, out []*hlo.Literal) error {
				return checkSaxpy(in[1].Bytes(), in[2].Bytes(), out[0].Bytes())
			}),
			Program("codegen-fused", func() (*hlo.Computation, error) {
				b := hlo.NewBuilder("saxpy_fused")
				return b.BuildComputation(Saxpy(b, n))
			}, inputs, func(in []*hlo.Literal, out [][]byte) error {
				return checkSaxpy(in[1].Bytes(), in[2].Bytes(), out[0])
			}),
			// The same kernel writing over y, as saxpy_vec4 does: equal memory traffic.
			ProgramInPlace("codegen-fused-inplace", map[int]int{0: 2}, func() (*hlo.Computation, error) {
				b := hlo.NewBuilder("saxpy_fused")
				return b.BuildComputation(Saxpy(b, n))
			}, inputs, func(in []*hlo.Literal, out [][]byte) error {
				return checkSaxpy(in[1].Bytes(), in[2].Bytes(), out[0])
			}),
		},
		Baselines: []Variant{
			saxpyBaseline(shaders.Saxpy, shaders.SaxpyDispatch, n),
			saxpyBaseline(shaders.SaxpyVec4, shaders.SaxpyVec4Dispatch, n),
		},
	}
}

// SgemmWorkload is the f32 product of an m×k and a k×n matrix; the figure is
// GFLOP/s of 2·m·n·k operations.
func SgemmWorkload(m, n, k int) Workload {
	return Workload{
		Name:      fmt.Sprintf("sgemm %d×%d×%d", m, n, k),
		Unit:      "GFLOP/s",
		Work:      2 * float64(m) * float64(n) * float64(k),
		Generated: []Variant{GemmExecutable("vkxla", m, n, k)},
		Baselines: []Variant{
			sgemmBaseline(shaders.SgemmNaive, shaders.SgemmNaiveDispatch, m, n, k),
			sgemmBaseline(shaders.SgemmTiled, shaders.SgemmTiledDispatch, m, n, k),
			sgemmBaseline(shaders.SgemmVec4, shaders.SgemmVec4Dispatch, m, n, k),
		},
	}
}

// GemmExecutable is the f32 product of an m×k and a k×n matrix compiled by vkxla,
// its output checked against a float64 product on the first run.
func GemmExecutable(name string, m, n, k int) Variant {
	return Executable(name, func() (*hlo.Module, error) {
		b := hlo.NewBuilder("sgemm")
		return b.Build(Gemm(b, m, n, k))
	}, func() []*hlo.Literal {
		a, b := gemmInputs(m, n, k)
		return []*hlo.Literal{a, b}
	}, func(in, out []*hlo.Literal) error {
		return checkGemm(in[0].Bytes(), in[1].Bytes(), out[0].Bytes(), m, n, k)
	})
}

// DispatchWorkload is the overhead of one Run of a one-op executable (negate
// f32[n], small n) against the device package's raw round trip of one recorded
// dispatch; the figure is µs per run, wall time.
func DispatchWorkload(n int) Workload {
	return Workload{
		Name: fmt.Sprintf("dispatch overhead (negate f32[%d])", n),
		Unit: "µs",
		Generated: []Variant{
			Executable("vkxla", func() (*hlo.Module, error) {
				b := hlo.NewBuilder("negate")
				return b.Build(Negate(b, n))
			}, func() []*hlo.Literal {
				return []*hlo.Literal{F32Literal(5, int64(n))}
			}, func(in, out []*hlo.Literal) error {
				return checkNegate(in[0].Bytes(), out[0].Bytes())
			}),
		},
		Baselines: []Variant{roundTrip(n)},
	}
}
