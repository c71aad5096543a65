package cpuref

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// oneOp wraps a single instruction line (with parameter lines) into a module.
func oneOp(body string) string {
	return "HloModule m\nENTRY e {\n" + body + "\n}"
}

func iota6() *hlo.Literal { return mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6) }

func TestBroadcast(t *testing.T) {
	x := vec(float32(1), 2, 3)
	assertLit(t, mat(dims(2, 3), float32(1), 2, 3, 1, 2, 3), evalText(t, oneOp(`
  x = f32[3] parameter(0)
  ROOT b = f32[2,3] broadcast(x), dimensions={1}`), x))
	assertLit(t, mat(dims(3, 2), float32(1), 1, 2, 2, 3, 3), evalText(t, oneOp(`
  x = f32[3] parameter(0)
  ROOT b = f32[3,2] broadcast(x), dimensions={0}`), x))
	assertLit(t, mat(dims(2, 2), int32(7), 7, 7, 7), evalText(t, oneOp(`
  x = s32[] parameter(0)
  ROOT b = s32[2,2] broadcast(x), dimensions={}`), scalar(int32(7))))
	// Operand dims 0 and 1 go to result dims 0 and 2; dim 1 repeats.
	assertLit(t, mat(dims(2, 2, 3), float32(1), 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6), evalText(t, oneOp(`
  x = f32[2,3] parameter(0)
  ROOT b = f32[2,2,3] broadcast(x), dimensions={0,2}`), iota6()))
	// A transposing broadcast: operand dim 0 → result dim 1.
	assertLit(t, mat(dims(3, 2), float32(1), 4, 2, 5, 3, 6), evalText(t, oneOp(`
  x = f32[2,3] parameter(0)
  ROOT b = f32[3,2] broadcast(x), dimensions={1,0}`), iota6()))
	assertLit(t, mat[float32](dims(0, 3)), evalText(t, oneOp(`
  x = f32[3] parameter(0)
  ROOT b = f32[0,3] broadcast(x), dimensions={1}`), x))
}

func TestReshapeAndTranspose(t *testing.T) {
	assertLit(t, mat(dims(3, 2), float32(1), 2, 3, 4, 5, 6), evalText(t, oneOp(`
  x = f32[2,3] parameter(0)
  ROOT r = f32[3,2] reshape(x)`), iota6()))
	assertLit(t, mat(dims(1, 1), int8(5)), evalText(t, oneOp(`
  x = s8[] parameter(0)
  ROOT r = s8[1,1] reshape(x)`), scalar(int8(5))))
	assertLit(t, mat[float32](dims(0)), evalText(t, oneOp(`
  x = f32[0,3] parameter(0)
  ROOT r = f32[0] reshape(x)`), mat[float32](dims(0, 3))))

	assertLit(t, mat(dims(3, 2), float32(1), 4, 2, 5, 3, 6), evalText(t, oneOp(`
  x = f32[2,3] parameter(0)
  ROOT t = f32[3,2] transpose(x), dimensions={1,0}`), iota6()))
	// Result dim i is operand dim perm[i]: out[k][i][j] = x[i][j][k].
	x := mat(dims(2, 2, 2), int32(0), 1, 2, 3, 4, 5, 6, 7)
	assertLit(t, mat(dims(2, 2, 2), int32(0), 2, 4, 6, 1, 3, 5, 7), evalText(t, oneOp(`
  x = s32[2,2,2] parameter(0)
  ROOT t = s32[2,2,2] transpose(x), dimensions={2,0,1}`), x))
}

