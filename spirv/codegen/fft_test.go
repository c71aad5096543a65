package codegen

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

func init() {
	opSamples[hlo.OpFft] = func(t *testing.T) *hlo.Computation {
		return fftComputation(t, "RFFT", "f32[8]", "c64[5]", "{8}")
	}
	for name, c := range fftCases {
		factCases["fft "+name] = fftModuleText(c.t, c.in, c.out, c.lengths)
	}
}

type fftCase struct{ t, in, out, lengths string }

// fftCases cover every fft_type in 1 to 3 dimensions, batched, with lengths 0, 1,
// 2 and larger powers of two.
var fftCases = map[string]fftCase{
	"fft 1d":        {"FFT", "c64[8]", "c64[8]", "{8}"},
	"fft batch":     {"FFT", "c64[3,16]", "c64[3,16]", "{16}"},
	"ifft 2d":       {"IFFT", "c64[2,4,8]", "c64[2,4,8]", "{4,8}"},
	"fft 3d":        {"FFT", "c64[4,2,8]", "c64[4,2,8]", "{4,2,8}"},
	"rfft 1d":       {"RFFT", "f32[16]", "c64[9]", "{16}"},
	"rfft 2d":       {"RFFT", "f32[3,8,4]", "c64[3,8,3]", "{8,4}"},
	"rfft 3d":       {"RFFT", "f32[2,4,8]", "c64[2,4,5]", "{2,4,8}"},
	"irfft 1d":      {"IRFFT", "c64[9]", "f32[16]", "{16}"},
	"irfft 2d":      {"IRFFT", "c64[8,3]", "f32[8,4]", "{8,4}"},
	"irfft 3d":      {"IRFFT", "c64[2,4,5]", "f32[2,4,8]", "{2,4,8}"},
	"fft length 1":  {"FFT", "c64[5,1]", "c64[5,1]", "{1}"},
	"rfft length 1": {"RFFT", "f32[3,1]", "c64[3,1]", "{1}"},
	"rfft length 0": {"RFFT", "f32[3,0]", "c64[3,1]", "{0}"},
	"irfft last 1":  {"IRFFT", "c64[4,1]", "f32[4,1]", "{4,1}"},
	"fft length 2":  {"FFT", "c64[2]", "c64[2]", "{2}"},
	"fft length 32": {"FFT", "c64[32]", "c64[32]", "{32}"},
	"irfft 64":      {"IRFFT", "c64[33]", "f32[64]", "{64}"},
	"fft empty":     {"FFT", "c64[0,8]", "c64[0,8]", "{8}"},
	"fft 12":        {"FFT", "c64[12]", "c64[12]", "{12}"},
	"rfft 6x10":     {"RFFT", "f32[6,10]", "c64[6,6]", "{6,10}"},
}

func fftModuleText(t, in, out, lengths string) string {
	return fmt.Sprintf("HloModule m\nENTRY e {\n  a = %s parameter(0)\n  ROOT f = %s fft(a), fft_type=%s, fft_length=%s\n}", in, out, t, lengths)
}

func fftComputation(tb testing.TB, t, in, out, lengths string) *hlo.Computation {
	m, err := hlo.ParseModule(fftModuleText(t, in, out, lengths))
	require.NoError(tb, err)
	return m.Entry
}

