package vkxla_test

// Differential tests of code generation's strategies and numerics edge cases: the
// tiled GEMM, the workgroup tree and two-pass reductions, the bitonic sort, the
// three scatter paths, 2-D grids, and the special values (NaN, ±inf, ±0, huge
// ratios, saturation) where SPIR-V's own instructions are undefined and the
// emitters pin cpuref's answers. GPU vs cpuref, tolerances from vkxla.Tolerance.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// diffCase is one module with its inputs and error spec.
type diffCase struct {
	name   string
	build  func(b *hlo.Builder) *hlo.Instruction
	inputs []*hlo.Literal
	spec   vkxla.ErrorSpec
}

func runDiffCases(t *testing.T, cases []diffCase) {
	rt := newRuntime(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := hlo.NewBuilder(sanitize(c.name))
			m := mustBuild(t, b, c.build(b))
			checkAgainstCPU(t, rt, m, c.spec, c.inputs...)
		})
	}
}

func sanitize(s string) string {
	out := []byte(s)
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			out[i] = '_'
		}
	}
	return string(out)
}

func rnd(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 7)) }

func lit(rng *rand.Rand, dt hlo.DType, d domain, dims ...int64) *hlo.Literal {
	return randomLiteral(rng, hlo.MakeShape(dt, dims...), d)
}

func TestCodegenDifferentialGEMM(t *testing.T) {
	rng := rnd(1)
	spec := vkxla.Tolerance(hlo.OpDot, hlo.F32)
	mm := func(l, r []int64, dd hlo.DotDims) diffCase {
		return diffCase{
			name: fmt.Sprintf("%v·%v", l, r),
			build: func(b *hlo.Builder) *hlo.Instruction {
				return b.DotGeneral(b.Parameter(hlo.MakeShape(hlo.F32, l...), "a"), b.Parameter(hlo.MakeShape(hlo.F32, r...), "b"), dd)
			},
			inputs: []*hlo.Literal{lit(rng, hlo.F32, unitDomain, l...), lit(rng, hlo.F32, unitDomain, r...)},
			spec:   spec,
		}
	}
	std := hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}
	half := func(dt hlo.DType, l, r []int64) diffCase {
		return diffCase{name: fmt.Sprintf("%v%v·%v", dt, l, r),
			build: func(b *hlo.Builder) *hlo.Instruction {
				return b.DotGeneral(b.Parameter(hlo.MakeShape(dt, l...), "a"), b.Parameter(hlo.MakeShape(dt, r...), "b"), std)
			},
			inputs: []*hlo.Literal{lit(rng, dt, unitDomain, l...), lit(rng, dt, unitDomain, r...)},
			spec:   vkxla.Tolerance(hlo.OpDot, dt),
		}
	}
	runDiffCases(t, []diffCase{
		half(hlo.F16, []int64{70, 64}, []int64{64, 33}),
		half(hlo.BF16, []int64{40, 100}, []int64{100, 48}),
		mm([]int64{64, 64}, []int64{64, 64}, std),
		mm([]int64{129, 77}, []int64{77, 65}, std),
		mm([]int64{256, 255}, []int64{255, 257}, std),
		mm([]int64{50, 33}, []int64{41, 50}, hlo.DotDims{LhsContracting: []int64{0}, RhsContracting: []int64{1}}),
		mm([]int64{2, 3, 40, 50}, []int64{2, 3, 50, 33}, hlo.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1},
			LhsContracting: []int64{3}, RhsContracting: []int64{2}}),
		// Batch dims with vec4 operand views (K and N multiples of 4) and ragged M.
		mm([]int64{2, 3, 41, 48}, []int64{2, 3, 48, 36}, hlo.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1},
			LhsContracting: []int64{3}, RhsContracting: []int64{2}}),
		// JAX's transposed layouts, read as vec4 along A's rows (A stored K×M, M%4
		// == 0) and along B's k (B stored N×K, K%4 == 0): ragged blocks (M = 68 is
		// not a multiple of 16, N = 36 not of 8), the other operand standard or not.
		mm([]int64{52, 68}, []int64{52, 36}, hlo.DotDims{LhsContracting: []int64{0}, RhsContracting: []int64{0}}),
		mm([]int64{68, 52}, []int64{36, 52}, hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}}),
		mm([]int64{52, 68}, []int64{36, 52}, hlo.DotDims{LhsContracting: []int64{0}, RhsContracting: []int64{1}}),
		// Batch dims after the contracting one: A stored (K, batch, M).
		mm([]int64{40, 3, 36}, []int64{3, 28, 40}, hlo.DotDims{LhsBatch: []int64{1}, RhsBatch: []int64{0},
			LhsContracting: []int64{0}, RhsContracting: []int64{2}}),
		// M%4 != 0 and K%4 != 0: element reads, as before.
		mm([]int64{50, 66}, []int64{50, 34}, hlo.DotDims{LhsContracting: []int64{0}, RhsContracting: []int64{0}}),
	})
}

