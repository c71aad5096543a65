package gomlx_test

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX's style
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/vkxla/vkxla/cpuref"
	vkgomlx "github.com/vkxla/vkxla/gomlx"
)

// opCases are small GoMLX graphs, one or a few builder ops each, with inputs of
// their own (constants and iotas): each runs on vkxla and on simplego, GoMLX's
// reference backend, and the results must agree (floats within 1e-5 relative,
// the rest exactly).
var opCases = []struct {
	name string
	fn   func(g *Graph) *Node
}{
	{"unary", func(g *Graph) *Node {
		// No ties for Round: simplego rounds them away from zero, GoMLX's Round
		// (and XLA) to even (handCases has the ties).
		x := Const(g, []float32{-2.4, -0.6, 0, 0.3, 1.7, 2.6})
		return Stack([]*Node{Abs(x), Neg(x), Sign(x), Exp(x), Expm1(x), Log1p(Abs(x)), Sqrt(Abs(x)),
			Tanh(x), Logistic(x), Sin(x), Cos(x), Erf(x), Floor(x), Ceil(x), Round(x)}, 0)
	}},
	{"log-rsqrt", func(g *Graph) *Node {
		x := Const(g, []float64{0.25, 1, 4, 9})
		return Concatenate([]*Node{Log(x), Rsqrt(x)}, 0)
	}},
	{"binary-broadcast", func(g *Graph) *Node {
		x := Const(g, [][]float32{{1, 2, 3}, {4, 5, 6}})
		y := Const(g, [][]float32{{2}, {-3}})
		return Stack([]*Node{Add(x, y), Sub(x, y), Mul(x, y), Div(x, y), Max(x, y), Min(x, y), Pow(x, Abs(y))}, 0)
	}},
	{"integers", func(g *Graph) *Node {
		x := Const(g, []int32{-7, -1, 0, 5, 12})
		y := Const(g, []int32{3, 2, 1, 3, 5})
		return Stack([]*Node{Div(x, y), Mod(x, y), BitwiseAnd(x, y), BitwiseOr(x, y), BitwiseXor(x, y),
			BitwiseNot(x), BitCount(x), Clz(x)}, 0)
	}},
	{"compare-where", func(g *Graph) *Node {
		x := Const(g, []float32{1, 2, float32(math.NaN()), 4})
		y := Const(g, []float32{2, 2, 1, float32(math.Inf(-1))})
		c := Stack([]*Node{Equal(x, y), NotEqual(x, y), LessThan(x, y), GreaterOrEqual(x, y), IsNaN(x), IsFinite(y),
			LogicalAnd(LessThan(x, y), IsFinite(y)), LogicalNot(Equal(x, y))}, 0)
		return Where(c, ScalarOne(g, dtypes.Float32), ScalarZero(g, dtypes.Float32))
	}},
	{"convert-bitcast", func(g *Graph) *Node {
		x := Const(g, []float32{-1.5, 0.25, 3.75, 1e6})
		return Concatenate([]*Node{ConvertDType(ConvertDType(x, dtypes.Int32), dtypes.Float32),
			ConvertDType(ConvertDType(x, dtypes.BFloat16), dtypes.Float32)}, 0)
	}},
	{"reductions", func(g *Graph) *Node {
		x := Add(Iota(g, shapes.Make(dtypes.Float32, 3, 4), 1), Iota(g, shapes.Make(dtypes.Float32, 3, 4), 0))
		return Concatenate([]*Node{ReduceSum(x, 1), ReduceMax(x, 0), ReduceMin(x, 1), ReduceMultiply(x, 0),
			ExpandAxes(ReduceAllSum(x), 0)}, 0)
	}},
	{"int-reductions", func(g *Graph) *Node {
		x := Const(g, [][]int32{{6, 3, -1}, {12, 10, 7}})
		b := Const(g, [][]bool{{true, false, true}, {true, true, true}})
		return Concatenate([]*Node{ReduceBitwiseAnd(x, 1), ReduceBitwiseOr(x, 1), ReduceBitwiseXor(x, 0), ReduceMax(x, 1),
			ConvertDType(ReduceLogicalAnd(b, 1), dtypes.Int32), ConvertDType(ReduceLogicalOr(b, 0), dtypes.Int32)}, 0)
	}},
	{"argminmax", func(g *Graph) *Node {
		x := Const(g, [][]float32{{3, 1, 4, 1, 5}, {9, 2, 6, 5, 9}, {2, float32(math.NaN()), 1, 0, 7}})
		return Concatenate([]*Node{ArgMax(x, 1, dtypes.Int32), ArgMin(x, 1, dtypes.Int32), ArgMax(x, 0, dtypes.Int32)}, 0)
	}},
	{"movement", func(g *Graph) *Node {
		x := Iota(g, shapes.Make(dtypes.Float32, 2, 3, 4), 2)
		x = Add(x, MulScalar(Iota(g, shapes.Make(dtypes.Float32, 2, 3, 4), 0), 10))
		t := Transpose(x, 0, 2)
		return Reshape(Slice(Reshape(t, 4, 6), AxisRange(1, 4), AxisRange(0, 6).Stride(2)), -1)
	}},
	{"broadcast-in-dim", func(g *Graph) *Node {
		x := Const(g, [][]float32{{1}, {2}})
		return Add(BroadcastToDims(x, 2, 3), BroadcastToDims(Const(g, float32(0.5)), 2, 3))
	}},
	{"dot-general", func(g *Graph) *Node {
		a := Div(Iota(g, shapes.Make(dtypes.Float32, 2, 3, 4), 2), Const(g, float32(3)))
		b := Sub(Iota(g, shapes.Make(dtypes.Float32, 2, 4, 5), 1), Const(g, float32(1)))
		return Reshape(Concatenate([]*Node{Reshape(Einsum("bij,bjk->bik", a, b), -1),
			Reshape(Dot(Reshape(a, 6, 4), Transpose(Reshape(a, 6, 4), 0, 1)), -1)}, 0), -1)
	}},
	{"gather-scatter", func(g *Graph) *Node {
		x := Add(Iota(g, shapes.Make(dtypes.Float32, 5, 3), 0), Iota(g, shapes.Make(dtypes.Float32, 5, 3), 1))
		idx := Const(g, [][]int32{{4}, {0}, {2}, {0}})
		gathered := Gather(x, idx)
		sum := ScatterSum(ZerosLike(x), idx, OnesLike(gathered), false, false)
		mx := ScatterMax(ZerosLike(x), idx, gathered, false, false)
		return Concatenate([]*Node{Reshape(gathered, -1), Reshape(sum, -1), Reshape(mx, -1)}, 0)
	}},
	{"pools", func(g *Graph) *Node {
		x := Reshape(Sin(Iota(g, shapes.Make(dtypes.Float32, 1*6*6*2), 0)), 1, 6, 6, 2)
		mp := MaxPool(x).Window(2).Done()
		ap := MeanPool(x).Window(3).Strides(1).Done()
		return Concatenate([]*Node{Reshape(mp, -1), Reshape(ap, -1)}, 0)
	}},
	{"convolution", func(g *Graph) *Node {
		x := Reshape(Sin(Iota(g, shapes.Make(dtypes.Float32, 2*5*5*3), 0)), 2, 5, 5, 3)
		k := Reshape(Cos(Iota(g, shapes.Make(dtypes.Float32, 3*3*3*4), 0)), 3, 3, 3, 4)
		return Reshape(Convolve(x, k).Strides(2).PadSame().Done(), -1)
	}},
	{"softmax-gradient", func(g *Graph) *Node {
		x := Const(g, [][]float32{{1, 2, 3}, {-1, 0, 5}})
		loss := ReduceAllSum(Mul(Softmax(x), Const(g, [][]float32{{1, 0, 0}, {0, 1, 0}})))
		return Concatenate([]*Node{Reshape(LogSoftmax(x), -1), Reshape(Gradient(loss, x)[0], -1)}, 0)
	}},
	{"cumsum", func(g *Graph) *Node {
		return CumSum(Iota(g, shapes.Make(dtypes.Float32, 3, 4), 1), 1)
	}},
}

