package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
)

func TestNpyRoundTrip(t *testing.T) {
	for _, lit := range []*hlo.Literal{
		hlo.MustFromSlice([]int64{2, 3}, []float32{1, -2, 3.5, 0, float32(math.Inf(1)), 7}),
		hlo.MustFromSlice([]int64{4}, []int64{-1, 0, 1 << 40, 5}),
		hlo.MustFromSlice([]int64{}, []float64{math.Pi}),
		hlo.MustFromSlice([]int64{3}, []bool{true, false, true}),
	} {
		var buf bytes.Buffer
		require.NoError(t, writeNpy(&buf, lit))
		assert.Zero(t, (int64(buf.Len())-lit.Shape().ByteSize())%64, "data starts 64-byte aligned")
		got, err := readNpy(&buf, atMost(1<<20))
		require.NoError(t, err)
		require.NoError(t, hlo.LiteralsEqual(got, lit))
	}
}

func TestNpyRejects(t *testing.T) {
	header := func(dict string) []byte {
		h := dict + "\n"
		return append([]byte("\x93NUMPY\x01\x00"+string([]byte{byte(len(h)), 0})), h...)
	}
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{[]byte("PK\x03\x04 a zip"), "not a .npy file"},
		{header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }"), "dtype >f4 is not one vkxla reads"},
		{header("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }"), "dtype <c8"},
		// An object array (np.save of a list of lists of unequal length) used to be
		// "header lacks descr, fortran_order or shape" although it has all three.
		{header("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }"), "dtype |O (Python objects) is not one vkxla reads"},
		{header("{'descr': '<U5', 'fortran_order': False, 'shape': (3,), }"), "dtype <U5 (Unicode strings) is not one vkxla reads"},
		{header("{'descr': [('x', '<f4'), ('y', '<i4')], 'fortran_order': False, 'shape': (3,), }"), "a structured dtype [('x', '<f4'), ('y', '<i4')] is not one vkxla reads"},
		{header("{'fortran_order': False, 'shape': (3,), }"), "lacks descr, fortran_order or shape"},
		{header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }"), "Fortran-ordered"},
		{header("{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576, 1048576, 1048576), }"), "npy:"},
		{header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"), "f32[4] data: EOF"},
		{header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000,), }"), "larger than 100 bytes"},
	} {
		_, err := readNpy(bytes.NewReader(tc.data), atMost(100))
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestNpyInputs: parameters are found by name, else by number, and converted to
// the parameter's dtype; a file of other dims is an error naming both shapes.
func TestNpyInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lit *hlo.Literal) {
		var buf bytes.Buffer
		require.NoError(t, writeNpy(&buf, lit))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644))
	}
	write("x.npy", hlo.MustFromSlice([]int64{3}, []float64{0.5, -1.25, 3}))
	write("1.npy", hlo.MustFromSlice([]int64{2}, []int64{7, -2}))
	m, err := hlo.ParseModule("HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  y = s32[2] parameter(1)\n  ROOT t = (f32[3], s32[2]) tuple(x, y)\n}\n")
	require.NoError(t, err)
	src, err := parseInputSource("npy:"+dir, 1, false)
	require.NoError(t, err)
	ins, err := src.inputs(m, cpuref.Limits{})
	require.NoError(t, err)
	require.NoError(t, hlo.LiteralsEqual(ins[0], hlo.MustFromSlice([]int64{3}, []float32{0.5, -1.25, 3})))
	require.NoError(t, hlo.LiteralsEqual(ins[1], hlo.MustFromSlice([]int64{2}, []int32{7, -2})))

	write("1.npy", hlo.MustFromSlice([]int64{3}, []int64{7, -2, 1}))
	_, err = src.inputs(m, cpuref.Limits{})
	assert.ErrorContains(t, err, "s64[3], but parameter 1 (y) is s32[2]")
	_, err = parseInputSource("npz:"+dir, 1, false)
	assert.ErrorContains(t, err, "want random, ones or npy:DIR")
}

// TestRunReportsNaNs: where most outputs are NaN on both sides the run says the
// comparison is inconclusive instead of "agree"; -positive draws from a domain
// where the program is defined.
func TestRunReportsNaNs(t *testing.T) {
	devicetest.Open(t)
	text := "HloModule logs\nENTRY e {\n  x = f32[64] parameter(0)\n  ROOT l = f32[64] log(x)\n}\n"
	var out bytes.Buffer
	src, err := parseInputSource("ones", 1, false)
	require.NoError(t, err)
	neg := "HloModule negs\nENTRY e {\n  x = f32[64] parameter(0)\n  n = f32[64] negate(x)\n  ROOT l = f32[64] sqrt(n)\n}\n"
	require.NoError(t, runModule(&out, "negs.hlo", neg, runFlags{inputs: src}))
	assert.Contains(t, out.String(), "NaN: gpu 64, cpuref 64 of 64")
	assert.Contains(t, out.String(), "inconclusive: 64 of 64 are NaN on both sides")
	assert.NotContains(t, out.String(), "agree within")

	out.Reset()
	src, err = parseInputSource("random", 1, true)
	require.NoError(t, err)
	require.NoError(t, runModule(&out, "logs.hlo", text, runFlags{inputs: src}))
	assert.NotContains(t, out.String(), "NaN:")
	assert.Contains(t, out.String(), "agree within")
	assert.Contains(t, out.String(), "floats in [0.5, 1.5)")
}