func TestCodegenDifferentialTreeReduce(t *testing.T) {
	rng := rnd(2)
	red := func(name string, dt hlo.DType, op hlo.Opcode, dims, over []int64, d domain, spec vkxla.ErrorSpec) diffCase {
		init := hlo.NewLiteral(hlo.Scalar(dt))
		if op == hlo.OpMaximum || op == hlo.OpMinimum {
			init = randomLiteral(rng, hlo.Scalar(dt), d)
		}
		return diffCase{
			name: fmt.Sprintf("%s/%v/%v%v", name, op, dt, dims),
			build: func(b *hlo.Builder) *hlo.Instruction {
				x := b.Parameter(hlo.MakeShape(dt, dims...), "x")
				return b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.Parameter(hlo.Scalar(dt), "init")}, b.Reducer(op, dt), over)
			},
			inputs: []*hlo.Literal{lit(rng, dt, d, dims...), init},
			spec:   spec,
		}
	}
	sum := vkxla.Tolerance(hlo.OpReduce, hlo.F32)
	cases := []diffCase{
		red("rows", hlo.F32, hlo.OpAdd, []int64{5, 5000}, []int64{1}, unitDomain, sum),
		red("columns", hlo.F32, hlo.OpAdd, []int64{4097, 3}, []int64{0}, unitDomain, sum),
		red("two-pass", hlo.F32, hlo.OpAdd, []int64{1 << 18}, []int64{0}, unitDomain, vkxla.ErrorSpec{Abs: 1e-3, Rel: 1e-4}),
		red("two-pass-3d", hlo.F32, hlo.OpAdd, []int64{3, 300, 100}, []int64{2, 1}, unitDomain, sum),
		red("rows", hlo.S32, hlo.OpAdd, []int64{3, 70000}, []int64{1}, unitDomain, exact()),
		red("rows", hlo.U32, hlo.OpMaximum, []int64{3, 5000}, []int64{1}, unitDomain, exact()),
		red("rows", hlo.S32, hlo.OpMinimum, []int64{2, 1 << 17}, []int64{1}, unitDomain, exact()),
		red("rows", hlo.F32, hlo.OpMaximum, []int64{3, 3000}, []int64{1}, unitDomain, exact()),
		red("rows", hlo.F16, hlo.OpMaximum, []int64{3, 3000}, []int64{1}, unitDomain, exact()),
		red("rows", hlo.BF16, hlo.OpMinimum, []int64{3000, 2}, []int64{0}, unitDomain, exact()),
		red("rows", hlo.S8, hlo.OpAdd, []int64{2, 4000}, []int64{1}, unitDomain, exact()),
		red("rows", hlo.U64, hlo.OpAdd, []int64{2, 4000}, []int64{1}, unitDomain, exact()),
		red("rows", hlo.F64, hlo.OpAdd, []int64{2, 4000}, []int64{1}, unitDomain, vkxla.ErrorSpec{Abs: 1e-9, Rel: 1e-9}),
		red("all", hlo.Pred, hlo.OpOr, []int64{5000}, []int64{0}, domain{0, 0}, exact()),
	}
	// argmax as a variadic tree reduction.
	x := lit(rng, hlo.F32, domain{-4, 4}, 3, 5000)
	cases = append(cases, diffCase{name: "argmax", inputs: []*hlo.Literal{x}, spec: exact(),
		build: func(b *hlo.Builder) *hlo.Instruction {
			p := b.Parameter(x.Shape(), "x")
			iota := b.Iota(hlo.MakeShape(hlo.S32, 3, 5000), 1)
			rb := hlo.NewBuilder("argmax")
			av, ai := rb.Parameter(hlo.Scalar(hlo.F32), "av"), rb.Parameter(hlo.Scalar(hlo.S32), "ai")
			bv, bi := rb.Parameter(hlo.Scalar(hlo.F32), "bv"), rb.Parameter(hlo.Scalar(hlo.S32), "bi")
			pick := rb.Or(rb.Compare(av, bv, hlo.CmpGT), rb.And(rb.Compare(av, bv, hlo.CmpEQ), rb.Compare(ai, bi, hlo.CmpLT)))
			comp, err := rb.BuildComputation(rb.Tuple(rb.Select(pick, av, bv), rb.Select(pick, ai, bi)))
			require.NoError(t, err)
			return b.Reduce([]*hlo.Instruction{p, iota},
				[]*hlo.Instruction{b.ScalarConstant(hlo.F32, math.Inf(-1)), b.ScalarConstant(hlo.S32, 0)}, comp, []int64{1})
		}})
	runDiffCases(t, cases)
}