// handCases use ops simplego lacks (or rounds otherwise): their values are
// worked out by hand from the ops' definitions.
var handCases = []struct {
	name string
	fn   func(g *Graph) *Node
	want []float64
}{
	{"round-half-to-even", func(g *Graph) *Node {
		return Round(Const(g, []float32{-2.5, -0.5, 0.5, 1.5, 2.5, 3.5}))
	}, []float64{-2, 0, 0, 2, 2, 4}},
	{"erf-infinities", func(g *Graph) *Node { // erf(±Inf) = ±1: a normal CDF of zero spread (kan's tests)
		return Erf(Const(g, []float32{float32(math.Inf(1)), float32(math.Inf(-1)), 10, -10}))
	}, []float64{1, -1, 1, -1}},
	{"shifts", func(g *Graph) *Node {
		x, n := Const(g, []int32{-8, 1, 5}), Const(g, []int32{1, 3, 2})
		return Concatenate([]*Node{BitwiseShiftLeft(x, n), BitwiseShiftRightArithmetic(x, n), BitwiseShiftRightLogical(x, n)}, 0)
	}, []float64{-16, 8, 20, -4, 0, 1, 0x7FFFFFFC, 0, 1}},
	{"total-order", func(g *Graph) *Node {
		negZero, nan := float32(math.Copysign(0, -1)), float32(math.NaN())
		x, y := Const(g, []float32{negZero, 0, nan, 1}), Const(g, []float32{0, negZero, 1, nan})
		return ConvertDType(Concatenate([]*Node{EqualTotalOrder(x, y), LessThanTotalOrder(x, y), GreaterThanTotalOrder(x, y)}, 0), dtypes.Int32)
	}, []float64{0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0}},
	{"bitcast", func(g *Graph) *Node {
		bits := Bitcast(Const(g, []float32{1, -2}), dtypes.Int32)
		return Concatenate([]*Node{bits, ConvertDType(Bitcast(bits, dtypes.Float32), dtypes.Int32)}, 0)
	}, []float64{1065353216, -1073741824, 1, -2}},
	{"float16", func(g *Graph) *Node { // simplego has no f32↔f16 conversion
		return ConvertDType(ConvertDType(Const(g, []float32{-1.5, 0.25, 3.75, 1e6}), dtypes.Float16), dtypes.Float32)
	}, []float64{-1.5, 0.25, 3.75, math.Inf(1)}},
	{"pad", func(g *Graph) *Node {
		x := Const(g, [][]float32{{1, 2}, {3, 4}})
		return Reshape(Pad(x, ScalarZero(g, dtypes.Float32), backends.PadAxis{Start: 1, Interior: 1}, backends.PadAxis{End: 1}), -1)
	}, []float64{0, 0, 0, 1, 2, 0, 0, 0, 0, 3, 4, 0}},
	{"reverse", func(g *Graph) *Node {
		x := Const(g, [][]float32{{1, 2, 3}, {4, 5, 6}})
		return Concatenate([]*Node{Reshape(Reverse(x, 1), -1), Reshape(Reverse(x, 0, 1), -1)}, 0)
	}, []float64{3, 2, 1, 6, 5, 4, 6, 5, 4, 3, 2, 1}},
	{"dynamic-slices", func(g *Graph) *Node {
		x := Iota(g, shapes.Make(dtypes.Float32, 4, 5), 1)
		i, j := Const(g, int32(1)), Const(g, int32(3))
		s := DynamicSlice(x, []*Node{i, j}, []int{2, 3})       // column start clamped to 2
		u := DynamicUpdateSlice(x, OnesLike(s), []*Node{j, i}) // row start clamped to 2
		return Concatenate([]*Node{Reshape(s, -1), Reshape(u, -1)}, 0)
	}, []float64{2, 3, 4, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 1, 1, 4, 0, 1, 1, 1, 4}},
	{"maxpool-gradient", func(g *Graph) *Node {
		x := Const(g, [][][][]float32{{{{1}, {5}, {2}, {0}}, {{3}, {4}, {8}, {1}}, {{0}, {2}, {1}, {1}}, {{9}, {1}, {1}, {7}}}})
		loss := ReduceAllSum(MulScalar(MaxPool(x).Window(2).Done(), 3))
		return Reshape(Gradient(loss, x)[0], -1)
	}, []float64{0, 3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 3, 0, 0, 3}},
}

