package cpuref

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// Known-answer vectors of Random123 (D. E. Shaw Research), file tests/kat_vectors,
// lines "philox4x32 10 …" and "threefry2x32 20 …": counter words, key words, then
// the expected output words, all hex.
var philoxKAT = []struct{ ctr, key, out []uint32 }{
	{[]uint32{0, 0, 0, 0}, []uint32{0, 0}, []uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
	{[]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, []uint32{0xffffffff, 0xffffffff},
		[]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
	{[]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, []uint32{0xa4093822, 0x299f31d0},
		[]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
}

var threefryKAT = []struct{ ctr, key, out []uint32 }{
	{[]uint32{0, 0}, []uint32{0, 0}, []uint32{0x6b200159, 0x99ba4efe}},
	{[]uint32{0xffffffff, 0xffffffff}, []uint32{0xffffffff, 0xffffffff}, []uint32{0x1cb996fc, 0xbb002be7}},
	{[]uint32{0x243f6a88, 0x85a308d3}, []uint32{0x13198a2e, 0x03707344}, []uint32{0xc4923a9c, 0x483df7a0}},
}

func TestPhiloxKnownAnswers(t *testing.T) {
	for _, v := range philoxKAT {
		got := philox4x32([4]uint32(v.ctr), [2]uint32(v.key))
		assert.Equal(t, v.out, got[:], "ctr %x key %x", v.ctr, v.key)
	}
}

func TestThreefryKnownAnswers(t *testing.T) {
	for _, v := range threefryKAT {
		got := threefry2x32([2]uint32(v.ctr), [2]uint32(v.key))
		assert.Equal(t, v.out, got[:], "ctr %x key %x", v.ctr, v.key)
	}
}

// rngBits runs one rng-bit-generator and returns (new state, bits).
func rngBits(t *testing.T, alg string, state []uint64, bits string) ([]uint64, *hlo.Literal) {
	t.Helper()
	st := vec(state...)
	out := evalText(t, `HloModule rng
ENTRY e {
  s = `+st.Shape().String()+` parameter(0)
  ROOT r = (`+st.Shape().String()+`, `+bits+`) rng-bit-generator(s), algorithm=`+alg+`
}`, st)
	next, err := hlo.Values[uint64](out.Elems()[0])
	require.NoError(t, err)
	return next, out.Elems()[1]
}

// The whole op on the known-answer inputs: the state [key, counter…] is laid out
// as XLA's expander reads it (docs/cpuref.md).
func TestRngBitGeneratorKnownAnswers(t *testing.T) {
	// Philox, u64[3]: key state[0], 128-bit counter (state[1], state[2]).
	v := philoxKAT[2]
	key := uint64(v.key[1])<<32 | uint64(v.key[0])
	lo, hi := uint64(v.ctr[1])<<32|uint64(v.ctr[0]), uint64(v.ctr[3])<<32|uint64(v.ctr[2])
	next, bits := rngBits(t, "rng_philox", []uint64{key, lo, hi}, "u32[4]")
	assertLit(t, vec(v.out...), bits)
	assert.Equal(t, []uint64{key, lo + 1, hi}, next, "one block drawn")

	// rng_default is Philox; u64[2] reverses the counter words: (state[1], state[0]).
	next, bits = rngBits(t, "rng_default", []uint64{0, 0}, "u32[2,2]")
	assertLit(t, mat(dims(2, 2), philoxKAT[0].out...), bits)
	assert.Equal(t, []uint64{0, 1}, next)

	// 64-bit elements take the word pairs (0,1) and (2,3) of each block, low first.
	_, bits = rngBits(t, "rng_philox", []uint64{0, 0, 0}, "u64[2]")
	o := philoxKAT[0].out
	assertLit(t, vec(uint64(o[1])<<32|uint64(o[0]), uint64(o[3])<<32|uint64(o[2])), bits)

	// Threefry: key state[0], counter state[1]; a 64-bit element is one block.
	w := threefryKAT[2]
	key, ctr := uint64(w.key[1])<<32|uint64(w.key[0]), uint64(w.ctr[1])<<32|uint64(w.ctr[0])
	next, bits = rngBits(t, "rng_three_fry", []uint64{key, ctr}, "u64[]")
	assertLit(t, scalar(uint64(w.out[1])<<32|uint64(w.out[0])), bits)
	assert.Equal(t, []uint64{key, ctr + 1}, next)

	// 32-bit elements pair up along the split dimension: u32[2] is one block's words;
	// the counter wraps modulo 2^64.
	all := ^uint64(0)
	next, bits = rngBits(t, "rng_three_fry", []uint64{all, all}, "s32[2]")
	o = threefryKAT[1].out
	assertLit(t, vec(int32(o[0]), int32(o[1])), bits)
	assert.Equal(t, []uint64{all, 0}, next)
}

// The element order of larger outputs, from the (known-answer-checked) block
// functions and the layout rules.
func TestRngBitGeneratorLayout(t *testing.T) {
	// Philox u32[6]: blocks 0 and 1, four words each, the last two words dropped;
	// the 128-bit counter carries into its high word.
	all := ^uint64(0)
	next, bits := rngBits(t, "rng_philox", []uint64{7, all, 5}, "u32[6]")
	b0 := philox4x32([4]uint32{0xffffffff, 0xffffffff, 5, 0}, [2]uint32{7, 0})
	b1 := philox4x32([4]uint32{0, 0, 6, 0}, [2]uint32{7, 0})
	assertLit(t, vec(b0[0], b0[1], b0[2], b0[3], b1[0], b1[1]), bits)
	assert.Equal(t, []uint64{7, 1, 6}, next)

	// Threefry u32[3,2]: split dimension 1 (the first even one); element (i, j) is
	// word j of block i.
	next, bits = rngBits(t, "rng_three_fry", []uint64{9, 100}, "u32[3,2]")
	var want []uint32
	for i := range uint64(3) {
		w := threefry2x32([2]uint32{uint32(100 + i), 0}, [2]uint32{9, 0})
		want = append(want, w[0], w[1])
	}
	assertLit(t, mat(dims(3, 2), want...), bits)
	assert.Equal(t, []uint64{9, 103}, next)

	// Threefry u32[3]: no even dimension, split the largest; elements 0,1 are block
	// 0's words, element 2 block 1's first word.
	next, bits = rngBits(t, "rng_three_fry", []uint64{0, 0}, "u32[3]")
	w1 := threefry2x32([2]uint32{1, 0}, [2]uint32{0, 0})
	o := threefryKAT[0].out
	assertLit(t, vec(o[0], o[1], w1[0]), bits)
	assert.Equal(t, []uint64{0, 2}, next)
}

// JAX's cu_threefry2x32 custom-call, evaluated through its HLO decomposition
// (hlo.Builder.Threefry2x32), on the known-answer vectors, one per element.
func TestCustomCallThreefry2x32KnownAnswers(t *testing.T) {
	var k0, k1, x0, x1, y0, y1 []uint32
	for _, v := range threefryKAT {
		k0, k1, x0, x1 = append(k0, v.key[0]), append(k1, v.key[1]), append(x0, v.ctr[0]), append(x1, v.ctr[1])
		y0, y1 = append(y0, v.out[0]), append(y1, v.out[1])
	}
	for _, target := range []string{"cu_threefry2x32", "cu_threefry2x32_ffi", "hip_threefry2x32", "hip_threefry2x32_ffi"} {
		out := evalText(t, `HloModule tf
ENTRY e {
  k0 = u32[3] parameter(0)
  k1 = u32[3] parameter(1)
  x0 = u32[3] parameter(2)
  x1 = u32[3] parameter(3)
  ROOT y = (u32[3], u32[3]) custom-call(k0, k1, x0, x1), custom_call_target="`+target+`", api_version=API_VERSION_STATUS_RETURNING
}`, vec(k0...), vec(k1...), vec(x0...), vec(x1...))
		assertLit(t, vec(y0...), out.Elems()[0], target)
		assertLit(t, vec(y1...), out.Elems()[1], target)
	}
}