func TestCodegenDifferentialSort(t *testing.T) {
	rng := rnd(3)
	one := func(dt hlo.DType, dims []int64, dim int64, d domain) diffCase {
		return diffCase{name: fmt.Sprintf("%v%v/dim%d", dt, dims, dim), spec: exact(),
			inputs: []*hlo.Literal{lit(rng, dt, d, dims...)},
			build: func(b *hlo.Builder) *hlo.Instruction {
				x := b.Parameter(hlo.MakeShape(dt, dims...), "x")
				return b.Sort([]*hlo.Instruction{x}, b.Comparator(hlo.CmpLT, dt), dim, true)
			}}
	}
	keys := lit(rng, hlo.F32, domain{0, 3}, 4, 1000)
	for i := range keys.NumElements() {
		keys.SetFloat64(i, math.Floor(keys.Float64(i))) // many ties: stability matters
	}
	specials := hlo.MustFromSlice([]int64{9}, []float32{float32(math.NaN()), 1, float32(math.Inf(-1)), 0,
		float32(math.Copysign(0, -1)), float32(math.Inf(1)), -1, float32(-math.NaN()), 2})
	runDiffCases(t, []diffCase{
		one(hlo.F32, []int64{3, 1000}, 1, unitDomain),
		one(hlo.S32, []int64{1025}, 0, unitDomain),
		one(hlo.U8, []int64{70, 3}, 0, unitDomain),
		one(hlo.F16, []int64{2, 77}, 1, unitDomain),
		one(hlo.F64, []int64{513}, 0, unitDomain),
		{name: "stable-pairs", spec: exact(), inputs: []*hlo.Literal{keys},
			build: func(b *hlo.Builder) *hlo.Instruction {
				k := b.Parameter(keys.Shape(), "k")
				v := b.Iota(hlo.MakeShape(hlo.S32, 4, 1000), 1)
				return b.Sort([]*hlo.Instruction{k, v}, b.Comparator(hlo.CmpGT, hlo.F32, hlo.S32), 1, true)
			}},
		{name: "totalorder-specials", spec: exact(), inputs: []*hlo.Literal{specials},
			build: func(b *hlo.Builder) *hlo.Instruction {
				x := b.Parameter(specials.Shape(), "x")
				return b.Sort([]*hlo.Instruction{x}, b.Comparator(hlo.CmpLT, hlo.F32), 0, true)
			}},
	})
}

