package cpuref

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// Tests of hlo.LiteralsEqual and hlo.LiteralsClose, the comparison helpers cpuref's
// and the GPU path's tests share.

func TestLiteralsEqual(t *testing.T) {
	a := mat(dims(2, 2), float32(1), nan32, negZ32, 4)
	assert.NoError(t, hlo.LiteralsEqual(a, a.Clone()))

	otherNaN := mat(dims(2, 2), float32(1), math.Float32frombits(0x7fc00001), negZ32, 4)
	assert.NoError(t, hlo.LiteralsEqual(a, otherNaN), "any two NaNs are equal")

	plusZero := mat(dims(2, 2), float32(1), nan32, 0, 4)
	err := hlo.LiteralsEqual(a, plusZero)
	require.Error(t, err, "-0 and +0 differ")
	assert.Contains(t, err.Error(), "index [1,0]: got -0, want 0 (1 of 4 elements differ)")

	err = hlo.LiteralsEqual(mat(dims(2, 3), int32(1), 2, 3, 4, 5, 6), mat(dims(2, 3), int32(1), 2, 0, 4, 0, 0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "index [0,2]: got 3, want 0 (3 of 6 elements differ)")

	err = hlo.LiteralsEqual(vec(float32(1)), vec(1.0))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "shape mismatch: got f32[1], want f64[1]")

	assert.NoError(t, hlo.LiteralsEqual(vec(true, false), vec(true, false)))
	assert.Error(t, hlo.LiteralsEqual(vec(true), vec(false)))
	assert.NoError(t, hlo.LiteralsEqual(scalar(int8(-1)), scalar(int8(-1))))

	tup := hlo.TupleLiteral(vec(float32(1)), scalar(int32(2)))
	assert.NoError(t, hlo.LiteralsEqual(tup, tup.Clone()))
	err = hlo.LiteralsEqual(tup, hlo.TupleLiteral(vec(float32(1)), scalar(int32(3))))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tuple element 1")

	assert.NoError(t, hlo.LiteralsEqual(mat[float32](dims(0, 2)), mat[float32](dims(0, 2))))
}

func TestLiteralsClose(t *testing.T) {
	want := vec(float32(100), 0, nan32, inf32, -inf32)
	assert.NoError(t, hlo.LiteralsClose(vec(float32(100.5), 0.001, nan32, inf32, -inf32), want, 0.01, 0.01))

	// |got-want| <= atol + rtol*|want|: 100 + 1.5 exceeds 0.01 + 1.
	err := hlo.LiteralsClose(vec(float32(101.5), 0, nan32, inf32, -inf32), want, 0.01, 0.01)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "index [0]: got 101.5, want 100")

	assert.Error(t, hlo.LiteralsClose(vec(float32(100), 0, 1, inf32, -inf32), want, 1, 1), "NaN only matches NaN")
	assert.Error(t, hlo.LiteralsClose(vec(float32(100), 0, nan32, 3e38, -inf32), want, 1, 1), "an infinity only matches itself")
	assert.Error(t, hlo.LiteralsClose(vec(float32(100), 0, nan32, -inf32, -inf32), want, 1, 1))

	// Integers compare exactly whatever the tolerance.
	assert.Error(t, hlo.LiteralsClose(vec(int32(1)), vec(int32(2)), 10, 10))
	assert.NoError(t, hlo.LiteralsClose(vec(int32(2)), vec(int32(2)), 0, 0))

	// Half types compare by value.
	assert.NoError(t, hlo.LiteralsClose(f16s(1.0009765625), f16s(1), 0, 1e-3))
	assert.Error(t, hlo.LiteralsClose(bf16s(1.0078125), bf16s(1), 0, 1e-3))
}
