package vkxla_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// TestGEMVAgainstCPU runs dots of 1 to 4 rows (codegen's GEMV: all rows × 16
// columns per invocation; its own test checks the strategy) against cpuref,
// fused and unfused: both layouts of B (K×N and N×K), odd N and K (element reads
// instead of vec4), batch dims (one query over a KV cache), K split into parts
// (a narrow output: the values of attention, the epilogue case; and a K past
// lavapipe's loop bound: 2 kernels, partial sums and their sum), an epilogue
// (bias + tanh), in f32, bf16 and f16.
func TestGEMVAgainstCPU(t *testing.T) {
	var cases []dumpCase
	for _, dt := range []hlo.DType{hlo.F32, hlo.BF16, hlo.F16} {
		for m := int64(1); m <= 4; m++ {
			cases = append(cases, dumpCase{fmt.Sprintf("%v x·W M=%d", dt, m), fmt.Sprintf(`HloModule gemv
ENTRY main {
  x = %[1]v[%[2]d,192]{1,0} parameter(0)
  w = %[1]v[192,136]{1,0} parameter(1)
  ROOT y = %[1]v[%[2]d,136]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`, dt, m), 1}, dumpCase{fmt.Sprintf("%v x·Wᵀ M=%d", dt, m), fmt.Sprintf(`HloModule gemv_nk
ENTRY main {
  x = %[1]v[%[2]d,192]{1,0} parameter(0)
  w = %[1]v[136,192]{1,0} parameter(1)
  ROOT y = %[1]v[%[2]d,136]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
}`, dt, m), 1})
		}
		cases = append(cases, dumpCase{fmt.Sprintf("%v odd N and K", dt), fmt.Sprintf(`HloModule gemv_odd
ENTRY main {
  x = %[1]v[3,131]{1,0} parameter(0)
  w = %[1]v[131,77]{1,0} parameter(1)
  ROOT y = %[1]v[3,77]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`, dt), 1}, dumpCase{fmt.Sprintf("%v odd K, N×K", dt), fmt.Sprintf(`HloModule gemv_odd_nk
ENTRY main {
  x = %[1]v[1,131]{1,0} parameter(0)
  w = %[1]v[77,131]{1,0} parameter(1)
  ROOT y = %[1]v[1,77]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
}`, dt), 1}, dumpCase{fmt.Sprintf("%v attention over a KV cache", dt), fmt.Sprintf(`HloModule decode_attention
ENTRY main {
  q = %[1]v[12,1,64]{2,1,0} parameter(0)
  k = %[1]v[12,512,64]{2,1,0} parameter(1)
  ROOT s = %[1]v[12,1,512]{2,1,0} dot(q, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
}`, dt), 1}, dumpCase{fmt.Sprintf("%v probabilities · V", dt), fmt.Sprintf(`HloModule decode_values
ENTRY main {
  p = %[1]v[12,1,512]{2,1,0} parameter(0)
  v = %[1]v[12,512,64]{2,1,0} parameter(1)
  ROOT o = %[1]v[12,1,64]{2,1,0} dot(p, v), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}`, dt), 2}, dumpCase{fmt.Sprintf("%v projection + bias + tanh (epilogue)", dt), fmt.Sprintf(`HloModule gemv_epilogue
ENTRY main {
  x = %[1]v[1,256]{1,0} parameter(0)
  w = %[1]v[256,120]{1,0} parameter(1)
  b = %[1]v[120]{0} parameter(2)
  d = %[1]v[1,120]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = %[1]v[1,120]{1,0} broadcast(b), dimensions={1}
  a = %[1]v[1,120]{1,0} add(d, bb)
  ROOT t = %[1]v[1,120]{1,0} tanh(a)
}`, dt), 2})
	}
	runTextCases(t, cases)
}