func TestCodegenDifferentialScatter(t *testing.T) {
	rng := rnd(4)
	rows := func(name string, dt hlo.DType, op hlo.Opcode, unique bool, idx []int32, spec vkxla.ErrorSpec) diffCase {
		ind := hlo.MustFromSlice([]int64{int64(len(idx))}, idx)
		x, u := lit(rng, dt, unitDomain, 10, 6), lit(rng, dt, unitDomain, int64(len(idx)), 6)
		return diffCase{name: fmt.Sprintf("%s/%v/%v", name, dt, op), spec: spec, inputs: []*hlo.Literal{x, ind, u},
			build: func(b *hlo.Builder) *hlo.Instruction {
				px, pi, pu := b.Parameter(x.Shape(), "x"), b.Parameter(ind.Shape(), "i"), b.Parameter(u.Shape(), "u")
				sd := hlo.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
					ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1, UniqueIndices: unique}
				return b.Scatter([]*hlo.Instruction{px}, pi, []*hlo.Instruction{pu}, b.Reducer(op, dt), sd)
			}}
	}
	dups := []int32{3, 0, 3, 9, -1, 10, 3, 5, 0}
	// Overwrite with duplicates: the last update in order wins (serial path).
	ov := func() diffCase {
		x, u := lit(rng, hlo.F32, unitDomain, 10, 6), lit(rng, hlo.F32, unitDomain, int64(len(dups)), 6)
		ind := hlo.MustFromSlice([]int64{int64(len(dups))}, dups)
		return diffCase{name: "overwrite-duplicates", spec: exact(), inputs: []*hlo.Literal{x, ind, u},
			build: func(b *hlo.Builder) *hlo.Instruction {
				rb := hlo.NewBuilder("overwrite")
				rb.Parameter(hlo.Scalar(hlo.F32), "cur")
				comp, err := rb.BuildComputation(rb.Parameter(hlo.Scalar(hlo.F32), "upd"))
				require.NoError(t, err)
				sd := hlo.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
					ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}
				return b.Scatter([]*hlo.Instruction{b.Parameter(x.Shape(), "x")}, b.Parameter(ind.Shape(), "i"),
					[]*hlo.Instruction{b.Parameter(u.Shape(), "u")}, comp, sd)
			}}
	}()
	// Overlapping windows (no inserted dims): the single-invocation serial path.
	overlap := func() diffCase {
		x, u := lit(rng, hlo.F32, unitDomain, 10), lit(rng, hlo.F32, unitDomain, 5, 3)
		ind := hlo.MustFromSlice([]int64{5, 1}, []int32{2, 3, 8, 2, 7})
		return diffCase{name: "overlapping-windows", spec: vkxla.Tolerance(hlo.OpScatter, hlo.F32), inputs: []*hlo.Literal{x, ind, u},
			build: func(b *hlo.Builder) *hlo.Instruction {
				sd := hlo.ScatterDims{UpdateWindowDims: []int64{1}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}
				return b.Scatter([]*hlo.Instruction{b.Parameter(x.Shape(), "x")}, b.Parameter(ind.Shape(), "i"),
					[]*hlo.Instruction{b.Parameter(u.Shape(), "u")}, b.Reducer(hlo.OpSubtract, hlo.F32), sd)
			}}
	}()
	runDiffCases(t, []diffCase{
		overlap,
		rows("serial-duplicates", hlo.F32, hlo.OpAdd, false, dups, vkxla.Tolerance(hlo.OpScatter, hlo.F32)),
		rows("atomic-duplicates", hlo.S32, hlo.OpAdd, false, dups, exact()),
		rows("atomic-duplicates", hlo.U32, hlo.OpMaximum, false, dups, exact()),
		rows("unique", hlo.F32, hlo.OpMultiply, true, []int32{7, 2, 11, 0}, vkxla.Tolerance(hlo.OpScatter, hlo.F32)),
		rows("serial", hlo.F16, hlo.OpMinimum, false, dups, exact()),
		ov,
	})
}

func TestCodegenDifferentialLarge(t *testing.T) {
	rng := rnd(5)
	const n = 8_500_000 // more than 65535 workgroups of 128: a 2-D grid
	x, y := lit(rng, hlo.F32, unitDomain, n), lit(rng, hlo.F32, unitDomain, n)
	runDiffCases(t, []diffCase{{name: "add-2d-grid", spec: vkxla.Tolerance(hlo.OpAdd, hlo.F32), inputs: []*hlo.Literal{x, y},
		build: func(b *hlo.Builder) *hlo.Instruction {
			return b.Add(b.Parameter(x.Shape(), "x"), b.Parameter(y.Shape(), "y"))
		}}})
}

// specialValues are the float inputs where SPIR-V's instructions are undefined or
// imprecise and the emitters pin cpuref's answers.
var specialValues = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1,
	0.5, -0.5, 2.5, -2.5, 1e-6, -1e-6, 1e-30, 3, 100, -100, 1e30, -1e30, 0.1, 7.75}

func specialLiteral(dt hlo.DType, vals []float64) *hlo.Literal {
	l := hlo.NewLiteral(hlo.MakeShape(dt, int64(len(vals))))
	for i, v := range vals {
		l.SetFloat64(i, v)
	}
	return l
}

