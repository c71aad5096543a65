package hlo_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

func TestFingerprintIgnoresNamesNotStructure(t *testing.T) {
	a, err := hlo.ParseModule(canonicalA)
	require.NoError(t, err)
	b, err := hlo.ParseModule(canonicalB)
	require.NoError(t, err)
	assert.Equal(t, hlo.Fingerprint(a), hlo.Fingerprint(b), "names do not matter")
	assert.Contains(t, hlo.Print(a), "%sum", "Fingerprint must not rename the caller's module")
	assert.Contains(t, hlo.Print(a), "constant(0)", "Fingerprint must not drop the caller's constants")

	c, err := hlo.ParseModule(canonicalA)
	require.NoError(t, err)
	c.Entry.Root.Operands[1].Attrs.Literal = hlo.ScalarLiteral(float32(1))
	assert.NotEqual(t, hlo.Fingerprint(a), hlo.Fingerprint(c), "a different constant is a different module")

	// Same bytes, another shape: f32[] 0 and s32[] 0 are both four zero bytes.
	d, err := hlo.ParseModule(canonicalA)
	require.NoError(t, err)
	d.Entry.Root.Operands[1].Attrs.Literal = hlo.ScalarLiteral(int32(0))
	assert.NotEqual(t, hlo.Fingerprint(a), hlo.Fingerprint(d), "a constant's shape counts, not only its bytes")

	e, err := hlo.ParseModule(canonicalFusion)
	require.NoError(t, err)
	assert.NotEqual(t, hlo.Fingerprint(a), hlo.Fingerprint(e))
}

// TestFingerprintOfLargeConstantAllocatesLittle: a 64 MiB constant is hashed, not
// printed (printing it costs hundreds of MB of text and seconds).
func TestFingerprintOfLargeConstantAllocatesLittle(t *testing.T) {
	const n = 16 << 20 // f32 elements: 64 MiB
	lit := hlo.NewLiteral(hlo.MakeShape(hlo.F32, n))
	for i := 0; i < n; i += 4096 {
		lit.SetFloat64(i, float64(i))
	}
	b := hlo.NewBuilder("big")
	x := b.Parameter(hlo.MakeShape(hlo.F32, n), "x")
	m, err := b.Build(b.Add(x, b.Constant(lit)))
	require.NoError(t, err)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fp := hlo.Fingerprint(m)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated to fingerprint a 64 MiB constant")

	lit.SetFloat64(n-1, 1) // one element of 16M differs
	assert.NotEqual(t, fp, hlo.Fingerprint(m))
}
