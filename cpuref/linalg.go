package cpuref

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// triangular-solve and cholesky, per batch matrix, by their textbook definitions
// in float64, each result element rounded once to the element type.

// matrices walks the batch of [..., m, m] a: read(b, i, j) is a[b][i][j].
type matrices struct {
	lit  *hlo.Literal
	rows int64
	cols int64
}

func batchOf(l *hlo.Literal) matrices {
	s := l.Shape()
	return matrices{l, s.Dims[s.Rank()-2], s.Dims[s.Rank()-1]}
}

func (m matrices) count() int64 {
	if m.rows*m.cols == 0 {
		return 0
	}
	return int64(m.lit.NumElements()) / (m.rows * m.cols)
}

func (m matrices) at(b, i, j int64) int { return int((b*m.rows+i)*m.cols + j) }

func (m matrices) get(b, i, j int64) float64 { return m.lit.Float64(m.at(b, i, j)) }

// evalTriangularSolve solves op(a)·x = b (left_side) or x·op(a) = b. With t the
// effective matrix (op(a), transposed once more on the right side, where
// x·op(a) = b is op(a)ᵀ·xᵀ = bᵀ), each right-hand side is solved by forward
// substitution when t is lower triangular and backward otherwise.
func evalTriangularSolve(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	a, rhs := batchOf(ops[0]), batchOf(ops[1])
	at := in.Attrs
	transposed := (at.TransposeA != hlo.NoTranspose) != !at.LeftSide
	lower := at.Lower != transposed // t's nonzero triangle
	m := a.rows
	tget := func(b, i, j int64) float64 {
		if transposed {
			i, j = j, i
		}
		return a.get(b, i, j)
	}
	out := hlo.NewLiteral(ops[1].Shape())
	res := matrices{out, rhs.rows, rhs.cols}
	nrhs := rhs.cols
	if !at.LeftSide {
		nrhs = rhs.rows
	}
	// elem maps (equation i, right-hand side c) to rhs's and the result's index.
	elem := func(b, i, c int64) (int64, int64) {
		if at.LeftSide {
			return i, c
		}
		return c, i
	}
	x := make([]float64, m)
	for b := range a.count() {
		for c := range nrhs {
			for step := range m {
				i := step
				if !lower {
					i = m - 1 - step
				}
				r, col := elem(b, i, c)
				sum := rhs.get(b, r, col)
				for k := range m {
					if (lower && k < i) || (!lower && k > i) {
						sum -= tget(b, i, k) * x[k]
					}
				}
				if !at.UnitDiagonal {
					sum /= tget(b, i, i)
				}
				x[i] = sum
				out.SetFloat64(res.at(b, r, col), sum)
			}
		}
	}
	return out, nil
}

// evalCholesky computes l with a = l·lᵀ reading a's lower triangle (lower), or
// u = lᵀ reading the upper one, column by column; the other triangle is zero. A
// NaN on l's diagonal (a not positive definite) makes the whole matrix NaN.
func evalCholesky(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	a := batchOf(ops[0])
	n := a.rows
	lower := in.Attrs.Lower
	get := func(b, i, j int64) float64 { // a's read triangle, i >= j
		if !lower {
			i, j = j, i
		}
		return a.get(b, i, j)
	}
	out := hlo.NewLiteral(ops[0].Shape())
	l := make([]float64, n*n)
	for b := range a.count() {
		clear(l)
		nan := false
		for j := range n {
			d := get(b, j, j)
			for k := range j {
				d -= l[j*n+k] * l[j*n+k]
			}
			l[j*n+j] = math.Sqrt(d)
			nan = nan || math.IsNaN(l[j*n+j])
			for i := j + 1; i < n; i++ {
				v := get(b, i, j)
				for k := range j {
					v -= l[i*n+k] * l[j*n+k]
				}
				l[i*n+j] = v / l[j*n+j]
			}
		}
		for i := range n {
			for j := range n {
				v := l[i*n+j]
				if !lower {
					v = l[j*n+i]
				}
				if nan {
					v = math.NaN()
				}
				out.SetFloat64(a.at(b, i, j), v)
			}
		}
	}
	return out, nil
}