// TestGEMVTransposedAgainstCPU runs W·x, the vector on the right (many rows, at
// most 4 columns: codegen's GEMV of Cᵀ = xᵀ·Wᵀ), against cpuref, fused and
// unfused: W stored M×K (vec4 along K) and K×M (lhs contracting dim 0: vec4
// along M), 1 to 4 columns (C's columns strided in the output), odd sizes
// (element reads), batch dims, two merged free dims, an epilogue in the GEMV
// kernel and one in the sum pass of a split K, in f32, bf16 and f16.
func TestGEMVTransposedAgainstCPU(t *testing.T) {
	var cases []dumpCase
	for _, dt := range []hlo.DType{hlo.F32, hlo.BF16, hlo.F16} {
		add := func(name string, kernels int, text string) {
			cases = append(cases, dumpCase{fmt.Sprintf("%v %s", dt, name), fmt.Sprintf(text, dt), kernels})
		}
		add("W·x, W M×K", 1, `HloModule wx
ENTRY main {
  w = %[1]v[300,192]{1,0} parameter(0)
  x = %[1]v[192,1]{1,0} parameter(1)
  ROOT y = %[1]v[300,1]{1,0} dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`)
		add("W·X, 3 columns", 1, `HloModule wx3
ENTRY main {
  w = %[1]v[300,192]{1,0} parameter(0)
  x = %[1]v[192,3]{1,0} parameter(1)
  ROOT y = %[1]v[300,3]{1,0} dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`)
		add("W·X, 4 columns (X read as vec4 of its 4 columns)", 1, `HloModule wx4
ENTRY main {
  w = %[1]v[300,192]{1,0} parameter(0)
  x = %[1]v[192,4]{1,0} parameter(1)
  ROOT y = %[1]v[300,4]{1,0} dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`)
		add("Wᵀ·x, W K×M", 1, `HloModule wtx
ENTRY main {
  w = %[1]v[192,300]{1,0} parameter(0)
  x = %[1]v[192,2]{1,0} parameter(1)
  ROOT y = %[1]v[300,2]{1,0} dot(w, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}`)
		add("odd M and K", 1, `HloModule wx_odd
ENTRY main {
  w = %[1]v[301,131]{1,0} parameter(0)
  x = %[1]v[131,1]{1,0} parameter(1)
  ROOT y = %[1]v[301,1]{1,0} dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`)
		add("K·q over a cache, batched", 1, `HloModule kq
ENTRY main {
  k = %[1]v[12,512,64]{2,1,0} parameter(0)
  q = %[1]v[12,64,1]{2,1,0} parameter(1)
  ROOT s = %[1]v[12,512,1]{2,1,0} dot(k, q), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}`)
		add("two free dims + residual (epilogue in the GEMV)", 1, `HloModule wx_free2
ENTRY main {
  w = %[1]v[4,75,192]{2,1,0} parameter(0)
  x = %[1]v[192,2]{1,0} parameter(1)
  r = %[1]v[4,75,2]{2,1,0} parameter(2)
  d = %[1]v[4,75,2]{2,1,0} dot(w, x), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  ROOT y = %[1]v[4,75,2]{2,1,0} add(d, r)
}`)
		add("+ bias + tanh, K split (epilogue in the sum)", 2, `HloModule wx_epilogue
ENTRY main {
  w = %[1]v[300,256]{1,0} parameter(0)
  x = %[1]v[256,1]{1,0} parameter(1)
  b = %[1]v[300]{0} parameter(2)
  d = %[1]v[300,1]{1,0} dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = %[1]v[300,1]{1,0} broadcast(b), dimensions={0}
  a = %[1]v[300,1]{1,0} add(d, bb)
  ROOT t = %[1]v[300,1]{1,0} tanh(a)
}`)
	}
	runTextCases(t, cases)
}

