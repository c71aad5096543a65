package passes

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// Tests of the map inliner and the mulhi, topk, triangular-solve and cholesky
// expanders: each expansion computes what cpuref's own definition does.

func TestExpandMapInlines(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "the body over arrays, its constant broadcast",
		disabled: OptionalNames(),
		before: `HloModule m
%f (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  %two = f32[] constant(2)
  %p = f32[] multiply(%x, %two)
  ROOT %r = f32[] add(%p, %y)
}
ENTRY %e (a: f32[3], b: f32[3]) -> f32[3] {
  %a = f32[3] parameter(0)
  %b = f32[3] parameter(1)
  ROOT %m = f32[3] map(%a, %b), dimensions={0}, to_apply=%f
}
`,
		after: `HloModule m
%f (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  %two = f32[] constant(2)
  %p = f32[] multiply(%x, %two)
  ROOT %r = f32[] add(%p, %y)
}
ENTRY %e (a: f32[3], b: f32[3]) -> f32[3] {
  %a = f32[3] parameter(0)
  %b = f32[3] parameter(1)
  %m.constant = f32[] constant(2)
  %m.broadcast = f32[3] broadcast(%m.constant), dimensions={}
  %m.multiply = f32[3] multiply(%a, %m.broadcast)
  ROOT %m.add = f32[3] add(%m.multiply, %b)
}
`,
	}})
}

func TestExpandMapMatchesDefinition(t *testing.T) {
	x := hlo.MustFromSlice([]int64{2, 3}, []float32{-1.5, 0, 2, 7, -0.25, 3})
	n := hlo.MustFromSlice([]int64{2, 3}, []int32{3, -1, 0, 5, 2, -7})
	expandedMatchesCPU(t, `HloModule m
g {
  x = f32[] parameter(0)
  i = s32[] parameter(1)
  c = f32[] convert(i)
  s = f32[] sine(x)
  mx = f32[] maximum(s, c)
  k = s32[] constant(3)
  hi = s32[] mulhi(i, k)
  ch = f32[] convert(hi)
  ROOT r = f32[] add(mx, ch)
}
ENTRY e {
  a = f32[2,3] parameter(0)
  b = s32[2,3] parameter(1)
  ROOT m = f32[2,3] map(a, b), dimensions={0,1}, to_apply=g
}`, 0, x, n)
	// A body that returns a parameter, and a scalar map.
	expandedMatchesCPU(t, `HloModule m
second {
  x = f32[] parameter(0)
  ROOT y = f32[] parameter(1)
}
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] map(a, b), dimensions={}, to_apply=second
}`, 0, hlo.ScalarLiteral(float32(1)), hlo.ScalarLiteral(float32(2)))
}

