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
// present), or c64 or c128 in an op without a complex kernel fails Compile with
// ErrUnsupported naming the instruction, never a panic or a wrong kernel; cpuref
// evaluates it. (c128 on a device without shaderFloat64: plan's
// TestComplexPlanning.)
func TestNoGPUOpsAreRefused(t *testing.T) {
	rt := newRuntime(t)
	for _, text := range []string{
		"HloModule m\nadd {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ROOT s = c64[] add(a, b)\n}\nge {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ra = f32[] real(a)\n  rb = f32[] real(b)\n  ROOT g = pred[] compare(ra, rb), direction=GE\n}\nENTRY e {\n  x = c64[6] parameter(0)\n  s = c64[2] parameter(1)\n  z = c64[] constant((0, 0))\n  ROOT n = c64[6] select-and-scatter(x, s, z), window={size=3 stride=3}, select=ge, scatter=add\n}",
		"HloModule m\nadd {\n  a = c128[] parameter(0)\n  b = c128[] parameter(1)\n  ROOT s = c128[] add(a, b)\n}\nge {\n  a = c128[] parameter(0)\n  b = c128[] parameter(1)\n  ra = f64[] real(a)\n  rb = f64[] real(b)\n  ROOT g = pred[] compare(ra, rb), direction=GE\n}\nENTRY e {\n  x = c128[6] parameter(0)\n  s = c128[2] parameter(1)\n  z = c128[] constant((0, 0))\n  ROOT n = c128[6] select-and-scatter(x, s, z), window={size=3 stride=3}, select=ge, scatter=add\n}",
	} {
		m, err := hlo.ParseModule(text)
		require.NoError(t, err)
		_, err = rt.Compile(context.Background(), m)
		require.Error(t, err)
		require.True(t, errors.Is(err, vkxla.ErrUnsupported), "%v", err)
		require.True(t, strings.Contains(err.Error(), "no complex kernel"), "%v", err)
	}
}