func TestCodegenDifferentialSpecialValues(t *testing.T) {
	var cases []diffCase
	for _, dt := range []hlo.DType{hlo.F32, hlo.F64, hlo.F16, hlo.BF16} {
		for _, op := range hlo.AllOpcodes() {
			if op.Info().Kind != hlo.KindUnary || !op.Info().Types.Allows(dt) {
				continue
			}
			in := specialLiteral(dt, specialValues)
			spec := vkxla.Tolerance(op, dt)
			if dt == hlo.F64 && !spec.Exact() {
				spec = vkxla.ErrorSpec{Abs: 1e-12, Rel: 1e-12}
			}
			cases = append(cases, diffCase{name: fmt.Sprintf("%v/%v", op, dt), spec: spec, inputs: []*hlo.Literal{in},
				build: func(b *hlo.Builder) *hlo.Instruction { return b.Unary(op, b.Parameter(in.Shape(), "x")) }})
		}
		// Binary ops over the cross product of the special values.
		var xs, ys []float64
		for _, a := range specialValues {
			for _, c := range specialValues {
				xs, ys = append(xs, a), append(ys, c)
			}
		}
		for _, op := range []hlo.Opcode{hlo.OpPower, hlo.OpAtan2, hlo.OpRemainder, hlo.OpMaximum, hlo.OpMinimum, hlo.OpDivide} {
			x, y := specialLiteral(dt, xs), specialLiteral(dt, ys)
			spec := vkxla.Tolerance(op, dt)
			if dt == hlo.F64 && !spec.Exact() {
				spec = vkxla.ErrorSpec{Abs: 1e-12, Rel: 1e-12}
			}
			cases = append(cases, diffCase{name: fmt.Sprintf("%v/%v", op, dt), spec: spec, inputs: []*hlo.Literal{x, y},
				build: func(b *hlo.Builder) *hlo.Instruction {
					return b.Binary(op, b.Parameter(x.Shape(), "x"), b.Parameter(y.Shape(), "y"))
				}})
		}
		for _, to := range hlo.AllDTypes {
			in := specialLiteral(dt, append(specialValues, 65519, 65520, 3e9, -3e9, 255.9, 1e19, -129, 1.00048828125, 1.0009765625))
			cases = append(cases, diffCase{name: fmt.Sprintf("convert/%v_to_%v", dt, to), spec: exact(), inputs: []*hlo.Literal{in},
				build: func(b *hlo.Builder) *hlo.Instruction { return b.Convert(b.Parameter(in.Shape(), "x"), to) }})
		}
	}
	// fmod with huge quotients is exact in cpuref and must be here too.
	big := specialLiteral(hlo.F32, []float64{1e10, -1e10, 3.4e38, 1e-30, 7, 123456789})
	div := specialLiteral(hlo.F32, []float64{3, 0.1, 1.1, 1e-35, 1e-30, 0.001})
	cases = append(cases, diffCase{name: "remainder-huge-quotients", spec: exact(), inputs: []*hlo.Literal{big, div},
		build: func(b *hlo.Builder) *hlo.Instruction {
			return b.Rem(b.Parameter(big.Shape(), "x"), b.Parameter(div.Shape(), "y"))
		}})
	runDiffCases(t, cases)
}

func TestCodegenDifferentialWindows(t *testing.T) {
	rng := rnd(6)
	x := lit(rng, hlo.F32, unitDomain, 2, 9, 8)
	src := lit(rng, hlo.F32, unitDomain, 2, 5, 4)
	w := hlo.MakeWindow([]int64{1, 3, 2}, []int64{1, 2, 2})
	w[1].PadLow, w[1].PadHigh = 1, 1
	rw := hlo.MakeWindow([]int64{1, 3, 3}, []int64{1, 2, 1})
	rw[1].PadLow, rw[2].BaseDilation, rw[2].WindowDilation, rw[2].PadHigh = 2, 2, 2, 1
	runDiffCases(t, []diffCase{
		{name: "select-and-scatter-padded", spec: vkxla.Tolerance(hlo.OpSelectAndScatter, hlo.F32), inputs: []*hlo.Literal{x, src},
			build: func(b *hlo.Builder) *hlo.Instruction {
				sel := b.Comparator(hlo.CmpGE, hlo.F32)
				return b.SelectAndScatter(b.Parameter(x.Shape(), "x"), b.Parameter(src.Shape(), "s"),
					b.ScalarConstant(hlo.F32, 0), sel, b.Reducer(hlo.OpAdd, hlo.F32), w)
			}},
		{name: "reduce-window-dilated", spec: vkxla.Tolerance(hlo.OpReduceWindow, hlo.F32), inputs: []*hlo.Literal{x},
			build: func(b *hlo.Builder) *hlo.Instruction {
				return b.ReduceWindow([]*hlo.Instruction{b.Parameter(x.Shape(), "x")},
					[]*hlo.Instruction{b.ScalarConstant(hlo.F32, 0.5)}, b.Reducer(hlo.OpAdd, hlo.F32), rw)
			}},
	})
}