// TestGEMVSlicedAgainstCPU runs one-row dots over W stored with N minor, large
// enough that K is summed in slices of 16 k (codegen's gemvSliced: partial sums,
// then their sum), against cpuref, fused and unfused: K with a tail of 2 (read
// by the last slice), odd N (element reads), batch dims, Wᵀ·x (the transposed
// GEMV, W stored K×M), and a bias + tanh epilogue in the sum pass, in f32, bf16
// and f16.
func TestGEMVSlicedAgainstCPU(t *testing.T) {
	var cases []dumpCase
	for _, dt := range []hlo.DType{hlo.F32, hlo.BF16, hlo.F16} {
		add := func(name string, text string) {
			cases = append(cases, dumpCase{fmt.Sprintf("%v %s", dt, name), fmt.Sprintf(text, dt), 2})
		}
		add("x·W, K with a tail, + bias + tanh", `HloModule gemv_sliced
ENTRY main {
  x = %[1]v[1,1030]{1,0} parameter(0)
  w = %[1]v[1030,260]{1,0} parameter(1)
  b = %[1]v[260]{0} parameter(2)
  d = %[1]v[1,260]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = %[1]v[1,260]{1,0} broadcast(b), dimensions={1}
  a = %[1]v[1,260]{1,0} add(d, bb)
  ROOT t = %[1]v[1,260]{1,0} tanh(a)
}`)
		add("x·W, odd N", `HloModule gemv_sliced_odd
ENTRY main {
  x = %[1]v[1,1027]{1,0} parameter(0)
  w = %[1]v[1027,259]{1,0} parameter(1)
  ROOT y = %[1]v[1,259]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`)
		add("p·V, batched", `HloModule gemv_sliced_batch
ENTRY main {
  p = %[1]v[2,1,1024]{2,1,0} parameter(0)
  v = %[1]v[2,1024,256]{2,1,0} parameter(1)
  ROOT o = %[1]v[2,1,256]{2,1,0} dot(p, v), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}`)
		add("Wᵀ·x, W K×M", `HloModule gemv_sliced_wtx
ENTRY main {
  w = %[1]v[1030,264]{1,0} parameter(0)
  x = %[1]v[1030,1]{1,0} parameter(1)
  ROOT y = %[1]v[264,1]{1,0} dot(w, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}`)
	}
	runTextCases(t, cases)
}

// TestMixedPrecisionDotOneKernel: a dot of bf16 or f16 operands with an f32 result
// (preferred_element_type) and its operand converts are one kernel (the GEMM or
// GEMV reads the 16-bit operands and widens them in registers; two where the
// GEMV splits K), with and without an epilogue; its result is bit for bit the result of converting the operands in
// kernels of their own first (fusion off: the same f32 products in the same
// order), and within the dot's tolerance of cpuref.
func TestMixedPrecisionDotOneKernel(t *testing.T) {
	rt := newRuntime(t)
	for _, dt := range []hlo.DType{hlo.BF16, hlo.F16} {
		for _, c := range []struct {
			name    string
			m, k, n int64
			bias    bool
			kernels int // 2: the GEMV's K split (partial sums, then their sum)
		}{{"GEMV", 1, 96, 200, false, 1}, {"GEMM", 64, 96, 80, false, 1}, {"GEMV + bias", 2, 128, 64, true, 1},
			{"GEMM + bias", 40, 64, 48, true, 1}, {"GEMV, K split, + bias", 3, 512, 40, true, 2}} {
			t.Run(fmt.Sprintf("%v %s", dt, c.name), func(t *testing.T) {
				text := fmt.Sprintf(`HloModule mixed
ENTRY main {
  x = %[1]v[%[2]d,%[3]d]{1,0} parameter(0)
  w = %[1]v[%[3]d,%[4]d]{1,0} parameter(1)
  ROOT d = f32[%[2]d,%[4]d]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`, dt, c.m, c.k, c.n)
				if c.bias {
					text = fmt.Sprintf(`HloModule mixed_bias
ENTRY main {
  x = %[1]v[%[2]d,%[3]d]{1,0} parameter(0)
  w = %[1]v[%[3]d,%[4]d]{1,0} parameter(1)
  b = f32[%[4]d]{0} parameter(2)
  d = f32[%[2]d,%[4]d]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[%[2]d,%[4]d]{1,0} broadcast(b), dimensions={1}
  ROOT y = f32[%[2]d,%[4]d]{1,0} add(d, bb)
}`, dt, c.m, c.k, c.n)
				}
				m, err := hlo.ParseModule(text)
				require.NoError(t, err)
				inputs := randomInputs(rand.New(rand.NewPCG(12, 1)), m)
				fused, kernels := runCounting(t, rt, m, nil, inputs)
				require.Equal(t, c.kernels, kernels, "dispatches of the fused program")
				unfused, unfusedKernels := runCounting(t, rt, m, []vkxla.CompileOption{vkxla.WithoutPasses("fusion")}, inputs)
				require.Greater(t, unfusedKernels, 2, "the converts as kernels of their own")
				require.NoError(t, vkxla.ErrorSpec{}.Check(fused[0], unfused[0]), "fused vs converted first, bit for bit")
				want, err := cpuref.Eval(m, inputs...)
				require.NoError(t, err)
				require.NoError(t, vkxla.ProgramTolerance(m, hlo.F32).Check(fused[0], want.Leaves()[0]))
			})
		}
	}
}

