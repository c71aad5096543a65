package vkxla

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
)

// TestRecordingsCachedByBinding: a loop that donates each step's output to the next
// step binds the same memory and replays one recording; each new binding records
// once more, and no more than maxRecordings are kept (their command buffers freed).
func TestRecordingsCachedByBinding(t *testing.T) {
	d := devicetest.Open(t)
	rt, err := NewRuntime(WithDevice(d))
	require.NoError(t, err)
	defer func() {
		require.NoError(t, rt.Close())
		require.Zero(t, d.LiveObjects())
	}()
	ctx := context.Background()
	b := hlo.NewBuilder("negate")
	m, err := b.Build(b.Negate(b.Parameter(hlo.MakeShape(hlo.F32, 64), "x")))
	require.NoError(t, err)
	exe, err := rt.Compile(ctx, m, WithDonation(0))
	require.NoError(t, err)
	defer exe.Close()
	c := exe.c
	lit := hlo.NewLiteral(hlo.MakeShape(hlo.F32, 64))
	x, err := rt.Upload(ctx, lit)
	require.NoError(t, err)
	for range 5 {
		outs, err := exe.RunOnDevice(ctx, x)
		require.NoError(t, err)
		x = outs[0]
	}
	assert.Len(t, c.recordings, 1, "the output takes the donated memory over: one binding")
	cbs := len(c.recordings[0].rec.cbs)

	var held []*DeviceTensor // keep each fresh tensor, so that every upload lands elsewhere
	for range maxRecordings + 2 {
		y, err := rt.Upload(ctx, lit)
		require.NoError(t, err)
		outs, err := exe.RunOnDevice(ctx, y)
		require.NoError(t, err)
		held = append(held, outs[0])
	}
	assert.Len(t, c.recordings, maxRecordings, "the oldest recordings are dropped")
	for _, r := range c.recordings {
		assert.Len(t, r.rec.cbs, cbs)
	}
	require.NoError(t, x.Close())
	for _, h := range held {
		require.NoError(t, h.Close())
	}
}
