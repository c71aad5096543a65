package alloc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// planLimits: 16-byte alignment, 1 KiB bindings, 64 KiB blocks.
var planLimits = Limits{Alignment: 16, MaxBindingRange: 1 << 10, MaxBlockSize: 1 << 16}

func TestPlanOverlappingAndDisjointRanges(t *testing.T) {
	// Buffers with disjoint lifetimes share addresses; the arena honours that.
	p := Plan{Ranges: []PlanRange{
		{Name: "param.0", Offset: 0, Size: 1024},
		{Name: "add.1", Offset: 1024, Size: 512},
		{Name: "mul.2", Offset: 0, Size: 256}, // reuses param.0's bytes
		{Name: "dot.3", Offset: 256, Size: 1000},
		{Name: "empty", Offset: 1536, Size: 0},
		{Name: "other", Block: 1, Offset: 32, Size: 100},
	}}
	require.NoError(t, p.Validate(planLimits))
	assert.Equal(t, []int64{1536, 132}, p.BlockSizes())
	assert.Equal(t, int64(1668), p.TotalBytes())
}

func TestPlanManyRandomRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var p Plan
	var want int64
	for i := range 500 {
		r := PlanRange{Name: fmt.Sprint("t", i), Offset: 16 * rng.Int64N(2048), Size: 1 + rng.Int64N(1024)}
		want = max(want, r.End())
		p.Ranges = append(p.Ranges, r)
	}
	require.NoError(t, p.Validate(planLimits))
	assert.Equal(t, want, p.TotalBytes(), "total size is the largest end")
}

func TestPlanRejectsNamingTheRange(t *testing.T) {
	cases := []struct {
		r    PlanRange
		want error
		msg  string
	}{
		{PlanRange{Name: "conv.7", Offset: 24, Size: 64}, ErrMisaligned, `plan range 1 ("conv.7" block 0 [24, +64)): arena: misaligned offset: range [24, +64): offset 24 is not a multiple of 16`},
		{PlanRange{Name: "big", Offset: 0, Size: 2048}, ErrBindingTooLarge, "size 2048 exceeds 1024 and the range is not marked Split"},
		{PlanRange{Name: "huge", Offset: 1 << 16, Size: 16, Split: true}, ErrBlockTooLarge, "past the max block size 65536"},
		{PlanRange{Name: "hugeaddr", Offset: 0, Size: 1<<16 + 16, Addressed: true}, ErrBlockTooLarge, "past the max block size 65536"},
		{PlanRange{Name: "both", Offset: 0, Size: 2048, Split: true, Addressed: true}, ErrInvalid, "split across bindings or addressed, not both"},
		{PlanRange{Name: "neg", Offset: -16, Size: 16}, ErrInvalid, "negative offset or size"},
		{PlanRange{Name: "nosize", Offset: 0, Size: -1}, ErrInvalid, "negative offset or size"},
		{PlanRange{Name: "noblock", Block: -1, Size: 16}, ErrInvalid, "negative block index"},
	}
	for _, c := range cases {
		p := Plan{Ranges: []PlanRange{{Offset: 0, Size: 16}, c.r}}
		err := p.Validate(planLimits)
		require.ErrorIs(t, err, c.want, c.r.Name)
		var pe *PlanError
		require.True(t, errors.As(err, &pe), c.r.Name)
		assert.Equal(t, 1, pe.Index)
		assert.Contains(t, err.Error(), c.msg)
		assert.Contains(t, err.Error(), fmt.Sprintf("%q", c.r.Name))
	}
}

func TestPlanReportsEveryBadRange(t *testing.T) {
	p := Plan{Ranges: []PlanRange{{Offset: 8, Size: 16}, {Offset: 16, Size: 16}, {Offset: 40, Size: 16}}}
	err := p.Validate(planLimits)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "plan range 0")
	assert.NotContains(t, err.Error(), "plan range 1")
	assert.Contains(t, err.Error(), "plan range 2")
}

// TestPlanAddressedRangeMayExceedOneBinding: a range kernels reach by device
// address needs no binding, only its block.
func TestPlanAddressedRangeMayExceedOneBinding(t *testing.T) {
	p := Plan{Ranges: []PlanRange{{Name: "big", Offset: 16, Size: 5000, Addressed: true}}}
	require.NoError(t, p.Validate(planLimits))
	p.Ranges[0].Addressed = false
	require.ErrorIs(t, p.Validate(planLimits), ErrBindingTooLarge)
}

func TestPlanSplitRangeMayExceedOneBinding(t *testing.T) {
	p := Plan{Ranges: []PlanRange{{Name: "big", Offset: 16, Size: 5000, Split: true}}}
	require.NoError(t, p.Validate(planLimits))
}

func TestBindingsSplitsAtAlignedChunks(t *testing.T) {
	parts, err := planLimits.Bindings(Span{Offset: 32, Size: 2500}, 4)
	require.NoError(t, err)
	assert.Equal(t, []Span{{32, 1024}, {1056, 1024}, {2080, 452}}, parts)

	// A 12-byte granule (vec3 of f32) and 16-byte alignment: chunks of lcm 48.
	assert.Equal(t, int64(1008), planLimits.BindingChunk(12))
	parts, err = planLimits.Bindings(Span{Offset: 0, Size: 1200}, 12)
	require.NoError(t, err)
	assert.Equal(t, []Span{{0, 1008}, {1008, 192}}, parts)
	for _, p := range parts {
		assert.Zero(t, p.Offset%16)
		assert.LessOrEqual(t, p.Size, planLimits.MaxBindingRange)
	}
}

func TestBindingsWholeEmptyAndErrors(t *testing.T) {
	parts, err := planLimits.Bindings(Span{Offset: 64, Size: 1024}, 1)
	require.NoError(t, err)
	assert.Equal(t, []Span{{64, 1024}}, parts, "a range that fits is one binding")
	parts, err = planLimits.Bindings(Span{Offset: 64, Size: 0}, 1)
	require.NoError(t, err)
	assert.Empty(t, parts)

	_, err = planLimits.Bindings(Span{Offset: 8, Size: 16}, 1)
	require.ErrorIs(t, err, ErrMisaligned)
	_, err = planLimits.Bindings(Span{Offset: 0, Size: 4096}, 2000)
	require.ErrorIs(t, err, ErrBindingTooLarge)
	assert.Contains(t, err.Error(), "cannot be split: granule 2000")
	_, err = planLimits.Bindings(Span{Offset: 0, Size: 1 << 17}, 4)
	require.ErrorIs(t, err, ErrBlockTooLarge)
}

// TestBindingsLavapipeLimits uses the real lavapipe numbers: a 300 MiB tensor at
// an offset needs three bindings of at most 128 MiB.
func TestBindingsLavapipeLimits(t *testing.T) {
	l := Limits{Alignment: 16, MaxBindingRange: 128 << 20, MaxBlockSize: 2 << 30}
	parts, err := l.Bindings(Span{Offset: 1 << 20, Size: 300 << 20}, 16)
	require.NoError(t, err)
	require.Len(t, parts, 3)
	assert.Equal(t, Span{1 << 20, 128 << 20}, parts[0])
	assert.Equal(t, Span{129 << 20, 128 << 20}, parts[1])
	assert.Equal(t, Span{257 << 20, 44 << 20}, parts[2])
}