func TestSlice(t *testing.T) {
	x := vec(float32(0), 1, 2, 3, 4, 5, 6, 7)
	assertLit(t, vec(float32(1), 4, 7), evalText(t, oneOp(`
  x = f32[8] parameter(0)
  ROOT s = f32[3] slice(x), slice={[1:8:3]}`), x))
	assertLit(t, vec(float32(1), 4), evalText(t, oneOp(`
  x = f32[8] parameter(0)
  ROOT s = f32[2] slice(x), slice={[1:7:3]}`), x))
	assertLit(t, mat[float32](dims(0)), evalText(t, oneOp(`
  x = f32[8] parameter(0)
  ROOT s = f32[0] slice(x), slice={[2:2]}`), x))
	// A stride past the end selects the start alone ((7+stride-1) used to wrap).
	assertLit(t, vec(float32(1)), evalText(t, oneOp(`
  x = f32[8] parameter(0)
  ROOT s = f32[1] slice(x), slice={[1:8:9223372036854775807]}`), x))
	// Rows 0 and 2 (stride 2), columns 1..2.
	m := mat(dims(4, 3), int32(0), 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32)
	assertLit(t, mat(dims(2, 2), int32(1), 2, 21, 22), evalText(t, oneOp(`
  x = s32[4,3] parameter(0)
  ROOT s = s32[2,2] slice(x), slice={[0:4:2], [1:3]}`), m))
}

func TestConcatenate(t *testing.T) {
	a, b := mat(dims(2, 2), float32(1), 2, 3, 4), mat(dims(1, 2), float32(5), 6)
	assertLit(t, mat(dims(3, 2), float32(1), 2, 3, 4, 5, 6), evalText(t, oneOp(`
  a = f32[2,2] parameter(0)
  b = f32[1,2] parameter(1)
  ROOT c = f32[3,2] concatenate(a, b), dimensions={0}`), a, b))
	c := mat(dims(2, 1), float32(7), 8)
	assertLit(t, mat(dims(2, 4), float32(1), 2, 7, 1, 3, 4, 8, 3), evalText(t, oneOp(`
  a = f32[2,2] parameter(0)
  c = f32[2,1] parameter(1)
  e = f32[2,0] parameter(2)
  d = f32[2,1] slice(a), slice={[0:2], [0:1]}
  ROOT r = f32[2,4] concatenate(a, e, c, d), dimensions={1}`), a, c, mat[float32](dims(2, 0))))
}

func TestPad(t *testing.T) {
	zero := scalar(float32(0))
	// dim 0: one row of padding before; dim 1: interior 1, two after.
	assertLit(t, mat(dims(3, 7),
		float32(0), 0, 0, 0, 0, 0, 0,
		1, 0, 2, 0, 3, 0, 0,
		4, 0, 5, 0, 6, 0, 0), evalText(t, oneOp(`
  x = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT p = f32[3,7] pad(x, z), padding=1_0_0x0_2_1`), iota6(), zero))
	// Negative low padding drops the first column; high padding adds three.
	assertLit(t, mat(dims(3, 5),
		float32(2), 3, 9, 9, 9,
		5, 6, 9, 9, 9,
		9, 9, 9, 9, 9), evalText(t, oneOp(`
  x = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT p = f32[3,5] pad(x, z), padding=0_1x-1_3`), iota6(), scalar(float32(9))))
	// Interior padding with negative edges: 1 _ 2 _ 3 cut by 2 low and 1 high → 2 _.
	assertLit(t, mat(dims(2, 2), float32(2), -1, 5, -1), evalText(t, oneOp(`
  x = f32[2,3] parameter(0)
  z = f32[] parameter(1)
  ROOT p = f32[2,2] pad(x, z), padding=0_0x-2_-1_1`), iota6(), scalar(float32(-1))))
	// Padding an empty array gives only padding.
	assertLit(t, vec(int32(4), 4), evalText(t, oneOp(`
  x = s32[0] parameter(0)
  z = s32[] parameter(1)
  ROOT p = s32[2] pad(x, z), padding=1_1_3`), mat[int32](dims(0)), scalar(int32(4))))
}

func TestReverse(t *testing.T) {
	assertLit(t, mat(dims(2, 3), float32(3), 2, 1, 6, 5, 4), evalText(t, oneOp(`
  x = f32[2,3] parameter(0)
  ROOT r = f32[2,3] reverse(x), dimensions={1}`), iota6()))
	assertLit(t, mat(dims(2, 3), float32(6), 5, 4, 3, 2, 1), evalText(t, oneOp(`
  x = f32[2,3] parameter(0)
  ROOT r = f32[2,3] reverse(x), dimensions={0,1}`), iota6()))
}