func TestCodegenDifferentialConvolutionGroups(t *testing.T) {
	rng := rnd(7)
	spec := vkxla.Tolerance(hlo.OpConvolution, hlo.F32)
	in, k := lit(rng, hlo.F32, unitDomain, 4, 2, 6, 5), lit(rng, hlo.F32, unitDomain, 6, 2, 2, 2)
	in2, k2 := lit(rng, hlo.F32, unitDomain, 2, 6, 7, 7), lit(rng, hlo.F32, unitDomain, 6, 2, 3, 3)
	runDiffCases(t, []diffCase{
		{name: "batch-groups", spec: spec, inputs: []*hlo.Literal{in, k},
			build: func(b *hlo.Builder) *hlo.Instruction {
				return b.Conv(b.Parameter(in.Shape(), "x"), b.Parameter(k.Shape(), "k"),
					hlo.MakeWindow([]int64{2, 2}, nil), hlo.DefaultConvDims(2), 1, 2)
			}},
		{name: "feature-groups-reversed", spec: spec, inputs: []*hlo.Literal{in2, k2},
			build: func(b *hlo.Builder) *hlo.Instruction {
				w := hlo.MakeWindow([]int64{3, 3}, []int64{2, 1})
				w[0].BaseDilation, w[1].WindowReversal, w[1].PadLow = 2, true, 2
				return b.Conv(b.Parameter(in2.Shape(), "x"), b.Parameter(k2.Shape(), "k"), w, hlo.DefaultConvDims(2), 3, 1)
			}},
	})
}

// Kernels whose output's minor dimension is a multiple of 4 compute four elements
// per invocation with vec4 loads and stores of 32-bit data; mixed types, reshapes,
// transposes and padding exercise the lanes that fall back to scalar accesses.
func TestCodegenDifferentialVec4(t *testing.T) {
	rng := rnd(8)
	var cases []diffCase
	for _, dt := range []hlo.DType{hlo.F32, hlo.S32, hlo.U32, hlo.F16, hlo.BF16, hlo.S8, hlo.U16, hlo.F64, hlo.S64} {
		x, y := lit(rng, dt, unitDomain, 3, 8), lit(rng, dt, unitDomain, 3, 8)
		cases = append(cases, diffCase{name: fmt.Sprintf("add/%v", dt), spec: vkxla.Tolerance(hlo.OpAdd, dt), inputs: []*hlo.Literal{x, y},
			build: func(b *hlo.Builder) *hlo.Instruction {
				return b.Add(b.Parameter(x.Shape(), "x"), b.Parameter(y.Shape(), "y"))
			}})
	}
	a, c := lit(rng, hlo.F32, unitDomain, 6, 4), lit(rng, hlo.F32, unitDomain, 4, 6)
	cases = append(cases,
		diffCase{name: "transpose-mix", spec: vkxla.Tolerance(hlo.OpAdd, hlo.F32), inputs: []*hlo.Literal{a, c},
			build: func(b *hlo.Builder) *hlo.Instruction {
				return b.Add(b.Parameter(a.Shape(), "a"), b.Transpose(b.Parameter(c.Shape(), "c"), 1, 0))
			}},
		diffCase{name: "reshape-pad-compare", spec: exact(), inputs: []*hlo.Literal{a, c},
			build: func(b *hlo.Builder) *hlo.Instruction {
				r := b.Reshape(b.Parameter(a.Shape(), "a"), 4, 6)
				p := b.Pad(b.Parameter(c.Shape(), "c"), b.ScalarConstant(hlo.F32, 0.25), []hlo.PadDim{{Low: 1, High: -1}, {Low: 1, High: 1}})
				return b.Compare(b.Slice(p, []int64{0, 0}, []int64{4, 8}, nil), b.Pad(r, b.ScalarConstant(hlo.F32, 0), []hlo.PadDim{{}, {Low: 2}}), hlo.CmpLT)
			}},
		diffCase{name: "convert-to-f32", spec: exact(), inputs: []*hlo.Literal{lit(rng, hlo.S8, unitDomain, 5, 12)},
			build: func(b *hlo.Builder) *hlo.Instruction {
				return b.Convert(b.Parameter(hlo.MakeShape(hlo.S8, 5, 12), "x"), hlo.F32)
			}},
	)
	runDiffCases(t, cases)
}

// runProgram lowers a kernel computation for the runtime's device and runs its
// dispatches directly (as a fusion pass's kernels will run), returning the outputs.
func runProgram(t *testing.T, rt *vkxla.Runtime, c *hlo.Computation, inputs []*hlo.Literal) []*hlo.Literal {
	t.Helper()
	return runProgramFor(t, rt, c, inputs, vkxla.TargetFromCaps(rt.Device().Caps()))
}

