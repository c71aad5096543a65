package cpuref

import (
	"math"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// tiny is 2^-40: 1 + tiny is exact in f64 and rounds to 1 in f32, so a c128 result
// holding it could not have come through c64.
var tiny = math.Ldexp(1, -40)

const c128Add = `add {
  a = c128[] parameter(0)
  b = c128[] parameter(1)
  ROOT s = c128[] add(a, b)
}
`

// TestC128ReduceWindow sums c128 windows: with low padding the first window holds
// x0 alone, then x0+x1, x1+x2, x2+x3 (sums exact in f64); a 2-D 2×2 window sums
// four elements; the same module on c64 values exact in both gives the same sums
// through the word path.
func TestC128ReduceWindow(t *testing.T) {
	text := func(dt string) string {
		return `HloModule m
add {
  a = ` + dt + `[] parameter(0)
  b = ` + dt + `[] parameter(1)
  ROOT s = ` + dt + `[] add(a, b)
}
ENTRY e {
  x = ` + dt + `[4] parameter(0)
  z = ` + dt + `[] constant((0, 0))
  ROOT r = ` + dt + `[4] reduce-window(x, z), window={size=2 pad=1_0}, to_apply=add
}`
	}
	x := vec(complex(1+tiny, -2), complex(tiny, 3*tiny), complex(-1, 0.5), complex(2, -tiny))
	want := vec(complex(1+tiny, -2), complex(1+2*tiny, -2+3*tiny), complex(-1+tiny, 0.5+3*tiny), complex(1, 0.5-tiny))
	assertLit(t, want, evalText(t, text("c128"), x))

	x64 := vec(complex64(complex(1, -2)), complex(0.5, 3), complex(-1, 0.5), complex(2, -0.25))
	assertLit(t, vec(complex64(complex(1, -2)), complex(1.5, 1), complex(-0.5, 3.5), complex(1, 0.25)), evalText(t, text("c64"), x64))
	x128 := vec(complex(1, -2), complex(0.5, 3), complex(-1, 0.5), complex(2, -0.25))
	assertLit(t, vec(complex(1, -2), complex(1.5, 1), complex(-0.5, 3.5), complex(1, 0.25)), evalText(t, text("c128"), x128))

	square := `HloModule m
` + c128Add + `ENTRY e {
  x = c128[2,3] parameter(0)
  z = c128[] constant((0, 1))
  ROOT r = c128[1,2] reduce-window(x, z), window={size=2x2}, to_apply=add
}`
	x2 := mat(dims(2, 3), complex(1, tiny), complex(2, 0), complex(3, 0), complex(4, 0), complex(5, tiny), complex(6, -1))
	// init i plus the four elements: 1+2+4+5 = 12, 2+3+5+6 = 16.
	assertLit(t, mat(dims(1, 2), complex(12, 1+2*tiny), complex(16, tiny)), evalText(t, square, x2))
}

// TestC128Scatter: scatter-add with repeated indices adds every update at index 0
// (in index order), an index whose window falls outside the operand is skipped;
// scatter with a replacing combiner keeps the last update; a variadic scatter
// carries a c128 sum and an s32 count together.
func TestC128Scatter(t *testing.T) {
	scatter := func(combiner, root string) string {
		return `HloModule m
` + combiner + `ENTRY e {
  x = c128[3] parameter(0)
  i = s32[5,1] parameter(1)
  u = c128[5] parameter(2)
  ROOT s = c128[3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=` + root + `
}`
	}
	x := vec(complex(1, 1), complex(2, 2), complex(3, 3))
	idx := mat(dims(5, 1), int32(0), 2, 0, 3, 0)
	u := vec(complex(tiny, 0), complex(10, -10), complex(0, tiny), complex(99, 99), complex(-1, 2*tiny))
	// x0 + u0 + u2 + u4; x2 + u1; u3 (index 3) skipped.
	want := vec(complex(tiny, 1+3*tiny), complex(2, 2), complex(13, -7))
	assertLit(t, want, evalText(t, scatter(c128Add, "add"), x, idx, u))

	replace := `replace {
  a = c128[] parameter(0)
  ROOT b = c128[] parameter(1)
}
`
	assertLit(t, vec(complex(-1, 2*tiny), complex(2, 2), complex(10, -10)), evalText(t, scatter(replace, "replace"), x, idx, u))

	counted := `HloModule m
addcount {
  a = c128[] parameter(0)
  n = s32[] parameter(1)
  b = c128[] parameter(2)
  m = s32[] parameter(3)
  s = c128[] add(a, b)
  c = s32[] add(n, m)
  ROOT t = (c128[], s32[]) tuple(s, c)
}
ENTRY e {
  x = c128[3] parameter(0)
  y = s32[3] parameter(1)
  i = s32[5,1] parameter(2)
  u = c128[5] parameter(3)
  v = s32[5] parameter(4)
  ROOT s = (c128[3], s32[3]) scatter(x, y, i, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=addcount
}`
	got := evalText(t, counted, x, vec(int32(0), 0, 0), idx, u, vec(int32(1), 1, 1, 1, 1))
	assertLit(t, hlo.TupleLiteral(want, vec(int32(3), 0, 1)), got)
}

// TestC128Sort sorts c128 values by real part, then imaginary part, stably: an s32
// operand of positions shows that equal elements keep their order. 1+tiny and 1
// differ only in c128.
func TestC128Sort(t *testing.T) {
	text := `HloModule m
lt {
  a = c128[] parameter(0)
  b = c128[] parameter(1)
  p = s32[] parameter(2)
  q = s32[] parameter(3)
  ra = f64[] real(a)
  rb = f64[] real(b)
  ia = f64[] imag(a)
  ib = f64[] imag(b)
  rlt = pred[] compare(ra, rb), direction=LT
  req = pred[] compare(ra, rb), direction=EQ
  ilt = pred[] compare(ia, ib), direction=LT
  tie = pred[] and(req, ilt)
  ROOT l = pred[] or(rlt, tie)
}
ENTRY e {
  x = c128[6] parameter(0)
  k = s32[6] parameter(1)
  ROOT s = (c128[6], s32[6]) sort(x, k), dimensions={0}, is_stable=true, to_apply=lt
}`
	x := vec(complex(1+tiny, 0), complex(1, 3), complex(-1, 5), complex(1+tiny, 0), complex(1, 3), complex(1, -tiny))
	got := evalText(t, text, x, vec(int32(0), 1, 2, 3, 4, 5))
	want := vec(complex(-1, 5), complex(1, -tiny), complex(1, 3), complex(1, 3), complex(1+tiny, 0), complex(1+tiny, 0))
	assertLit(t, hlo.TupleLiteral(want, vec(int32(2), 5, 1, 4, 0, 3)), got)
}

// TestC128SelectAndScatter selects, in each window of two, the element with the
// larger real part (the first on a tie) and adds the source value there.
func TestC128SelectAndScatter(t *testing.T) {
	text := `HloModule m
ge {
  a = c128[] parameter(0)
  b = c128[] parameter(1)
  ra = f64[] real(a)
  rb = f64[] real(b)
  ROOT g = pred[] compare(ra, rb), direction=GE
}
` + c128Add + `ENTRY e {
  x = c128[6] parameter(0)
  s = c128[3] parameter(1)
  z = c128[] constant((0, 0))
  ROOT r = c128[6] select-and-scatter(x, s, z), window={size=2 stride=2}, select=ge, scatter=add
}`
	x := vec(complex(1, 0), complex(1+tiny, -9), complex(2, 0), complex(2, 5), complex(-3, 0), complex(-4, 0))
	s := vec(complex(tiny, 1), complex(7, -7), complex(0.5, tiny))
	want := vec(complex(0, 0), complex(tiny, 1), complex(7, -7), complex(0, 0), complex(0.5, tiny), complex(0, 0))
	assertLit(t, want, evalText(t, text, x, s))
}

// TestC128Map maps a·b + a over c128 pairs (exact in f64).
func TestC128Map(t *testing.T) {
	text := `HloModule m
f {
  a = c128[] parameter(0)
  b = c128[] parameter(1)
  p = c128[] multiply(a, b)
  ROOT s = c128[] add(p, a)
}
ENTRY e {
  x = c128[2] parameter(0)
  y = c128[2] parameter(1)
  ROOT r = c128[2] map(x, y), dimensions={0}, to_apply=f
}`
	// (1+tiny)·i + (1+tiny) = (1+tiny) + (1+tiny)i; (2+i)(2−i) + (2+i) = 7 + i.
	got := evalText(t, text, vec(complex(1+tiny, 0), complex(2, 1)), vec(complex(0, 1), complex(2, -1)))
	assertLit(t, vec(complex(1+tiny, 1+tiny), complex(7, 1)), got)
}