func TestCopy(t *testing.T) {
	x := mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6)
	got := evalText(t, oneOp(`
  x = f32[2,3] parameter(0)
  ROOT c = f32[2,3] copy(x)`), x)
	assertLit(t, mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6), got)
	x.SetFloat64(0, 9)
	assert.Equal(t, float64(1), got.Float64(0), "the copy shares no memory with its operand")
}

func iota16() *hlo.Literal {
	v := make([]int32, 16)
	for i := range v {
		v[i] = int32(i)
	}
	return mat(dims(4, 4), v...)
}

const dynamicSlice2x2 = `
  x = s32[4,4] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT s = s32[2,2] dynamic-slice(x, i, j), dynamic_slice_sizes={2,2}`

func TestDynamicSlice(t *testing.T) {
	ds := func(i, j int32) *hlo.Literal {
		return evalText(t, oneOp(dynamicSlice2x2), iota16(), scalar(i), scalar(j))
	}
	assertLit(t, mat(dims(2, 2), int32(6), 7, 10, 11), ds(1, 2))
	assertLit(t, mat(dims(2, 2), int32(10), 11, 14, 15), ds(3, 3), "starts clamp to 4-2 = 2")
	assertLit(t, mat(dims(2, 2), int32(0), 1, 4, 5), ds(-5, 0), "negative starts clamp to 0")
	assertLit(t, mat(dims(2, 2), int32(2), 3, 6, 7), ds(0, 100))

	// Unsigned start indices.
	assertLit(t, vec(int32(13), 14), evalText(t, oneOp(`
  x = s32[16] parameter(0)
  i = u8[] parameter(1)
  ROOT s = s32[2] dynamic-slice(x, i), dynamic_slice_sizes={2}`), vec(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, int32(15)), scalar(uint8(13))))
}

func TestDynamicUpdateSlice(t *testing.T) {
	dus := func(i, j int32) *hlo.Literal {
		return evalText(t, oneOp(`
  x = f32[3,3] parameter(0)
  u = f32[2,2] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT s = f32[3,3] dynamic-update-slice(x, u, i, j)`),
			mat(dims(3, 3), float32(0), 0, 0, 0, 0, 0, 0, 0, 0), mat(dims(2, 2), float32(1), 2, 3, 4), scalar(i), scalar(j))
	}
	assertLit(t, mat(dims(3, 3), float32(0), 0, 0, 0, 1, 2, 0, 3, 4), dus(1, 1))
	assertLit(t, mat(dims(3, 3), float32(0), 0, 0, 1, 2, 0, 3, 4, 0), dus(2, -1), "clamped to (1, 0)")
	assertLit(t, mat(dims(3, 3), float32(0), 1, 2, 0, 3, 4, 0, 0, 0), dus(-7, 9), "clamped to (0, 1)")
}

func TestDynamicSliceVectorStartForm(t *testing.T) {
	// The older form takes one rank-1 operand of start indices (the kernel's; hlo's
	// verifier takes only the scalar form, so the kernel is run without it).
	x := iota16()
	m := oneInstruction(hlo.OpDynamicSlice, hlo.MakeShape(hlo.S32, 2, 2),
		hlo.Attributes{SliceSizes: []int64{2, 2}}, x, vec(int32(2), 1))
	out, err := EvalComputation(m.Entry, x, vec(int32(2), 1))
	require.NoError(t, err)
	assertLit(t, mat(dims(2, 2), int32(9), 10, 13, 14), out)

	m = oneInstruction(hlo.OpDynamicSlice, hlo.MakeShape(hlo.S32, 2, 2),
		hlo.Attributes{SliceSizes: []int64{2, 2}}, x, vec(int32(2), 1, 0))
	_, err = EvalComputation(m.Entry, x, vec(int32(2), 1, 0))
	assert.Error(t, err, "three start indices for a rank-2 operand")
}
