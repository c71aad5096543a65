package autodiff

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// opsFDCases differentiate map, topk, triangular-solve and cholesky through their
// decompositions (the inlined body; sort and slices; the while loops of
// substitution and factorisation). The matrices are made well conditioned inside
// the program: a triangular matrix gains 4 on its diagonal, and cholesky factors
// x·xᵀ + 3·I.
func opsFDCases(t *testing.T) []fdCase {
	f := f64s
	eye := func(b *hlo.Builder, n int64, v float64, dims ...int64) *hlo.Instruction {
		s := hlo.MakeShape(hlo.S32, append(dims, n, n)...)
		r := len(dims)
		on := b.Compare(b.Iota(s, int64(r)), b.Iota(s, int64(r+1)), hlo.CmpEQ)
		full := func(x float64) *hlo.Instruction { return b.BroadcastScalar(b.ScalarConstant(hlo.F64, x), s.Dims...) }
		return b.Select(on, full(v), full(0))
	}
	var cases []fdCase
	cases = append(cases, fdCase{name: "map sin(x)·y", params: []hlo.Shape{f(2, 3), f(2, 3)},
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			fb := hlo.NewBuilder("sin_times")
			x, y := fb.Parameter(hlo.Scalar(hlo.F64), "x"), fb.Parameter(hlo.Scalar(hlo.F64), "y")
			fn, err := fb.BuildComputation(fb.Mul(fb.Sin(x), y))
			if err != nil {
				t.Fatal(err)
			}
			return b.Map(fn, ps[0], ps[1])
		}})
	cases = append(cases, fdCase{name: "topk smallest", params: []hlo.Shape{f(3, 5)},
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.GetTupleElement(b.TopK(ps[0], 2, false), 0)
		}})
	for _, o := range []struct {
		left, lower, unit bool
		t                 hlo.TransposeKind
	}{{true, true, false, hlo.NoTranspose}, {false, false, true, hlo.TransposeA}, {true, false, false, hlo.Adjoint}} {
		cases = append(cases, fdCase{name: "triangular-solve", params: []hlo.Shape{f(2, 3, 3), f(2, 3, 3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				a := b.Add(ps[0], eye(b, 3, 4, 2))
				return b.TriangularSolve(a, ps[1], o.left, o.lower, o.unit, o.t)
			}})
	}
	for _, lower := range []bool{true, false} {
		cases = append(cases, fdCase{name: "cholesky", params: []hlo.Shape{f(2, 3, 3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				x := ps[0]
				spd := b.DotGeneral(x, x, hlo.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0},
					LhsContracting: []int64{2}, RhsContracting: []int64{2}})
				return b.Cholesky(b.Add(spd, eye(b, 3, 3, 2)), lower)
			}})
	}
	return append(cases, bitcastFDCase())
}

// bitcastFDCase: a column-major matrix read row-major is its transpose.
func bitcastFDCase() fdCase {
	return fdCase{name: "bitcast (layouts)", params: []hlo.Shape{f64s(2, 3)},
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Sin(b.Bitcast(ps[0], hlo.MakeShape(hlo.F64, 3, 2), []int64{0, 1}, nil))
		}}
}
