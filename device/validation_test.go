package device_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
)

// openWatched opens a validated device that collects messages instead of failing.
func openWatched(t *testing.T) (*device.Device, func() []string) {
	t.Helper()
	if !devicetest.Validation() {
		t.Skip("VKXLA_VALIDATION=0")
	}
	devicetest.UseLayerSettings()
	var mu sync.Mutex
	var seen []string
	d, err := device.Open(device.Options{Validation: true, OnMessage: func(sev, msg string) {
		mu.Lock()
		seen = append(seen, sev+": "+msg)
		mu.Unlock()
	}})
	if err != nil {
		t.Skipf("no validated Vulkan device: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestSyncValidationCatchesMissingBarrier proves the layer's synchronisation
// validation is on: a dispatch that reads what the previous one wrote, without a
// barrier between them, is a read-after-write hazard. (The 1.3.239 layer does not
// flag two read-write dispatches of one kernel, so the kernel here has read-only and
// write-only bindings.)
func TestSyncValidationCatchesMissingBarrier(t *testing.T) {
	d, seen := openWatched(t)
	k := newKernel(t, d, addSPV, device.KernelSpec{Bindings: 3, PushConstantSize: 8, SpecConstants: []uint32{64}})
	a, b, c := newBuffer(t, d, 256), newBuffer(t, d, 256), newBuffer(t, d, 256)
	cb := newCommandBuffer(t, d)
	push := devicetest.U32Bytes(64, 0)
	require.NoError(t, cb.Begin())
	require.NoError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: a}, {Buffer: b}, {Buffer: c}}, push, 1, 1, 1))
	require.NoError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: c}, {Buffer: b}, {Buffer: a}}, push, 1, 1, 1))
	require.NoError(t, cb.End())
	msgs := seen()
	assert.True(t, anyContains(msgs, "SYNC-HAZARD-READ-AFTER-WRITE"), "messages: %v", msgs)
	assert.Equal(t, msgs, d.ValidationErrors())

	// With the barrier the same recording is clean.
	before := len(seen())
	require.NoError(t, cb.Begin())
	require.NoError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: a}, {Buffer: b}, {Buffer: c}}, push, 1, 1, 1))
	require.NoError(t, cb.Barrier())
	require.NoError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: c}, {Buffer: b}, {Buffer: a}}, push, 1, 1, 1))
	require.NoError(t, cb.End())
	require.NoError(t, d.Submit(context.Background(), cb))
	assert.Len(t, seen(), before)
}

// TestValidationReportsLeaks proves leak reports reach the messenger: the device is
// destroyed behind the binding's back of a buffer, through the test-only hook.
func TestValidationReportsLeaks(t *testing.T) {
	d, seen := openWatched(t)
	_, err := d.NewBuffer(256)
	require.NoError(t, err)
	device.LeakOnClose(d)
	require.NoError(t, d.Close())
	assert.True(t, anyContains(seen(), "has not been destroyed"), "messages: %v", seen())
}

func anyContains(msgs []string, s string) bool {
	for _, m := range msgs {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}
