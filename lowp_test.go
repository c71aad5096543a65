package vkxla_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// TestLowPrecisionTypesAreRefused: until code generation handles s4, f8e4m3fn and
// the rest, planning a module that uses one fails up front with ErrUnsupported,
// naming the instruction and the type, whether the type is an input or made inside.
func TestLowPrecisionTypesAreRefused(t *testing.T) {
	dev := builtinLavapipe(t)
	for _, dt := range hlo.LowPrecisionDTypes {
		for _, inside := range []bool{false, true} {
			b := hlo.NewBuilder("lowp")
			var root *hlo.Instruction
			if inside {
				x := b.Parameter(hlo.MakeShape(hlo.F32, 4), "x")
				root = b.Convert(b.Convert(x, dt), hlo.F32)
			} else {
				root = b.Convert(b.Parameter(hlo.MakeShape(dt, 4), "x"), hlo.F32)
			}
			m, err := b.Build(root)
			require.NoError(t, err, dt.String())
			_, err = vkxla.PlanFor(context.Background(), m, dev, "")
			require.Error(t, err, dt.String())
			assert.True(t, errors.Is(err, vkxla.ErrUnsupported), "%v: %v", dt, err)
			assert.ErrorContains(t, err, "has "+dt.String()+" elements")
		}
	}
}
