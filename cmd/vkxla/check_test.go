package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
)

// TestCheckAgrees: -check on a correct program runs every kernel alone and finds
// nothing.
func TestCheckAgrees(t *testing.T) {
	devicetest.Open(t)
	var out bytes.Buffer
	require.NoError(t, run([]string{"run", "-check"}, &out), out.String())
	assert.Contains(t, out.String(), "check: every kernel agrees with cpuref on cpuref's inputs")
}

// breaking wraps the device run so that any one-kernel module holding an
// instruction named like broken returns a wrong first element: a miscompiled
// kernel, simulated.
func breaking(broken string) func(k *checker, km *hlo.Module, args []*hlo.Literal) ([]*hlo.Literal, error) {
	return func(k *checker, km *hlo.Module, args []*hlo.Literal) ([]*hlo.Literal, error) {
		got, err := runOnDevice(k, km, args)
		if err != nil {
			return nil, err
		}
		for _, c := range km.Computations {
			for _, in := range c.Instructions {
				if strings.HasPrefix(in.Name, broken) {
					got[0].SetFloat64(0, got[0].Float64(0)+1)
					return got, nil
				}
			}
		}
		return got, nil
	}
}

// TestCheckNamesTheBrokenKernel: a wrong kernel is named, and one inside a fusion
// is found by running the fusion unfused; the kernels after it are not blamed,
// since each runs on cpuref's inputs.
func TestCheckNamesTheBrokenKernel(t *testing.T) {
	devicetest.Open(t)
	rt, err := vkxla.NewRuntime()
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	m, err := hlo.ParseModule(exampleMLP)
	require.NoError(t, err)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer exe.Close()
	opt := exe.OptimizedModule()
	fusion := opt.Entry.Root // probs: the whole softmax is one row kernel
	require.Equal(t, hlo.OpFusion, fusion.Op, hlo.Print(opt))
	inputs, err := inputSource{kind: "random", seed: 1}.inputs(m, cpuref.Limits{})
	require.NoError(t, err)
	for _, tc := range []struct {
		broken, want string
		blamed       int // the kernel, then the instruction inside the fusion
	}{
		{"logits", "a kernel differs from cpuref: logits", 1},
		{"shifted", "a kernel differs from cpuref: shifted.1, inside fusion probs", 2},
	} {
		var out bytes.Buffer
		k := newChecker(context.Background(), &out, rt, cpuref.Limits{})
		k.onDevice = breaking(tc.broken)
		err := k.kernels(opt, inputs)
		require.ErrorIs(t, err, errFoundMismatch, out.String())
		assert.Contains(t, err.Error(), tc.want, out.String())
		assert.Equal(t, tc.blamed, strings.Count(out.String(), "differs from cpuref ("), "only the broken kernel (and then its instruction) is blamed:\n%s", out.String())
	}
}
