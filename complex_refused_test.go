package vkxla_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// TestNoGPUOpsAreRefused: a module with an op the op table marks NoGPU (none at
// present), c128 (an fft of c128 among them)
// values, or c64 in an op without a complex kernel fails Compile with
// ErrUnsupported naming the instruction, never a panic or a wrong kernel; cpuref
// evaluates it.
func TestNoGPUOpsAreRefused(t *testing.T) {
	rt := newRuntime(t)
	for _, text := range []string{
		"HloModule m\nadd {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ROOT s = c64[] add(a, b)\n}\nENTRY e {\n  x = c64[4] parameter(0)\n  z = c64[] constant((0, 0))\n  ROOT n = c64[2] reduce-window(x, z), window={size=3}, to_apply=add\n}",
		"HloModule m\nENTRY e {\n  a = c128[12] parameter(0)\n  ROOT f = c128[12] fft(a), fft_type=FFT, fft_length={12}\n}",
		"HloModule m\nENTRY e {\n  a = c128[2,2] parameter(0)\n  ROOT t = c128[2,2] transpose(a), dimensions={1,0}\n}",
	} {
		m, err := hlo.ParseModule(text)
		require.NoError(t, err)
		_, err = rt.Compile(context.Background(), m)
		require.Error(t, err)
		require.True(t, errors.Is(err, vkxla.ErrUnsupported), "%v", err)
		require.True(t, strings.Contains(err.Error(), "no complex kernel") || strings.Contains(err.Error(), "c128"), "%v", err)
	}
}
