package codegen

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

func lowerErr(t *testing.T, c *hlo.Computation, target Target) error {
	t.Helper()
	_, err := Lower(c, target)
	require.Error(t, err)
	return err
}

func addComp(t *testing.T, dt hlo.DType, dims ...int64) *hlo.Computation {
	b := newCB(t, "add_"+dt.String())
	return b.build(b.simple(hlo.OpAdd, b.param(s(dt, dims...)), b.param(s(dt, dims...))))
}

func TestErrorsMissingFeatures(t *testing.T) {
	cases := []struct {
		dt    hlo.DType
		strip func(*Target)
		want  string
	}{
		{hlo.F64, func(t *Target) { t.Float64 = false }, "f64, which needs 64-bit floats (shaderFloat64)"},
		{hlo.S64, func(t *Target) { t.Int64 = false }, "s64, which needs 64-bit integers (shaderInt64)"},
		{hlo.U64, func(t *Target) { t.Int64 = false }, "u64, which needs 64-bit integers"},
		{hlo.S8, func(t *Target) { t.StorageBuffer8Bit = false }, "s8, which is stored as 8-bit integers and needs shaderInt8 and storageBuffer8BitAccess"},
		{hlo.F16, func(t *Target) { t.StorageBuffer16Bit = false }, "f16, which is stored as 16-bit integers"},
		{hlo.BF16, func(t *Target) { t.Int16 = false }, "bf16, which is stored as 16-bit integers"},
	}
	for _, c := range cases {
		t.Run(c.dt.String(), func(t *testing.T) {
			target := LavapipeTarget()
			c.strip(&target)
			err := lowerErr(t, addComp(t, c.dt, 4), target)
			require.Contains(t, err.Error(), "add")
			require.Contains(t, err.Error(), c.want)
		})
	}
	// pred needs 8-bit storage too, and a dtype used only inside a reducer counts.
	target := LavapipeTarget()
	target.Int8 = false
	b := newCB(t, "compare")
	err := lowerErr(t, b.build(b.op(hlo.OpCompare, hlo.Attributes{Direction: hlo.CmpLT}, nil, b.param(s(hlo.F32, 3)), b.param(s(hlo.F32, 3)))), target)
	require.Contains(t, err.Error(), "pred")
	target = LavapipeTarget()
	target.Float64 = false
	err = lowerErr(t, reduceComp(t, hlo.F64, []int64{4, 4}, []int64{1}, hlo.OpAdd), target)
	require.Contains(t, err.Error(), "f64")
}

// TestErrorsTooManyBindings: without device addresses a large tensor takes one
// binding per piece; a kernel past the device's bindings per stage is refused
// with the count, the piece size and the limit.
func TestErrorsTooManyBindings(t *testing.T) {
	target := LavapipeTarget()
	target.MaxStorageBufferRange = 1 << 10
	target.BufferDeviceAddress = false
	target.MaxStorageBuffers = 16
	err := lowerErr(t, addComp(t, hlo.F32, 2048), target) // 8 KiB each: 8 pieces × 3
	require.Contains(t, err.Error(), "needs 24 storage-buffer bindings")
	require.Contains(t, err.Error(), "one per 1024 bytes")
	require.Contains(t, err.Error(), "the device allows 16")
	// Below the split granule no piece size exists.
	target.MaxStorageBufferRange = 128
	err = lowerErr(t, addComp(t, hlo.F32, 64), target)
	require.Contains(t, err.Error(), "below the split granule 256")
}

func TestErrorsIndexWidth(t *testing.T) {
	target := LavapipeTarget()
	target.Int64 = false
	target.MaxStorageBufferRange = 0
	err := lowerErr(t, addComp(t, hlo.U8, 1<<31), target)
	require.Contains(t, err.Error(), "needs 64-bit index arithmetic")
	// With Int64 the same kernel uses 64-bit indices.
	target.Int64 = true
	p, err := Lower(addComp(t, hlo.U8, 1<<31), target)
	require.NoError(t, err)
	validate(t, p)
}

func TestErrorsLoopBudget(t *testing.T) {
	// A dot with a 100000-long contraction per output element cannot stay within
	// lavapipe's loop limiter.
	b := newCB(t, "long_dot")
	dd := &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}
	c := b.build(b.op(hlo.OpDot, hlo.Attributes{Dot: dd}, nil, b.param(s(hlo.S32, 1, 100000)), b.param(s(hlo.S32, 100000, 1))))
	err := lowerErr(t, c, LavapipeTarget())
	require.Contains(t, err.Error(), "loop iterations in one invocation")
	// A target without the limiter accepts it.
	target := LavapipeTarget()
	target.MaxLoopIterations = 0
	lowerFor(t, c, target)
}

func TestErrorsMalformed(t *testing.T) {
	_, err := Lower(nil, LavapipeTarget())
	require.Error(t, err)
	_, err = Lower(&hlo.Computation{Name: "empty"}, LavapipeTarget())
	require.ErrorContains(t, err, "no root")
	// A tuple-shaped input.
	b := newCB(t, "tuple_param")
	p := b.param(hlo.MakeTuple(s(hlo.F32, 2), s(hlo.F32, 2)))
	err = lowerErr(t, b.build(p), LavapipeTarget())
	require.Contains(t, err.Error(), "kernels take and produce arrays")
	// An array constant too large to emit inline.
	big := hlo.NewLiteral(s(hlo.S32, maxInlineConstant+1))
	big.SetInt64(1, 7)
	b = newCB(t, "big_constant")
	err = lowerErr(t, b.build(b.constant(big)), LavapipeTarget())
	require.Contains(t, err.Error(), "too large to emit inline")
}

// A target with unset limits still lowers (Vulkan's guaranteed minimums are assumed).
func TestZeroLimits(t *testing.T) {
	target := Target{Float64: true, Int8: true, Int16: true, Int64: true, StorageBuffer8Bit: true, StorageBuffer16Bit: true}
	lowerFor(t, reduceComp(t, hlo.F32, []int64{3, 5000}, []int64{1}, hlo.OpAdd), target)
	lowerFor(t, addComp(t, hlo.F16, 1<<20), target)
	lowerFor(t, scatterComp(t, hlo.S32, 10, 5, hlo.OpAdd, false), target)
}
