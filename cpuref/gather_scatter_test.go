package cpuref

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func grid3() *hlo.Literal { return mat(dims(3, 3), float32(1), 2, 3, 4, 5, 6, 7, 8, 9) }

func gather(t *testing.T, idxShape, outShape, attrs string, operand, idx *hlo.Literal) *hlo.Literal {
	t.Helper()
	return evalText(t, oneOp(`
  x = `+operand.Shape().String()+` parameter(0)
  i = `+idxShape+` parameter(1)
  ROOT g = `+outShape+` gather(x, i), `+attrs), operand, idx)
}

func TestGather(t *testing.T) {
	// Rows 0 and 2 (index_vector_dim = rank: each index is a scalar).
	assertLit(t, mat(dims(2, 3), float32(1), 2, 3, 7, 8, 9), gather(t, "s32[2]", "f32[2,3]",
		"offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}",
		grid3(), vec(int32(0), 2)))
	// Columns 0 and 2, the batch dimension last in the result.
	assertLit(t, mat(dims(3, 2), float32(1), 3, 4, 6, 7, 9), gather(t, "s32[2]", "f32[3,2]",
		"offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={3,1}",
		grid3(), vec(int32(0), 2)))
	// Points (0,1) and (2,2): full index vectors, everything collapsed.
	assertLit(t, vec(float32(2), 9), gather(t, "s32[2,2]", "f32[2]",
		"offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}",
		grid3(), mat(dims(2, 2), int32(0), 1, 2, 2)))
	// index_vector_dim=0: the index vectors are the columns of the index array.
	assertLit(t, vec(float32(2), 9), gather(t, "s32[2,2]", "f32[2]",
		"offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1}",
		grid3(), mat(dims(2, 2), int32(0), 2, 1, 2)))
	// 2×2 windows whose starts are clamped into range: (2,2) → (1,1), (-1,0) → (0,0).
	assertLit(t, mat(dims(2, 2, 2), float32(5), 6, 8, 9, 1, 2, 4, 5), gather(t, "s32[2,2]", "f32[2,2,2]",
		"offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2}",
		grid3(), mat(dims(2, 2), int32(2), 2, -1, 0)))
	// start_index_map reorders: the vector (a, b) starts at row b, column a.
	assertLit(t, vec(float32(4)), gather(t, "s32[1,2]", "f32[1]",
		"offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={1,1}",
		grid3(), mat(dims(1, 2), int32(0), 1)))
	// Batching dimensions: row b of the operand is indexed by row b of the indices.
	assertLit(t, vec(float32(3), 4), gather(t, "s32[2,1]", "f32[2]",
		"offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}",
		mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6), mat(dims(2, 1), int32(2), 0)))
	// No indices at all: an empty result.
	assertLit(t, mat[float32](dims(0, 3)), gather(t, "s32[0]", "f32[0,3]",
		"offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}",
		grid3(), mat[int32](dims(0))))
}

func scatterText(comps, idxShape, updShape, attrs string) string {
	return withComps(comps, `
  x = f32[3,3] parameter(0)
  i = `+idxShape+` parameter(1)
  u = `+updShape+` parameter(2)
  ROOT s = f32[3,3] scatter(x, i, u), `+attrs)
}

const (
	rowScatter = "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"
	overwrite  = `
overwrite {
  old = f32[] parameter(0)
  ROOT new = f32[] parameter(1)
}
`
)

func zeros3() *hlo.Literal { return mat(dims(3, 3), float32(0), 0, 0, 0, 0, 0, 0, 0, 0) }

func TestScatter(t *testing.T) {
	upd := mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6)
	assertLit(t, mat(dims(3, 3), float32(1), 2, 3, 0, 0, 0, 4, 5, 6), evalText(t,
		scatterText(addF32Comp, "s32[2]", "f32[2,3]", rowScatter+", to_apply=add"), zeros3(), vec(int32(0), 2), upd))
	// Repeated indices combine with to_apply.
	assertLit(t, mat(dims(3, 3), float32(0), 0, 0, 5, 7, 9, 0, 0, 0), evalText(t,
		scatterText(addF32Comp, "s32[2]", "f32[2,3]", rowScatter+", to_apply=add"), zeros3(), vec(int32(1), 1), upd))
	// Updates apply in index order: with an overwriting combiner the last one wins.
	assertLit(t, mat(dims(3, 3), float32(0), 0, 0, 4, 5, 6, 0, 0, 0), evalText(t,
		scatterText(overwrite, "s32[2]", "f32[2,3]", rowScatter+", to_apply=overwrite"), zeros3(), vec(int32(1), 1), upd))
	// Out-of-bounds indices (3 and -1) are skipped, never clamped.
	assertLit(t, mat(dims(3, 3), float32(0), 0, 0, 0, 0, 0, 0, 0, 0), evalText(t,
		scatterText(addF32Comp, "s32[2]", "f32[2,3]", rowScatter+", to_apply=add"), zeros3(), vec(int32(3), -1), upd))
	// Point updates with full index vectors.
	assertLit(t, mat(dims(3, 3), float32(1), 12, 3, 4, 5, 6, 7, 8, 29), evalText(t,
		scatterText(addF32Comp, "s32[2,2]", "f32[2]",
			"update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add"),
		grid3(), mat(dims(2, 2), int32(0), 1, 2, 2), vec(float32(10), 20)))
}

