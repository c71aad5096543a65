package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// tensor is a row-major f64 array: the tests' own reference arithmetic works on it.
type tensor struct {
	dims []int64
	v    []float64
}

func newTensor(dims ...int64) tensor {
	return tensor{dims: dims, v: make([]float64, hlo.MakeShape(hlo.F64, dims...).NumElements())}
}

func randomTensor(rng *rand.Rand, dims ...int64) tensor {
	t := newTensor(dims...)
	for i := range t.v {
		t.v[i] = rng.Float64()*2 - 1
	}
	return t
}

// index is the flat offset of a multi-index.
func (t tensor) index(idx ...int64) int64 {
	off := int64(0)
	for i, d := range t.dims {
		off = off*d + idx[i]
	}
	return off
}

func (t tensor) at(idx ...int64) float64             { return t.v[t.index(idx...)] }
func (t tensor) set(v float64, idx ...int64)         { t.v[t.index(idx...)] = v }
func (t tensor) literal() *hlo.Literal               { return hlo.MustFromSlice(t.dims, t.v) }
func (t tensor) shape() hlo.Shape                    { return hlo.MakeShape(hlo.F64, t.dims...) }
func (t tensor) param(b *hlo.Builder, name string) X { return b.Parameter(t.shape(), name) }

// evaluate builds root's module and runs it on cpuref with the inputs in
// parameter order, returning every output leaf as a tensor.
func evaluate(t *testing.T, b *hlo.Builder, root X, inputs ...input) []tensor {
	t.Helper()
	m, err := b.Build(root)
	if err != nil {
		t.Fatal(err)
	}
	lits := make([]*hlo.Literal, len(inputs))
	for i, in := range inputs {
		lits[i] = in.literal()
	}
	out, err := cpuref.Eval(m, lits...)
	if err != nil {
		t.Fatal(err)
	}
	var res []tensor
	for _, leaf := range out.Leaves() {
		r := tensor{dims: leaf.Shape().Dims, v: make([]float64, leaf.NumElements())}
		for i := range r.v {
			r.v[i] = leaf.Float64(i)
		}
		res = append(res, r)
	}
	return res
}

// input is a tensor or any other literal (an s32 position, …).
type input interface{ literal() *hlo.Literal }

type literalInput struct{ *hlo.Literal }

func (l literalInput) literal() *hlo.Literal { return l.Literal }

// assertClose compares got with the reference within tol (absolute + relative).
func assertClose(t *testing.T, what string, got, want tensor, tol float64) {
	t.Helper()
	if len(got.v) != len(want.v) {
		t.Fatalf("%s: %d values, want %d", what, len(got.v), len(want.v))
	}
	for i := range got.v {
		if d := math.Abs(got.v[i] - want.v[i]); !(d <= tol*(1+math.Abs(want.v[i]))) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got.v[i], want.v[i])
		}
	}
}

// matmulLast is x [..., in] · w [in, out] by the definition.
func matmulLast(x, w tensor) tensor {
	in, out := w.dims[0], w.dims[1]
	rows := int64(len(x.v)) / in
	dims := append(append([]int64{}, x.dims[:len(x.dims)-1]...), out)
	y := newTensor(dims...)
	for r := range rows {
		for o := range out {
			s := 0.0
			for k := range in {
				s += x.v[r*in+k] * w.v[k*out+o]
			}
			y.v[r*out+o] = s
		}
	}
	return y
}

// rowsOf applies f to each row of x's last dimension.
func rowsOf(x tensor, f func(row []float64) []float64) tensor {
	n := x.dims[len(x.dims)-1]
	y := newTensor(x.dims...)
	for r := int64(0); r < int64(len(x.v)); r += n {
		copy(y.v[r:r+n], f(x.v[r:r+n]))
	}
	return y
}

func softmaxRow(row []float64) []float64 {
	mx := math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, v)
	}
	out, sum := make([]float64, len(row)), 0.0
	for i, v := range row {
		out[i] = math.Exp(v - mx)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}