// runProgramFor is runProgram with the code generated for target (the device's
// facts with smaller limits, say, to run a real device's strategies here).
func runProgramFor(t *testing.T, rt *vkxla.Runtime, c *hlo.Computation, inputs []*hlo.Literal, target codegen.Target) []*hlo.Literal {
	t.Helper()
	d := rt.Device()
	prog, err := codegen.Lower(c, target)
	require.NoError(t, err)
	newBuf := func(size int64, data []byte) *device.Buffer {
		b, err := d.NewBuffer(max(size, 16))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, b.Close()) })
		if len(data) > 0 {
			require.NoError(t, b.Write(0, data))
		}
		return b
	}
	args := map[codegen.ArgKind][]*device.Buffer{}
	for _, in := range inputs {
		args[codegen.ArgInput] = append(args[codegen.ArgInput], newBuf(in.Shape().ByteSize(), in.Bytes()))
	}
	for _, s := range prog.Outputs {
		args[codegen.ArgOutput] = append(args[codegen.ArgOutput], newBuf(s.ByteSize(), nil))
	}
	for _, size := range prog.Scratch {
		args[codegen.ArgScratch] = append(args[codegen.ArgScratch], newBuf(size, nil))
	}
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cb.Close()) })
	require.NoError(t, cb.Begin())
	kernels := map[*codegen.Kernel]*device.Kernel{}
	for _, pd := range prog.Dispatches {
		k := kernels[pd.Kernel]
		if k == nil {
			k, err = d.NewKernel(pd.Kernel.SPIRV, vkxla.KernelSpec(pd.Kernel))
			require.NoError(t, err, pd.Kernel.Name)
			t.Cleanup(func() { require.NoError(t, k.Close()) })
			kernels[pd.Kernel] = k
		}
		var as []device.BufferRange
		for _, a := range pd.Args {
			as = append(as, device.BufferRange{Buffer: args[a.Kind][a.Index]})
		}
		bs, err := vkxla.KernelBindings(pd.Kernel, as)
		require.NoError(t, err, pd.Kernel.Name)
		require.NoError(t, cb.Dispatch(k, bs, pd.Push, pd.Groups[0], pd.Groups[1], pd.Groups[2]))
		require.NoError(t, cb.Barrier())
	}
	require.NoError(t, cb.End())
	require.NoError(t, d.Submit(context.Background(), cb))
	outs := make([]*hlo.Literal, len(prog.Outputs))
	for i, s := range prog.Outputs {
		data := make([]byte, s.ByteSize())
		if len(data) > 0 {
			require.NoError(t, args[codegen.ArgOutput][i].Read(0, data))
		}
		outs[i], err = hlo.LiteralFromBytes(s, data)
		require.NoError(t, err)
	}
	return outs
}