// A body holding an op that is not elementwise cannot be inlined: the error
// names the map, its computation and the op.
func TestExpandMapRefusesNonElementwise(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule m
f {
  x = f32[] parameter(0)
  ROOT r = f32[] reshape(x)
}
ENTRY e {
  a = f32[3] parameter(0)
  ROOT mapped = f32[3] map(a), dimensions={0}, to_apply=f
}`)
	if err != nil {
		t.Fatal(err)
	}
	err = Run(m, Config{})
	for _, want := range []string{"map mapped", "to_apply f", "reshape r"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want an error naming %q", err, want)
		}
	}
}

// mulhi's expansion agrees bit for bit with hlo.MulHiBits for every integer type,
// on random values and each type's extremes.
func TestExpandMulHiMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	for _, dt := range []hlo.DType{hlo.S8, hlo.S16, hlo.S32, hlo.S64, hlo.U8, hlo.U16, hlo.U32, hlo.U64} {
		x, y := hlo.NewLiteral(hlo.MakeShape(dt, 40)), hlo.NewLiteral(hlo.MakeShape(dt, 40))
		edges := []uint64{0, 1, math.MaxUint64, 1 << (dt.Bits() - 1), 1<<(dt.Bits()-1) - 1}
		for i := range 40 {
			x.SetBits(i, rng.Uint64())
			y.SetBits(i, rng.Uint64())
			if i < len(edges)*len(edges) {
				x.SetBits(i, edges[i%len(edges)])
				y.SetBits(i, edges[i/len(edges)])
			}
		}
		expandedMatchesCPU(t, `HloModule m
ENTRY e {
  x = `+dt.String()+`[40] parameter(0)
  y = `+dt.String()+`[40] parameter(1)
  ROOT r = `+dt.String()+`[40] mulhi(x, y)
}`, 0, x, y)
	}
}

// topk's expansion picks what cpuref's definition does, ties and NaNs included.
func TestExpandTopKMatchesDefinition(t *testing.T) {
	x := hlo.MustFromSlice([]int64{2, 6}, []float32{3, float32(math.NaN()), 3, -1, float32(math.Inf(-1)), 0,
		float32(math.Copysign(0, -1)), 0, 2, 2, -5, 9})
	for _, largest := range []string{"true", "false"} {
		for _, k := range []int{0, 1, 4, 6} {
			expandedMatchesCPU(t, fmt.Sprintf(`HloModule m
ENTRY e {
  x = f32[2,6] parameter(0)
  ROOT t = (f32[2,%d], s32[2,%d]) topk(x), k=%d, largest=%s
}`, k, k, k, largest), 0, x)
		}
	}
}

// randomMatrices fills a float64 batch of n×n matrices in [-1, 1] with add on
// the diagonal.
func randomMatrices(rng *rand.Rand, s hlo.Shape, add float64) *hlo.Literal {
	l := hlo.NewLiteral(s)
	n := s.Dims[s.Rank()-1]
	for i := range l.NumElements() {
		v := rng.Float64()*2 - 1
		if int64(i)/n%n == int64(i)%n {
			v += add
		}
		l.SetFloat64(i, v)
	}
	return l
}

// Every variant of triangular-solve (side, triangle, unit diagonal, transpose),
// with batch dimensions, matches cpuref's substitution to rounding.
func TestExpandTriangularSolveMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := randomMatrices(rng, hlo.MakeShape(hlo.F64, 2, 3, 4, 4), 4)
	for _, left := range []bool{true, false} {
		bDims := "[2,3,4,5]"
		if !left {
			bDims = "[2,3,5,4]"
		}
		b := randomMatrices(rng, hlo.MakeShape(hlo.F64, 2, 3, map[bool]int64{true: 4, false: 5}[left], map[bool]int64{true: 5, false: 4}[left]), 0)
		for _, lower := range []bool{true, false} {
			for _, unit := range []bool{true, false} {
				for _, tr := range []string{"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"} {
					opts := fmt.Sprintf("left_side=%v, lower=%v, unit_diagonal=%v, transpose_a=%s", left, lower, unit, tr)
					t.Run(opts, func(t *testing.T) {
						expandedMatchesCPU(t, `HloModule m
ENTRY e {
  a = f64[2,3,4,4] parameter(0)
  b = f64`+bDims+` parameter(1)
  ROOT x = f64`+bDims+` triangular-solve(a, b), `+opts+`
}`, 1e-12, a, b)
					})
				}
			}
		}
	}
}

// cholesky of x·xᵀ + 4·I (positive definite), both triangles, a batch, and a
// matrix that is not positive definite (all NaN) next to one that is.
func TestExpandCholeskyMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := randomMatrices(rng, hlo.MakeShape(hlo.F64, 3, 5, 5), 0)
	for _, lower := range []string{"true", "false"} {
		expandedMatchesCPU(t, `HloModule m
ENTRY e {
  x = f64[3,5,5] parameter(0)
  xxt = f64[3,5,5] dot(x, x), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  i0 = s32[3,5,5] iota(), iota_dimension=1
  i1 = s32[3,5,5] iota(), iota_dimension=2
  on = pred[3,5,5] compare(i0, i1), direction=EQ
  four = f64[] constant(4)
  zero = f64[] constant(0)
  fours = f64[3,5,5] broadcast(four), dimensions={}
  zeros = f64[3,5,5] broadcast(zero), dimensions={}
  eye = f64[3,5,5] select(on, fours, zeros)
  spd = f64[3,5,5] add(xxt, eye)
  ROOT l = f64[3,5,5] cholesky(spd), lower=`+lower+`
}`, 1e-12, x)
	}
	notPD := hlo.MustFromSlice([]int64{2, 2, 2}, []float32{1, 2, 2, 1, 4, 0, 2, 5})
	expandedMatchesCPU(t, `HloModule m
ENTRY e {
  a = f32[2,2,2] parameter(0)
  ROOT l = f32[2,2,2] cholesky(a), lower=true
}`, 0, notPD)
}

// Every pair of rank-3 operand and rank-2 or rank-3 result layouts: the expansion
// moves each element where cpuref's memory-order definition puts it.
func TestExpandBitcastMatchesDefinition(t *testing.T) {
	x := hlo.NewLiteral(hlo.MakeShape(hlo.S32, 2, 3, 4))
	for i := range x.NumElements() {
		x.SetInt64(i, int64(i))
	}
	perms3 := []string{"2,1,0", "0,1,2", "1,0,2", "2,0,1", "0,2,1", "1,2,0"}
	for _, ol := range perms3 {
		for _, out := range []string{"s32[4,6]{1,0}", "s32[4,6]{0,1}", "s32[3,2,4]{0,2,1}", "s32[24]{0}", "f32[6,4]{0,1}"} {
			expandedMatchesCPU(t, `HloModule m
ENTRY e {
  p = s32[2,3,4]{`+ol+`} parameter(0)
  ROOT b = `+out+` bitcast(p)
}`, 0, x)
		}
	}
}