func TestScatterWindowsThatDoNotFitAreSkippedWhole(t *testing.T) {
	// 2×2 windows: at (1,1) it fits; at (2,0) the window would overhang row 3, so it
	// is dropped entirely (XLA does not clamp scatter windows).
	upd := mat(dims(2, 2, 2), float32(1), 1, 1, 1, 5, 5, 5, 5)
	assertLit(t, mat(dims(3, 3), float32(0), 0, 0, 0, 1, 1, 0, 1, 1), evalText(t,
		scatterText(addF32Comp, "s32[2,2]", "f32[2,2,2]",
			"update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add"),
		zeros3(), mat(dims(2, 2), int32(1), 1, 2, 0), upd))
}

func TestScatterTwoOperands(t *testing.T) {
	out := evalText(t, withComps(`
addmax {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  s = f32[] add(a0, b0)
  m = s32[] maximum(a1, b1)
  ROOT r = (f32[], s32[]) tuple(s, m)
}`, `
  x = f32[4] parameter(0)
  y = s32[4] parameter(1)
  i = s32[3] parameter(2)
  u = f32[3] parameter(3)
  v = s32[3] parameter(4)
  ROOT s = (f32[4], s32[4]) scatter(x, y, i, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=addmax`),
		vec(float32(0), 0, 0, 0), vec(int32(0), 0, 0, 0), vec(int32(3), 0, 3), vec(float32(1), 2, 4), vec(int32(-5), 7, 9))
	assertLit(t, hlo.TupleLiteral(vec(float32(2), 0, 0, 5), vec(int32(7), 0, 0, 9)), out)
}

func TestScatterBatchingDims(t *testing.T) {
	// Operand rows are batches; update b goes to row b at column indices[b].
	out := evalText(t, withComps(addF32Comp, `
  x = f32[2,3] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2] parameter(2)
  ROOT s = f32[2,3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=add`),
		mat(dims(2, 3), float32(0), 0, 0, 0, 0, 0), mat(dims(2, 1), int32(2), 0), vec(float32(10), 20))
	assertLit(t, mat(dims(2, 3), float32(0), 0, 10, 20, 0, 0), out)
}

func seqS64(n int, start int64) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = start + int64(i)
	}
	return v
}

// The gather example of the StableHLO specification: batching dimensions, a
// reordered start_index_map and a clamped start index ([0, 9] → row 2).
func TestGatherStableHLOSpecExample(t *testing.T) {
	operand := mat(dims(2, 3, 4, 2), seqS64(48, 1)...)
	indices := mat(dims(2, 2, 3, 2), int64(0), 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9,
		0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0)
	want := mat(dims(2, 2, 3, 2, 2), int64(
		1), 2, 3, 4, 3, 4, 5, 6, 13, 14, 15, 16,
		33, 34, 35, 36, 35, 36, 37, 38, 41, 42, 43, 44,
		1, 2, 3, 4, 13, 14, 15, 16, 21, 22, 23, 24,
		43, 44, 45, 46, 33, 34, 35, 36, 27, 28, 29, 30)
	assertLit(t, want, gather(t, "s64[2,2,3,2]", "s64[2,2,3,2,2]",
		"offset_dims={3,4}, collapsed_slice_dims={1}, operand_batching_dims={0}, start_indices_batching_dims={1}, start_index_map={2,1}, index_vector_dim=3, slice_sizes={1,1,2,2}",
		operand, indices))
}

// The scatter examples of the StableHLO specification (interpreter tests): windows
// of ones added at each index; index [0, 9] is out of bounds and skipped.
func TestScatterStableHLOSpecExamples(t *testing.T) {
	ones := func(n int) []int64 {
		v := make([]int64, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	out := evalText(t, withComps(addComp("s64"), `
  x = s64[3,4,2] parameter(0)
  i = s64[2,3,2] parameter(1)
  u = s64[2,3,2,2] parameter(2)
  ROOT s = s64[3,4,2] scatter(x, i, u), update_window_dims={2,3}, inserted_window_dims={0}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=2, to_apply=add`),
		mat(dims(3, 4, 2), seqS64(24, 1)...),
		mat(dims(2, 3, 2), int64(0), 2, 1, 0, 2, 1, 0, 1, 1, 0, 0, 9),
		mat(dims(2, 3, 2, 2), ones(24)...))
	assertLit(t, mat(dims(3, 4, 2), int64(1), 2, 5, 6, 7, 8, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17,
		18, 19, 20, 21, 21, 22, 23, 24), out)

	out = evalText(t, withComps(addComp("s64"), `
  x = s64[2,3,4,2] parameter(0)
  i = s64[2,2,3,2] parameter(1)
  u = s64[2,2,3,2,2] parameter(2)
  ROOT s = s64[2,3,4,2] scatter(x, i, u), update_window_dims={3,4}, inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={1}, scatter_dims_to_operand_dims={2,1}, index_vector_dim=3, to_apply=add`),
		mat(dims(2, 3, 4, 2), seqS64(48, 1)...),
		mat(dims(2, 2, 3, 2), int64(0), 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9, 0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0),
		mat(dims(2, 2, 3, 2, 2), ones(48)...))
	assertLit(t, mat(dims(2, 3, 4, 2), int64(3), 4, 6, 7, 6, 7, 7, 8, 9, 10, 11, 12, 15, 16, 17, 18,
		17, 18, 19, 20, 22, 23, 24, 25,
		25, 26, 28, 29, 30, 31, 31, 32, 35, 36, 38, 39, 38, 39, 39, 40,
		41, 42, 44, 45, 46, 47, 47, 48), out)
}