// TestOpsByHand checks handCases on vkxla.
func TestOpsByHand(t *testing.T) {
	vk := openVK(t)
	for _, c := range handCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := runGraph(vk, c.fn)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%v, want %v", got, c.want)
			}
			for i := range got {
				if !close(got[i], c.want[i]) {
					t.Fatalf("%v, want %v", got, c.want)
				}
			}
		})
	}
}

// TestGradientsMatchCPURef runs GoMLX-built gradient graphs (whose HLO uses
// reverse, pad, select-and-scatter and convolutions with dilations) on the device
// and on vkxla's reference interpreter, cpuref, for the module the backend built.
func TestGradientsMatchCPURef(t *testing.T) {
	vk := openVK(t)
	fn := func(g *Graph) *Node {
		x := Reshape(Sin(Iota(g, shapes.Make(dtypes.Float32, 2*5*5*3), 0)), 2, 5, 5, 3)
		k := Reshape(Cos(Iota(g, shapes.Make(dtypes.Float32, 3*3*3*4), 0)), 3, 3, 3, 4)
		y := Convolve(x, k).Strides(2).PadSame().Done()
		grads := Gradient(ReduceAllSum(Mul(y, y)), x, k)
		return Concatenate([]*Node{Reshape(grads[0], -1), Reshape(grads[1], -1)}, 0)
	}
	got, err := runGraph(vk, fn)
	if err != nil {
		t.Fatal(err)
	}
	lit, err := cpuref.Eval(vk.LastCompiled().Module())
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, lit.NumElements())
	for i := range want {
		want[i] = lit.Float64(i)
	}
	if len(got) != len(want) {
		t.Fatalf("%d values, cpuref %d", len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-4*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("value %d: %v on the device, %v on cpuref", i, got[i], want[i])
		}
	}
}

