package cpuref

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// The tests of the parallel paths use operands big enough for parallelFor to share
// them out (over serialWork element steps), with values of mixed magnitude so that
// any change of summation order changes the bits.

func mixedF32(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((r.Float64()*2 - 1) * math.Pow(10, float64(r.IntN(9)-4)))
	}
	return v
}

// TestReduceByOutputIsTheRowMajorFold: reduce of f32[6,64,40] over dimensions
// {2,0} (listed out of order) is, for each j, the left fold in f32 over a (outer)
// then c (inner) of x[a,j,c], by the definition of reduce; every bit must match.
func TestReduceByOutputIsTheRowMajorFold(t *testing.T) {
	x := mixedF32(6*64*40, 7)
	out := evalText(t, withComps(addF32Comp, `
  x = f32[6,64,40] parameter(0)
  z = f32[] constant(0.25)
  ROOT r = f32[64] reduce(x, z), dimensions={2,0}, to_apply=add`), mat(dims(6, 64, 40), x...))
	want := make([]float32, 64)
	for j := range want {
		acc := float32(0.25)
		for a := range 6 {
			for c := range 40 {
				acc += x[(a*64+j)*40+c]
			}
		}
		want[j] = acc
	}
	assertLit(t, vec(want...), out)
}

// TestReduceByOutputArgmax: the two-operand argmax reducer over the rows of
// f32[300,500], shared out among the cores, keeps each row's first maximum.
func TestReduceByOutputArgmax(t *testing.T) {
	const rows, cols = 300, 500
	x := mixedF32(rows*cols, 9)
	for r := 0; r < rows; r += 7 { // ties: the lower index wins
		x[r*cols+3], x[r*cols+400] = 1e6, 1e6
	}
	out := evalText(t, withComps(argmaxComp, `
  x = f32[300,500] parameter(0)
  i = s32[300,500] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[300], s32[300]) reduce(x, i, ninf, zero), dimensions={1}, to_apply=argmax`), mat(dims(rows, cols), x...))
	wantV, wantI := make([]float32, rows), make([]int32, rows)
	for r := range rows {
		wantV[r], wantI[r] = float32(math.Inf(-1)), 0
		for c := range cols {
			if v := x[r*cols+c]; v > wantV[r] {
				wantV[r], wantI[r] = v, int32(c)
			}
		}
	}
	assertLit(t, hlo.TupleLiteral(vec(wantV...), vec(wantI...)), out)
}

// TestReduceByOutputWithConstantInReducer: a reducer holding a constant
// (acc*0.5 + x) keeps it in every worker's registers.
func TestReduceByOutputWithConstantInReducer(t *testing.T) {
	x := mixedF32(200*400, 11)
	out := evalText(t, `
HloModule m
decay {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  h = f32[] constant(0.5)
  m = f32[] multiply(a, h)
  ROOT s = f32[] add(m, b)
}
ENTRY e {
  x = f32[200,400] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[200] reduce(x, z), dimensions={1}, to_apply=decay
}`, mat(dims(200, 400), x...))
	want := make([]float32, 200)
	for r := range want {
		var acc float32
		for c := range 400 {
			acc = acc*0.5 + x[r*400+c]
		}
		want[r] = acc
	}
	assertLit(t, vec(want...), out)
}

// TestGatherIntoParallelTranspose: transpose f32[64,33,40] by {2,0,1}: out[i,j,k] =
// x[j,k,i], every element.
func TestGatherIntoParallelTranspose(t *testing.T) {
	x := mixedF32(64*33*40, 13)
	out := evalText(t, `
HloModule m
ENTRY e {
  x = f32[64,33,40] parameter(0)
  ROOT t = f32[40,64,33] transpose(x), dimensions={2,0,1}
}`, mat(dims(64, 33, 40), x...))
	want := make([]float32, len(x))
	for i := range 40 {
		for j := range 64 {
			for k := range 33 {
				want[(i*64+j)*33+k] = x[(j*33+k)*40+i]
			}
		}
	}
	assertLit(t, mat(dims(40, 64, 33), want...), out)
}

// TestMapsInBlocks: a bf16 multiply and an s8 clamp with scalar bounds over
// 100003 elements (not a multiple of the block length) against the element
// definitions: the bf16 product rounded to nearest even from f32, and clamp.
func TestMapsInBlocks(t *testing.T) {
	const n = 100003
	xf, yf := mixedF32(n, 17), mixedF32(n, 19)
	x, y := bf16s(xf...), bf16s(yf...)
	prod := evalBinaryOp(t, hlo.OpMultiply, x, y)
	for i := range n {
		want := hlo.BF16FromFloat32(hlo.BFloat16(x.Bits(i)).Float32() * hlo.BFloat16(y.Bits(i)).Float32())
		require.Equal(t, uint64(want), prod.Bits(i), "element %d", i)
	}
	v := make([]int8, n)
	for i := range n {
		v[i] = int8(i)
	}
	clamped := evalText(t, `
HloModule m
ENTRY e {
  v = s8[100003] parameter(0)
  lo = s8[] constant(-5)
  hi = s8[] constant(50)
  ROOT c = s8[100003] clamp(lo, v, hi)
}`, vec(v...))
	for i := range n {
		require.Equal(t, int64(min(max(v[i], -5), 50)), clamped.Int64(i), "element %d", i)
	}
}