// TestGEMVLongK: a K past lavapipe's loop bound (300002: 75000 quads and a tail
// of 2) is split into parts, every k summed exactly once: with integer inputs in
// [-2, 2] every partial sum is an integer below 2^24, exact in f32 in any order,
// so the result must equal cpuref's bit for bit, fused (a bias epilogue in the
// sum pass) and not; x·W, W·x (the transposed GEMV) and one row x·W (K =
// 200002 in slices of 16 k).
func TestGEMVLongK(t *testing.T) {
	const k = 300002
	const kSliced = 200002 // 12501 slices: within a quarter of the bound for the sum pass
	rt := newRuntime(t)
	rng := rand.New(rand.NewPCG(12, 2))
	ints := func(dims ...int64) *hlo.Literal {
		l := hlo.NewLiteral(hlo.MakeShape(hlo.F32, dims...))
		for i := range l.NumElements() {
			l.SetFloat64(i, float64(rng.IntN(5)-2))
		}
		return l
	}
	for _, tc := range []struct {
		name, text string
		inputs     []*hlo.Literal
	}{{"x·W", fmt.Sprintf(`HloModule gemv_long
ENTRY main {
  x = f32[2,%[1]d]{1,0} parameter(0)
  w = f32[%[1]d,24]{1,0} parameter(1)
  b = f32[24]{0} parameter(2)
  d = f32[2,24]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[2,24]{1,0} broadcast(b), dimensions={1}
  ROOT y = f32[2,24]{1,0} add(d, bb)
}`, k), []*hlo.Literal{ints(2, k), ints(k, 24), ints(24)}}, {"W·x", fmt.Sprintf(`HloModule gemv_long_wx
ENTRY main {
  w = f32[24,%[1]d]{1,0} parameter(0)
  x = f32[%[1]d,1]{1,0} parameter(1)
  b = f32[24]{0} parameter(2)
  d = f32[24,1]{1,0} dot(w, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[24,1]{1,0} broadcast(b), dimensions={0}
  ROOT y = f32[24,1]{1,0} add(d, bb)
}`, k), []*hlo.Literal{ints(24, k), ints(k, 1), ints(24)}}, {"one row, x·W sliced", fmt.Sprintf(`HloModule gemv_long_sliced
ENTRY main {
  x = f32[1,%[1]d]{1,0} parameter(0)
  w = f32[%[1]d,24]{1,0} parameter(1)
  b = f32[24]{0} parameter(2)
  d = f32[1,24]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[1,24]{1,0} broadcast(b), dimensions={1}
  ROOT y = f32[1,24]{1,0} add(d, bb)
}`, kSliced), []*hlo.Literal{ints(1, kSliced), ints(kSliced, 24), ints(24)}}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := hlo.ParseModule(tc.text)
			require.NoError(t, err)
			want, err := cpuref.Eval(m, tc.inputs...)
			require.NoError(t, err)
			for _, opts := range [][]vkxla.CompileOption{nil, {vkxla.WithoutPasses("fusion")}} {
				got, kernels := runCounting(t, rt, m, opts, tc.inputs)
				require.NoError(t, vkxla.ErrorSpec{}.Check(got[0], want.Leaves()[0]), "fusion off: %v", opts != nil)
				if opts == nil {
					require.Equal(t, 2, kernels, "partial sums, then their sum with the bias")
				}
			}
		})
	}
}