// Fused kernel computations (several ops lowered as one kernel) against cpuref: the
// elemental emitter's reason to exist, exercised before a fusion pass produces them.
func TestCodegenDifferentialFused(t *testing.T) {
	rt := newRuntime(t)
	rng := rnd(9)
	cases := []struct {
		name   string
		build  func(b *hlo.Builder) *hlo.Instruction
		inputs []*hlo.Literal
		spec   vkxla.ErrorSpec
	}{
		{"softmax", func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(hlo.MakeShape(hlo.F32, 8, 100), "x")
			m := b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, math.Inf(-1))}, b.Reducer(hlo.OpMaximum, hlo.F32), []int64{1})
			e := b.Exp(b.Sub(x, b.Broadcast(m, []int64{8, 100}, []int64{0})))
			s := b.Reduce([]*hlo.Instruction{e}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)}, b.Reducer(hlo.OpAdd, hlo.F32), []int64{1})
			return b.Div(e, b.Broadcast(s, []int64{8, 100}, []int64{0}))
		}, []*hlo.Literal{lit(rng, hlo.F32, domain{-5, 5}, 8, 100)}, vkxla.ErrorSpec{Abs: 1e-5, Rel: 1e-4}},
		// sin inside a fused reduction's loop takes its exact path in a branch.
		{"sin-of-huge-inside-reduction", func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(hlo.MakeShape(hlo.F32, 4, 300), "x")
			s := b.Reduce([]*hlo.Instruction{b.Sin(x)}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)}, b.Reducer(hlo.OpAdd, hlo.F32), []int64{1})
			return b.Negate(s)
		}, []*hlo.Literal{lit(rng, hlo.F32, domain{1e6, 1e30}, 4, 300)}, vkxla.ErrorSpec{Abs: 1e-4, Rel: 1e-4}},
		{"inline-constants-multi-output", func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(hlo.MakeShape(hlo.F32, 3, 7), "x")
			c := b.Constant(hlo.MustFromSlice([]int64{7}, []float32{1, -2, 3.5, 0, float32(math.Inf(1)), -0.25, 9}))
			y := b.Mul(x, b.Broadcast(c, []int64{3, 7}, []int64{1}))
			io := b.Convert(b.Iota(hlo.MakeShape(hlo.S32, 3, 7), 0), hlo.F32)
			return b.Tuple(b.Add(y, io), b.Compare(y, io, hlo.CmpGT), b.Convert(y, hlo.F16))
		}, []*hlo.Literal{lit(rng, hlo.F32, unitDomain, 3, 7)}, vkxla.ErrorSpec{Abs: 1e-6, Rel: 1e-6}},
		{"tree-reduce-of-fused-input", func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(hlo.MakeShape(hlo.F32, 4, 5000), "x")
			return b.Reduce([]*hlo.Instruction{b.Exp(x)}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 1)}, b.Reducer(hlo.OpAdd, hlo.F32), []int64{1})
		}, []*hlo.Literal{lit(rng, hlo.F32, unitDomain, 4, 5000)}, vkxla.ErrorSpec{Abs: 1e-3, Rel: 1e-4}},
		{"two-pass-reduce-of-fused-input", func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(hlo.MakeShape(hlo.F16, 1<<17), "x")
			return b.Reduce([]*hlo.Instruction{b.Convert(x, hlo.F32)}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)}, b.Reducer(hlo.OpAdd, hlo.F32), []int64{0})
		}, []*hlo.Literal{lit(rng, hlo.F16, unitDomain, 1<<17)}, vkxla.ErrorSpec{Abs: 1e-2, Rel: 1e-4}},
		{"gemm-of-fused-operands", func(b *hlo.Builder) *hlo.Instruction {
			a := b.Transpose(b.Parameter(hlo.MakeShape(hlo.F32, 40, 70), "a"), 1, 0)
			w := b.Convert(b.Parameter(hlo.MakeShape(hlo.F16, 40, 36), "w"), hlo.F32)
			return b.Dot(a, w)
		}, []*hlo.Literal{lit(rng, hlo.F32, unitDomain, 40, 70), lit(rng, hlo.F16, unitDomain, 40, 36)}, vkxla.Tolerance(hlo.OpDot, hlo.F32)},
		{"scatter-of-fused-updates", func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(hlo.MakeShape(hlo.F32, 6, 4), "x")
			i := b.Parameter(hlo.MakeShape(hlo.S32, 5), "i")
			u := b.Mul(b.Parameter(hlo.MakeShape(hlo.F32, 5, 4), "u"), b.BroadcastScalar(b.ScalarConstant(hlo.F32, 2), 5, 4))
			sd := hlo.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}
			return b.Scatter([]*hlo.Instruction{b.Negate(x)}, i, []*hlo.Instruction{u}, b.Reducer(hlo.OpAdd, hlo.F32), sd)
		}, []*hlo.Literal{lit(rng, hlo.F32, unitDomain, 6, 4), hlo.MustFromSlice([]int64{5}, []int32{1, 5, 1, 0, 1}),
			lit(rng, hlo.F32, unitDomain, 5, 4)}, vkxla.ErrorSpec{Abs: 1e-6, Rel: 1e-6}},
		{"sort-of-fused-operand", func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(hlo.MakeShape(hlo.S32, 3, 50), "x")
			return b.Sort([]*hlo.Instruction{b.Negate(x), b.Iota(hlo.MakeShape(hlo.S32, 3, 50), 1)}, b.Comparator(hlo.CmpLT, hlo.S32, hlo.S32), 1, true)
		}, []*hlo.Literal{lit(rng, hlo.S32, domain{-5, 5}, 3, 50)}, exact()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := hlo.NewBuilder(sanitize(c.name))
			comp, err := b.BuildComputation(c.build(b))
			require.NoError(t, err)
			want, err := cpuref.EvalComputation(comp, c.inputs...)
			require.NoError(t, err)
			got := runProgram(t, rt, comp, c.inputs)
			leaves := want.Leaves()
			require.Len(t, got, len(leaves))
			for i := range got {
				require.NoError(t, c.spec.Check(got[i], leaves[i]), "output %d", i)
			}
		})
	}
}