// TestFFTKernelsValidate: every case lowers to kernels that validate, one
// dispatch per pass (radix 16 while 16 points or more remain, then 8, 4 or 2: 1
// pass up to 16 points, 2 for 32 and 64), with the scratch buffers assignBuffers sizes: none
// where the output takes the one intermediate; else, from the last pass
// backwards, the output where it is a c64 array large enough, a scratch buffer
// otherwise (RFFT's full-length last axis, IRFFT's intermediates, which its f32
// output cannot hold). Each case runs in c128 (f64 for the real sides) too, with
// the same dispatches and scratch buffers of twice the bytes.
func TestFFTKernelsValidate(t *testing.T) {
	want := map[string]struct {
		dispatches int
		scratch    []int64
	}{
		"fft 1d":        {1, nil},
		"fft batch":     {1, nil},
		"ifft 2d":       {2, []int64{2 * 4 * 8 * 8}},
		"fft 3d":        {3, []int64{4 * 2 * 8 * 8}},
		"rfft 1d":       {1, nil},
		"rfft 2d":       {2, []int64{3 * 8 * 3 * 8}},
		"rfft 3d":       {3, []int64{2 * 4 * 5 * 8}},
		"irfft 1d":      {1, nil},
		"irfft 2d":      {2, []int64{8 * 3 * 8}},
		"irfft 3d":      {3, []int64{2 * 4 * 5 * 8, 2 * 4 * 5 * 8}},
		"fft length 1":  {1, nil},
		"rfft length 1": {1, nil},
		"rfft length 0": {1, nil},
		"irfft last 1":  {1, nil},
		"fft length 2":  {1, nil},
		"fft length 32": {2, []int64{32 * 8}},
		"irfft 64":      {2, []int64{64 * 8}},
		"fft empty":     {0, nil},
		// Bluestein: 12 convolves at m = 32 (2 forward, 2 inverse passes),
		// after K̂'s 3 dispatches (its line written, 2 passes) into scratch 2.
		"fft 12": {3 + 4, []int64{32 * 8, 32 * 8, 32 * 8}},
		// The last axis (10: m = 32, 4 passes, K̂ 3 dispatches), then axis 0
		// (6: m = 16, 2 passes, K̂ 2 dispatches); the output (6·6 c64) takes
		// the last axis' last pass.
		"rfft 6x10": {3 + 2 + 4 + 2, []int64{6 * 32 * 8, 6 * 32 * 8, 32 * 8, 16 * 8}},
	}
	wide := strings.NewReplacer("c64", "c128", "f32", "f64")
	for name, c := range fftCases {
		w, ok := want[name]
		require.True(t, ok, "no expectation for %s", name)
		t.Run(name, func(t *testing.T) {
			p := lowerOK(t, fftComputation(t, c.t, c.in, c.out, c.lengths))
			require.Len(t, p.Dispatches, w.dispatches)
			require.Equal(t, w.scratch, p.Scratch)
		})
		t.Run(name+" c128", func(t *testing.T) {
			p := lowerOK(t, fftComputation(t, c.t, wide.Replace(c.in), wide.Replace(c.out), c.lengths))
			require.Len(t, p.Dispatches, w.dispatches)
			var scratch []int64
			for _, b := range w.scratch {
				scratch = append(scratch, 2*b)
			}
			require.Equal(t, scratch, p.Scratch)
		})
	}
}

// TestFFTRefusals: c128 on a target without Float64 is refused; so is, on a
// target without Int64, a length that is not a power of two above 46340
// (Bluestein's k² needs 64 bits), naming the instruction and the length, with
// ErrUnsupported; with Int64 it lowers.
func TestFFTRefusals(t *testing.T) {
	noFloat64 := LavapipeTarget()
	noFloat64.Float64 = false
	noInt64 := LavapipeTarget()
	noInt64.Int64, noInt64.BufferDeviceAddress = false, false
	long := fftComputation(t, "FFT", "c64[50000]", "c64[50000]", "{50000}")
	for _, c := range []struct {
		c      *hlo.Computation
		target Target
		want   string
	}{
		{fftComputation(t, "FFT", "c128[8]", "c128[8]", "{8}"), noFloat64, "a (parameter) uses c128, which has f64 parts and needs 64-bit floats"},
		{long, noInt64, "f (fft) has fft_length={50000}; Bluestein's chirp of length 50000 needs 64-bit integers"},
	} {
		_, err := Lower(c.c, c.target)
		require.Error(t, err)
		require.Contains(t, err.Error(), c.want)
		require.True(t, errors.Is(err, hlo.ErrUnsupported), "%v", err)
		_, err = Facts(c.c, c.target)
		require.Error(t, err)
	}
	lowerOK(t, long)
}
