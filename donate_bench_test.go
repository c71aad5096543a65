package vkxla_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// decodeStepSized is decodeStepHLO with a cache of t positions and a model width d.
func decodeStepSized(tb testing.TB, t, d int, aliased bool) *hlo.Module {
	tb.Helper()
	text := decodeStepHLO
	if !aliased {
		text = strings.Replace(text, "input_output_alias={ {1}: (3, {}, must-alias), {2}: (4, {}, must-alias) }, ", "", 1)
	}
	text = strings.NewReplacer("[32,32]", fmt.Sprintf("[%d,%d]", d, d), "[16,32]", fmt.Sprintf("[%d,%d]", t, d),
		"[1,32]", fmt.Sprintf("[1,%d]", d), "[1,16]", fmt.Sprintf("[1,%d]", t)).Replace(text)
	m, err := hlo.ParseModule(text)
	require.NoError(tb, err)
	return m
}

// BenchmarkDecodeStepMemory runs a decode step (weights d×d twice, KV caches t×d
// twice) with its outputs kept on the device and fed back, three ways in one
// process:
//
//   - copying: no aliases; every input is copied into the executable's arena and
//     every output out of it (what RunOnDevice did before donation);
//   - donated: the caches donated and aliased, the weights borrowed;
//   - donated-new-memory: as donated, but each step's caches are fresh uploads, so
//     every step binds new memory and records the command buffers again (the
//     worst case of the per-binding recording cache).
//
// Metrics: device-bytes is the most memory the runtime holds after a step, the
// step's inputs closed (arena plans and tensors in use: deterministic),
// x-copying-bytes its ratio to copying's;
// ns/op is a step's wall time. VKXLA_VALIDATION=0 for figures.
func BenchmarkDecodeStepMemory(b *testing.B) {
	const t, d = 1024, 256
	rt := newRuntime(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 3))
	in := []*hlo.Literal{
		randomLiteral(rng, f32(d, d), unitDomain), randomLiteral(rng, f32(d, d), unitDomain), randomLiteral(rng, f32(1, d), unitDomain),
		randomLiteral(rng, f32(t, d), unitDomain), randomLiteral(rng, f32(t, d), unitDomain), hlo.ScalarLiteral(int32(0)),
	}
	var copyingBytes int64
	variants := []struct {
		name    string
		aliased bool
		fresh   bool
		opts    []vkxla.CompileOption
	}{
		{"copying", false, false, nil},
		{"donated", true, false, []vkxla.CompileOption{vkxla.WithBorrowedInputs(0, 1)}},
		{"donated-new-memory", true, true, []vkxla.CompileOption{vkxla.WithBorrowedInputs(0, 1)}},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			exe, err := rt.Compile(ctx, decodeStepSized(b, t, d, v.aliased), append(v.opts, vkxla.WithoutCache())...)
			require.NoError(b, err)
			defer exe.Close()
			dev := upload(b, rt, in[:5]...)
			defer closeAll(b, dev[:3])
			kc, vc := dev[3], dev[4]
			var held int64
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if v.fresh {
					fresh := upload(b, rt, in[3], in[4])
					closeAll(b, []*vkxla.DeviceTensor{kc, vc})
					kc, vc = fresh[0], fresh[1]
				}
				outs, err := exe.RunOnDevice(ctx, dev[0], dev[1], dev[2], kc, vc, hlo.ScalarLiteral(int32(i%t)))
				require.NoError(b, err)
				if !v.aliased { // the step's input caches are garbage now
					closeAll(b, []*vkxla.DeviceTensor{kc, vc})
				}
				st := rt.MemoryStats()
				held = max(held, st.ExecutableBytes+st.Tensors.BytesInUse)
				require.NoError(b, outs[0].Close())
				kc, vc = outs[1], outs[2]
			}
			b.StopTimer()
			closeAll(b, []*vkxla.DeviceTensor{kc, vc})
			b.ReportMetric(float64(held), "device-bytes")
			if v.name == "copying" {
				copyingBytes = held
			}
			if copyingBytes > 0 {
				b.ReportMetric(float64(held)/float64(copyingBytes), "x-copying-bytes")
			}
		})
	}
}