// openVK opens the backend with validation on and constant folding off: the
// cases' inputs are constants, and folding would evaluate them on cpuref
// instead of the device.
func openVK(t *testing.T) *vkgomlx.Backend {
	t.Helper()
	v := true
	vk, err := vkgomlx.NewWithConfig(vkgomlx.Config{Validation: &v, Without: []string{"constant-folding"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := vk.Close(); err != nil {
			t.Error(err)
		}
	})
	return vk
}

func TestOpsAgreeWithSimplego(t *testing.T) {
	vk := openVK(t)
	sg, err := simplego.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Finalize()
	for _, c := range opCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := runGraph(vk, c.fn)
			if err != nil {
				t.Fatalf("vkxla: %v", err)
			}
			want, err := runGraph(sg, c.fn)
			if err != nil {
				t.Fatalf("simplego: %v", err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d values, want %d", len(got), len(want))
			}
			for i := range got {
				if !close(got[i], want[i]) {
					t.Errorf("value %d: %v on vkxla, %v on simplego (all: %v vs %v)", i, got[i], want[i], got, want)
					break
				}
			}
		})
	}
}

func close(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b || math.Abs(a-b) <= 1e-5*math.Max(1, math.Abs(b))
}

// runGraph runs fn on backend and returns its output's values, flattened, as
// float64.
func runGraph(backend backends.Backend, fn func(g *Graph) *Node) (vals []float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	e, err := NewExec(backend, fn)
	if err != nil {
		return nil, err
	}
	outs, err := e.Exec()
	if err != nil {
		return nil, err
	}
	return flatten(reflect.ValueOf(outs[0].Value())), nil
}

func flatten(v reflect.Value) []float64 {
	if v.Kind() == reflect.Slice {
		var out []float64
		for i := range v.Len() {
			out = append(out, flatten(v.Index(i))...)
		}
		return out
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return []float64{1}
		}
		return []float64{0}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return []float64{float64(v.Int())}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []float64{float64(v.Uint())}
	case reflect.Float32, reflect.Float64:
		return []float64{v.Float()}
	}
	panic(fmt.Sprintf("flatten: %v", v.Type()))
}
