package hlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLowPrecisionDTypes(t *testing.T) {
	cases := []struct {
		dt             DType
		name           string
		bits, storage  int
		float, signed  bool
		bytesFor7Elems int64 // ceil(7 × storage / 8)
	}{
		{S4, "s4", 4, 4, false, true, 4},
		{U4, "u4", 4, 4, false, false, 4},
		{S2, "s2", 2, 2, false, true, 2},
		{U2, "u2", 2, 2, false, false, 2},
		{F8E4M3FN, "f8e4m3fn", 8, 8, true, false, 7},
		{F8E5M2, "f8e5m2", 8, 8, true, false, 7},
		{F8E4M3FNUZ, "f8e4m3fnuz", 8, 8, true, false, 7},
		{F8E5M2FNUZ, "f8e5m2fnuz", 8, 8, true, false, 7},
		{F8E4M3B11FNUZ, "f8e4m3b11fnuz", 8, 8, true, false, 7},
		{F8E3M4, "f8e3m4", 8, 8, true, false, 7},
		{F8E4M3, "f8e4m3", 8, 8, true, false, 7},
		{F8E8M0FNU, "f8e8m0fnu", 8, 8, true, false, 7},
		{F6E2M3FN, "f6e2m3fn", 6, 8, true, false, 7},
		{F6E3M2FN, "f6e3m2fn", 6, 8, true, false, 7},
		{F4E2M1FN, "f4e2m1fn", 4, 4, true, false, 4},
	}
	require.Len(t, LowPrecisionDTypes, len(cases))
	for i, c := range cases {
		assert.Equal(t, c.dt, LowPrecisionDTypes[i])
		assert.Equal(t, c.name, c.dt.String())
		got, err := ParseDType(c.name)
		require.NoError(t, err)
		assert.Equal(t, c.dt, got)
		assert.Equal(t, c.bits, c.dt.Bits(), c.name)
		assert.Equal(t, c.storage, c.dt.StorageBits(), c.name)
		assert.Equal(t, 1, c.dt.Size(), c.name)
		assert.Equal(t, c.storage < 8, c.dt.IsSubByte(), c.name)
		assert.Equal(t, c.float, c.dt.IsFloat(), c.name)
		assert.Equal(t, c.float, c.dt.IsLowPrecisionFloat(), c.name)
		assert.Equal(t, !c.float, c.dt.IsInteger(), c.name)
		assert.Equal(t, c.signed, c.dt.IsSigned(), c.name)
		assert.True(t, c.dt.IsNumeric() && c.dt.IsValid() && c.dt.IsLowPrecision(), c.name)
		assert.Equal(t, c.bytesFor7Elems, MakeShape(c.dt, 7).ByteSize(), c.name)
		assert.Equal(t, c.bytesFor7Elems, c.dt.ArrayBytes(7), c.name)
	}
	for _, dt := range AllDTypes {
		assert.False(t, dt.IsLowPrecision() || dt.IsSubByte(), dt.String())
		assert.False(t, dt.IsLowPrecisionFloat(), dt.String())
	}
	assert.Len(t, EveryArrayDType(), len(AllDTypes)+len(LowPrecisionDTypes))
	assert.Equal(t, int64(2+1), MakeTuple(MakeShape(S4, 3), MakeShape(U2, 1)).ByteSize(), "each element is its own buffer")
}

// TestPackedLiteralLayout checks XLA's packing: element i of an s4 array is the low
// nibble of byte i/2 when i is even and the high nibble when odd.
func TestPackedLiteralLayout(t *testing.T) {
	l, err := FromInt64s(S4, []int64{5}, []int64{1, -2, 7, -8, 9})
	require.NoError(t, err)
	// -2 = 0xe, -8 = 0x8, 9 wraps to -7 = 0x9.
	assert.Equal(t, []byte{0xe1, 0x87, 0x09}, l.Bytes())
	assert.Equal(t, []int64{1, -2, 7, -8, -7}, int64s(l))
	assert.Equal(t, uint64(0xe), l.Bits(1))

	u, err := FromInt64s(U2, []int64{5}, []int64{0, 1, 2, 3, 5})
	require.NoError(t, err)
	assert.Equal(t, []byte{0b11_10_01_00, 0b01}, u.Bytes())
	assert.Equal(t, []int64{0, 1, 2, 3, 1}, int64s(u))
	u.SetBits(2, 0xff) // only the element's own two bits change
	assert.Equal(t, []byte{0b11_11_01_00, 0b01}, u.Bytes())

	s2, err := FromInt64s(S2, []int64{4}, []int64{-2, -1, 0, 1})
	require.NoError(t, err)
	assert.Equal(t, []int64{-2, -1, 0, 1}, int64s(s2))
	assert.Equal(t, float64(-2), s2.Float64(0))

	f4, err := FromFloat64s(F4E2M1FN, []int64{3}, []float64{0.5, -6, 2.75})
	require.NoError(t, err)
	assert.Equal(t, []byte{0xf1, 0x05}, f4.Bytes(), "2.75 rounds to 3 (0b0101)")
	assert.Equal(t, []float64{0.5, -6, 3}, float64s(f4))

	f6, err := FromFloat64s(F6E2M3FN, []int64{2}, []float64{-7.5, 1})
	require.NoError(t, err)
	assert.Equal(t, []byte{0x3f, 0x08}, f6.Bytes(), "one byte per f6 element")
	f6.SetBits(1, 0xc8) // the top two bits of the byte are not the element's
	assert.Equal(t, uint64(0x08), f6.Bits(1))

	_, err = LiteralFromBytes(MakeShape(U4, 3), []byte{1})
	assert.ErrorContains(t, err, "needs 2 bytes")
	_, err = FromInt64s(F8E5M2, []int64{1}, []int64{1})
	assert.ErrorContains(t, err, "not an integer type")
	_, err = FromFloat64s(F8E5M2, []int64{2}, []float64{1})
	assert.ErrorContains(t, err, "needs 2 values")
}

func int64s(l *Literal) []int64 {
	out := make([]int64, l.NumElements())
	for i := range out {
		out[i] = l.Int64(i)
	}
	return out
}

func float64s(l *Literal) []float64 {
	out := make([]float64, l.NumElements())
	for i := range out {
		out[i] = l.Float64(i)
	}
	return out
}
