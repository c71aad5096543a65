package cpuref

import (
	"math"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// map: x·y+1 on s32, and a computation over two element types.
func TestMapByHand(t *testing.T) {
	out := evalText(t, `HloModule m
f {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  p = s32[] multiply(x, y)
  one = s32[] constant(1)
  ROOT r = s32[] add(p, one)
}
ENTRY e {
  a = s32[3] parameter(0)
  b = s32[3] parameter(1)
  ROOT m = s32[3] map(a, b), dimensions={0}, to_apply=f
}`, vec[int32](1, -2, 3), vec[int32](4, 5, -6))
	assertLit(t, vec[int32](5, -9, -17), out)

	out = evalText(t, `HloModule m
g {
  x = f32[] parameter(0)
  i = s32[] parameter(1)
  c = f32[] convert(i)
  ROOT r = f32[] subtract(x, c)
}
ENTRY e {
  a = f32[2,2] parameter(0)
  b = s32[2,2] parameter(1)
  ROOT m = f32[2,2] map(a, b), dimensions={0,1}, to_apply=g
}`, mat(dims(2, 2), float32(0.5), 2, -1, 8), mat(dims(2, 2), int32(1), 2, 3, -4))
	assertLit(t, mat(dims(2, 2), float32(-0.5), 0, -4, 12), out)
}

// mulhi: the high words of products worked out in binary, at each width's edges.
func TestMulHiByHand(t *testing.T) {
	mulhi := func(dt string, x, y *hlo.Literal) *hlo.Literal {
		return evalText(t, `HloModule m
ENTRY e {
  x = `+dt+`[4] parameter(0)
  y = `+dt+`[4] parameter(1)
  ROOT r = `+dt+`[4] mulhi(x, y)
}`, x, y)
	}
	// (2^32−1)² = 2^64 − 2^33 + 1: high word 2^32 − 2; 2^31·2 = 2^32: 1; 7·9: 0.
	assertLit(t, vec[uint32](0xFFFFFFFE, 1, 0, 0x7FFFFFFF), mulhi("u32",
		vec[uint32](0xFFFFFFFF, 1<<31, 7, 0xFFFFFFFF), vec[uint32](0xFFFFFFFF, 2, 9, 1<<31)))
	// −1·1 = −1: high word −1; 2^30·4 = 2^32: 1; (−2^31)² = 2^62: 2^30; −2^31·2^30 = −2^61: −2^29.
	assertLit(t, vec[int32](-1, 1, 1<<30, -(1<<29)), mulhi("s32",
		vec[int32](-1, 1<<30, math.MinInt32, math.MinInt32), vec[int32](1, 4, math.MinInt32, 1<<30)))
	// (2^64−1)² = 2^128 − 2^65 + 1: 2^64 − 2; 2^63·4 = 2^65: 2; 3·5: 0; 2^32·2^32 = 2^64: 1.
	assertLit(t, vec[uint64](math.MaxUint64-1, 2, 0, 1), mulhi("u64",
		vec[uint64](math.MaxUint64, 1<<63, 3, 1<<32), vec[uint64](math.MaxUint64, 4, 5, 1<<32)))
	// −1·−1 = 1: 0; −1·1: −1; (−2^63)² = 2^126: 2^62; −2^63·2 = −2^64: −1.
	assertLit(t, vec[int64](0, -1, 1<<62, -1), mulhi("s64",
		vec[int64](-1, -1, math.MinInt64, math.MinInt64), vec[int64](-1, 1, math.MinInt64, 2)))
	// (−128)² = 16384 = 0x4000: 0x40; 127·−128 = −16256 = 0xC080: 0xC0 = −64.
	assertLit(t, vec[int8](64, -64, 0, -1), mulhi("s8",
		vec[int8](-128, 127, 3, -1), vec[int8](-128, -128, 5, 1)))
}

// topk: largest and smallest with ties in index order; floats in total order (NaN
// above everything, −0 below +0).
func TestTopKByHand(t *testing.T) {
	topk := func(x *hlo.Literal, shape string, k int, largest string) []*hlo.Literal {
		return evalText(t, `HloModule m
ENTRY e {
  x = `+x.Shape().String()+` parameter(0)
  ROOT t = `+shape+` topk(x), k=`+string(rune('0'+k))+`, largest=`+largest+`
}`, x).Elems()
	}
	x := vec[int32](3, 1, 4, 1, 5, 9, 2, 6)
	got := topk(x, "(s32[3], s32[3])", 3, "true")
	assertLit(t, vec[int32](9, 6, 5), got[0])
	assertLit(t, vec[int32](5, 7, 4), got[1])
	got = topk(x, "(s32[3], s32[3])", 3, "false")
	assertLit(t, vec[int32](1, 1, 2), got[0])
	assertLit(t, vec[int32](1, 3, 6), got[1])

	negZero, nan := float32(math.Copysign(0, -1)), float32(math.NaN())
	y := mat(dims(2, 4), nan, 1, negZero, 0, 7, -7, 7, -1)
	got = topk(y, "(f32[2,2], s32[2,2])", 2, "true")
	assertLit(t, mat(dims(2, 2), nan, 1, 7, 7), got[0])
	assertLit(t, mat(dims(2, 2), int32(0), 1, 0, 2), got[1])
	got = topk(y, "(f32[2,2], s32[2,2])", 2, "false")
	assertLit(t, mat(dims(2, 2), negZero, 0, -7, -1), got[0])
	assertLit(t, mat(dims(2, 2), int32(2), 3, 1, 3), got[1])
}

// triangular-solve on a = [[2, ·], [1, 4]] (· = 99, never read) and its
// transpose, on both sides, with and without a unit diagonal.
func TestTriangularSolveByHand(t *testing.T) {
	solve := func(a, b *hlo.Literal, opts string) *hlo.Literal {
		return evalText(t, `HloModule m
ENTRY e {
  a = `+a.Shape().String()+` parameter(0)
  b = `+b.Shape().String()+` parameter(1)
  ROOT x = `+b.Shape().String()+` triangular-solve(a, b), `+opts+`
}`, a, b)
	}
	lower := mat(dims(2, 2), float32(2), 99, 1, 4)
	upper := mat(dims(2, 2), float32(2), 1, 99, 4)
	col := mat(dims(2, 1), float32(2), 9)
	// 2·x0 = 2, x0 + 4·x1 = 9.
	assertLit(t, mat(dims(2, 1), float32(1), 2), solve(lower, col, "left_side=true, lower=true, transpose_a=NO_TRANSPOSE"))
	// aᵀ = [[2, 1], [0, 4]]: 4·x1 = 9, 2·x0 + x1 = 2.
	assertLit(t, mat(dims(2, 1), float32(-0.125), 2.25), solve(lower, col, "left_side=true, lower=true, transpose_a=TRANSPOSE"))
	assertLit(t, mat(dims(2, 1), float32(-0.125), 2.25), solve(upper, col, "left_side=true, transpose_a=NO_TRANSPOSE"))
	// Unit diagonal: x0 = 2, x0 + x1 = 9.
	assertLit(t, mat(dims(2, 1), float32(2), 7), solve(lower, col, "left_side=true, lower=true, unit_diagonal=true, transpose_a=NO_TRANSPOSE"))
	// x·a = [4, 8]: 2·x0 + x1 = 4, 4·x1 = 8.
	row := mat(dims(1, 2), float32(4), 8)
	assertLit(t, mat(dims(1, 2), float32(1), 2), solve(lower, row, "lower=true, transpose_a=NO_TRANSPOSE"))
	// x·aᵀ = [4, 8] with aᵀ = [[2, 1], [0, 4]]: 2·x0 = 4, x0 + 4·x1 = 8.
	assertLit(t, mat(dims(1, 2), float32(2), 1.5), solve(lower, row, "lower=true, transpose_a=ADJOINT"))
	// A batch of two: the second matrix is 2·I.
	as := mat(dims(2, 2, 2), float64(2), 99, 1, 4, 2, 99, 0, 2)
	bs := mat(dims(2, 2, 1), float64(2), 9, 6, -4)
	assertLit(t, mat(dims(2, 2, 1), float64(1), 2, 3, -2), solve(as, bs, "left_side=true, lower=true, transpose_a=NO_TRANSPOSE"))
}

// cholesky: [[4, 2], [2, 5]] = l·lᵀ with l = [[2, 0], [1, 2]]; the upper form reads
// the other triangle; [[1, 2], [2, 1]] is not positive definite (1 − 4 < 0) and
// gives NaNs throughout, its batch neighbour unharmed.
func TestCholeskyByHand(t *testing.T) {
	chol := func(a *hlo.Literal, lower string) *hlo.Literal {
		return evalText(t, `HloModule m
ENTRY e {
  a = `+a.Shape().String()+` parameter(0)
  ROOT l = `+a.Shape().String()+` cholesky(a), lower=`+lower+`
}`, a)
	}
	assertLit(t, mat(dims(2, 2), float32(2), 0, 1, 2), chol(mat(dims(2, 2), float32(4), 99, 2, 5), "true"))
	assertLit(t, mat(dims(2, 2), float32(2), 1, 0, 2), chol(mat(dims(2, 2), float32(4), 2, 99, 5), "false"))
	nan := math.NaN()
	assertLit(t, mat(dims(2, 2, 2), float64(2), 0, 1, 2, nan, nan, nan, nan),
		chol(mat(dims(2, 2, 2), float64(4), 0, 2, 5, 1, 0, 2, 1), "true"))
}

// dot with a wider result type (preferred_element_type) forms each product in the
// result type: s8 and u8 products that overflow their own type, a bf16 square
// that bf16 cannot hold, an f32 square that needs f64.
func TestWidenedDotByHand(t *testing.T) {
	dot := func(in, out string, x, y *hlo.Literal) *hlo.Literal {
		return evalText(t, `HloModule m
ENTRY e {
  x = `+in+`[2] parameter(0)
  y = `+in+`[2] parameter(1)
  ROOT d = `+out+`[] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}`, x, y)
	}
	// (−128)² + 127² = 16384 + 16129.
	assertLit(t, scalar(int32(32513)), dot("s8", "s32", vec[int8](-128, 127), vec[int8](-128, 127)))
	// 255² + 255² = 130050.
	assertLit(t, scalar(uint32(130050)), dot("u8", "u32", vec[uint8](255, 255), vec[uint8](255, 255)))
	assertLit(t, scalar(int32(130050)), dot("u8", "s32", vec[uint8](255, 255), vec[uint8](255, 255)))
	// (1 + 2^-7)² + 0 = 1 + 2^-6 + 2^-14: 15 significant bits, exact in f32.
	assertLit(t, scalar(float32(1+1.0/64+1.0/16384)), dot("bf16", "f32", bf16s(1+1.0/128, 0), bf16s(1+1.0/128, 5)))
	// (1 + 2^-23)² = 1 + 2^-22 + 2^-46: exact in f64.
	assertLit(t, scalar(1+math.Ldexp(1, -22)+math.Ldexp(1, -46)), dot("f32", "f64", vec(float32(1+math.Ldexp(1, -23)), 0), vec(float32(1+math.Ldexp(1, -23)), 3)))
}

// bitcast: x = [[1,2,3],[4,5,6]] stored column-major ({0,1}) is 1,4,2,5,3,6 in
// memory; read row-major as [3,2] that is xᵀ, as [6] the memory order itself; a
// row-major bitcast is a reshape; an s32 → f32 bitcast passes the bits.
func TestBitcastByHand(t *testing.T) {
	x := mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6)
	bitcast := func(from, to string, in *hlo.Literal) *hlo.Literal {
		return evalText(t, `HloModule m
ENTRY e {
  p = `+from+` parameter(0)
  ROOT b = `+to+` bitcast(p)
}`, in)
	}
	assertLit(t, mat(dims(3, 2), float32(1), 4, 2, 5, 3, 6), bitcast("f32[2,3]{0,1}", "f32[3,2]{1,0}", x))
	assertLit(t, vec(float32(1), 4, 2, 5, 3, 6), bitcast("f32[2,3]{0,1}", "f32[6]{0}", x))
	assertLit(t, mat(dims(3, 2), float32(1), 2, 3, 4, 5, 6), bitcast("f32[2,3]{1,0}", "f32[3,2]{1,0}", x))
	// Both column-major: memory 1,4,2,5,3,6 read as [3,2]{0,1}: column 0 is 1,4,2.
	assertLit(t, mat(dims(3, 2), float32(1), 5, 4, 3, 2, 6), bitcast("f32[2,3]{0,1}", "f32[3,2]{0,1}", x))
	assertLit(t, vec(float32(1.5)), bitcast("s32[1]{0}", "f32[1]{0}", vec(int32(0x3FC00000))))
}

// Tokens: a token parameter through after-all and a tuple, and a fresh token;
// each output is token[] holding no bytes.
func TestTokensByHand(t *testing.T) {
	out := evalText(t, `HloModule m
ENTRY e {
  t = token[] parameter(0)
  x = f32[2] parameter(1)
  j = token[] after-all(t)
  f = token[] after-all()
  ROOT r = (token[], f32[2], token[]) tuple(j, x, f)
}`, hlo.NewLiteral(hlo.Scalar(hlo.Token)), vec(float32(1), 2))
	for _, i := range []int{0, 2} {
		if e := out.Elems()[i]; !e.Shape().Equal(hlo.Scalar(hlo.Token)) || len(e.Bytes()) != 0 {
			t.Errorf("output %d is %v with %d bytes, want an empty token[]", i, e.Shape(), len(e.Bytes()))
		}
	}
	assertLit(t, vec(float32(1), 2), out.Elems()[1])
}
