package device_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
)

func newBuffer(t testing.TB, d *device.Device, size int64) *device.Buffer {
	t.Helper()
	b, err := d.NewBuffer(size)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

func newKernel(t testing.TB, d *device.Device, spv []byte, spec device.KernelSpec) *device.Kernel {
	t.Helper()
	k, err := d.NewKernel(spv, spec)
	require.NoError(t, err)
	t.Cleanup(func() { k.Close() })
	return k
}

func newCommandBuffer(t testing.TB, d *device.Device) *device.CommandBuffer {
	t.Helper()
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	t.Cleanup(func() { cb.Close() })
	return cb
}

var incSpec = device.KernelSpec{Bindings: 1, PushConstantSize: 4}

// recordInc records one x[i] += 1 over the first n words of buf.
func recordInc(t testing.TB, cb *device.CommandBuffer, k *device.Kernel, buf *device.Buffer, n uint32) {
	t.Helper()
	require.NoError(t, cb.Begin())
	require.NoError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: buf}}, devicetest.U32Bytes(n), (n+63)/64, 1, 1))
	require.NoError(t, cb.End())
}

func TestListAndCaps(t *testing.T) {
	d := devicetest.Open(t)
	all, err := device.List()
	require.NoError(t, err)
	require.NotEmpty(t, all)
	for _, c := range all {
		t.Logf("device %d: %s", c.Index, c)
	}
	c := d.Caps()
	t.Logf("opened: %s", d)
	t.Logf("subgroup %d (%d..%d) ops %s; shared %d; workgroup %v/%d; groups %v; storage range %d; alloc %d; align %d; push %d",
		c.SubgroupSize, c.MinSubgroupSize, c.MaxSubgroupSize, c.SubgroupOps, c.MaxSharedMemory, c.MaxWorkgroupSize,
		c.MaxWorkgroupInvocations, c.MaxWorkgroupCount, c.MaxStorageBufferRange, c.MaxMemoryAllocationSize,
		c.MinStorageBufferOffsetAlignment, c.MaxPushConstantsSize)
	t.Logf("heaps %+v types %+v unified %v; timestamps %v (%d bits, %g ns/tick)",
		c.MemoryHeaps, c.MemoryTypes, c.UnifiedMemory, c.TimestampsSupported, c.TimestampValidBits, c.TimestampPeriod)
	t.Logf("f16 %v f64 %v i8 %v i16 %v i64 %v sb16 %v sb8 %v atomic f32 add %v, size control %v, memory model %v",
		c.Float16, c.Float64, c.Int8, c.Int16, c.Int64, c.StorageBuffer16Bit, c.StorageBuffer8Bit,
		c.AtomicFloat32Add, c.SubgroupSizeControl, c.VulkanMemoryModel)
	assert.NotEmpty(t, c.Name)
	assert.GreaterOrEqual(t, c.APIVersion.Minor()+10*c.APIVersion.Major(), uint32(11), "Vulkan 1.1 or later")
	assert.Positive(t, c.SubgroupSize)
	assert.True(t, c.SubgroupOps.Has(device.SubgroupBasic), "basic subgroup ops: %s", c.SubgroupOps)
	assert.LessOrEqual(t, c.MinSubgroupSize, c.SubgroupSize)
	assert.GreaterOrEqual(t, c.MaxSubgroupSize, c.SubgroupSize)
	assert.GreaterOrEqual(t, c.MaxSharedMemory, 16384, "Vulkan's minimum maxComputeSharedMemorySize")
	assert.GreaterOrEqual(t, c.MaxWorkgroupInvocations, uint32(128))
	assert.GreaterOrEqual(t, c.MaxWorkgroupSize[0], uint32(128))
	assert.GreaterOrEqual(t, c.MaxWorkgroupCount[0], uint32(65535))
	assert.GreaterOrEqual(t, c.MaxStorageBufferRange, int64(1<<27))
	assert.Positive(t, c.MaxMemoryAllocationSize)
	assert.Positive(t, c.MinStorageBufferOffsetAlignment)
	assert.GreaterOrEqual(t, c.MaxPushConstantsSize, 128)
	require.NotEmpty(t, c.MemoryHeaps)
	require.NotEmpty(t, c.MemoryTypes)
	for _, h := range c.MemoryHeaps {
		assert.Positive(t, h.Size)
	}
	if c.TimestampsSupported {
		assert.Positive(t, c.TimestampPeriod)
	}
	assert.Equal(t, c.Float16 && c.Int8, c.ShaderFloat16Int8)
	assert.NotEmpty(t, c.Vendor.Name)
	fc := c.FloatControls
	t.Logf("float controls (known %v): denorm preserve %v, flush to zero %v, signed zero/inf/NaN preserve %v, RTE %v",
		fc.Known, fc.DenormPreserve, fc.DenormFlushToZero, fc.SignedZeroInfNanPreserve, fc.RoundingModeRTE)
	if c.APIVersion.Minor() >= 2 || c.APIVersion.Major() > 1 {
		assert.True(t, fc.Known, "Vulkan 1.2 reports float controls")
	}
}

// lavapipe's float controls (Mesa 22.3.6): signed zeros, infinities and NaNs are
// preserved at every width, subnormals are not at f32 and f64 — the facts codegen's
// integer handling of subnormals is for (docs/codegen.md).
func TestLavapipeFloatControls(t *testing.T) {
	d := devicetest.Open(t)
	c := d.Caps()
	if c.Driver.Name != "llvmpipe" {
		t.Skipf("these are lavapipe's facts; the device is %s", c)
	}
	fc := c.FloatControls
	require.True(t, fc.Known)
	assert.Equal(t, device.FloatWidths{F16: true, F32: true, F64: true}, fc.SignedZeroInfNanPreserve)
	assert.False(t, fc.DenormPreserve.F32, "shaderDenormPreserveFloat32")
	assert.False(t, fc.DenormPreserve.F64, "shaderDenormPreserveFloat64")
}

func TestSelector(t *testing.T) {
	all, err := device.List()
	if err != nil {
		t.Skipf("no Vulkan: %v", err)
	}
	_, err = device.Open(device.Options{Selector: "no such device name"})
	assert.ErrorIs(t, err, device.ErrNoDevice)
	_, err = device.Open(device.Options{Selector: "999"})
	assert.ErrorIs(t, err, device.ErrNoDevice)
	d, err := device.Open(device.Options{Selector: all[0].Name[:3]})
	require.NoError(t, err)
	defer d.Close()
	assert.Contains(t, d.Caps().Name, all[0].Name[:3])
}

func TestBufferRoundTrip(t *testing.T) {
	d := devicetest.Open(t)
	b := newBuffer(t, d, 4096)
	assert.EqualValues(t, 4096, b.Size())
	t.Logf("host-visible: %v", b.HostVisible())
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	require.NoError(t, b.Write(100, data))
	got := make([]byte, 1000)
	require.NoError(t, b.Read(100, got))
	assert.Equal(t, data, got)
	assert.Error(t, b.Write(4000, data), "out of range")
	assert.Error(t, b.Read(-1, got), "negative offset")
}

func TestStagedTransfers(t *testing.T) {
	d := devicetest.Open(t)
	device.SetForceStaging(d, true)
	b := newBuffer(t, d, 1<<16)
	require.False(t, b.HostVisible())
	data := make([]byte, 1<<16)
	for i := range data {
		data[i] = byte(i*13 + 1)
	}
	require.NoError(t, b.Write(0, data))
	got := make([]byte, 1000)
	require.NoError(t, b.Read(5000, got))
	assert.Equal(t, data[5000:6000], got)
}

func TestCopyAndFill(t *testing.T) {
	d := devicetest.Open(t)
	src, dst := newBuffer(t, d, 1024), newBuffer(t, d, 1024)
	words := make([]uint32, 256)
	for i := range words {
		words[i] = uint32(i)
	}
	require.NoError(t, src.Write(0, devicetest.U32Bytes(words...)))
	cb := newCommandBuffer(t, d)
	require.NoError(t, cb.Begin())
	require.NoError(t, cb.Fill(dst, 0, 1024, 0xdeadbeef))
	require.NoError(t, cb.Barrier())
	require.NoError(t, cb.Copy(src, 64, dst, 128, 256))
	require.NoError(t, cb.End())
	require.NoError(t, d.Submit(context.Background(), cb))

	out := make([]byte, 1024)
	require.NoError(t, dst.Read(0, out))
	got := devicetest.BytesU32(out)
	for i, v := range got {
		want := uint32(0xdeadbeef)
		if i >= 32 && i < 96 {
			want = uint32(i - 32 + 16)
		}
		require.Equal(t, want, v, "word %d", i)
	}
	require.NoError(t, cb.Begin())
	assert.Error(t, cb.Fill(dst, 2, 8, 0), "unaligned fill")
	assert.Error(t, cb.Copy(src, 0, src, 8, 16), "overlapping copy")
	assert.Error(t, cb.Copy(src, 1000, dst, 0, 100), "out of range")
	require.NoError(t, cb.End())
}

// TestAddKernel checks bindings, push constants and specialisation constants against
// the same computation in Go.
func TestAddKernel(t *testing.T) {
	d := devicetest.Open(t)
	const n = 1000
	const scale, bias = float32(2.5), float32(-1.25)
	k := newKernel(t, d, addSPV, device.KernelSpec{
		Bindings: 3, PushConstantSize: 8, SpecConstants: []uint32{64, math.Float32bits(scale)},
	})
	a, b, c := make([]float32, n), make([]float32, n), make([]float32, n+1)
	for i := range a {
		a[i], b[i] = float32(i)*0.5, float32(n-i)
	}
	c[n] = 42 // the kernel must not write past n
	ab, bb, cb := newBuffer(t, d, 4*n), newBuffer(t, d, 4*n), newBuffer(t, d, 4*(n+1))
	require.NoError(t, ab.Write(0, devicetest.F32Bytes(a...)))
	require.NoError(t, bb.Write(0, devicetest.F32Bytes(b...)))
	require.NoError(t, cb.Write(0, devicetest.F32Bytes(c...)))

	cmd := newCommandBuffer(t, d)
	require.NoError(t, cmd.Begin())
	push := append(devicetest.U32Bytes(n), devicetest.U32Bytes(math.Float32bits(bias))...)
	ranges := []device.BufferRange{{Buffer: ab}, {Buffer: bb}, {Buffer: cb, Size: 4 * n}}
	require.NoError(t, cmd.Dispatch(k, ranges, push, (n+63)/64, 1, 1))
	require.NoError(t, cmd.End())
	require.NoError(t, d.Submit(context.Background(), cmd))

	out := make([]byte, 4*(n+1))
	require.NoError(t, cb.Read(0, out))
	got := devicetest.BytesF32(out)
	for i := range n {
		require.Equal(t, a[i]*scale+b[i]+bias, got[i], "element %d", i)
	}
	assert.Equal(t, float32(42), got[n])
}

// TestReplay submits one recorded command buffer 1,000 times.
func TestReplay(t *testing.T) {
	d := devicetest.Open(t)
	const n = 256
	k := newKernel(t, d, incSPV, incSpec)
	buf := newBuffer(t, d, 4*n)
	require.NoError(t, buf.Write(0, make([]byte, 4*n)))
	cb := newCommandBuffer(t, d)
	recordInc(t, cb, k, buf, n)
	ctx := context.Background()
	for range 1000 {
		require.NoError(t, d.Submit(ctx, cb))
	}
	out := make([]byte, 4*n)
	require.NoError(t, buf.Read(0, out))
	for i, v := range devicetest.BytesU32(out) {
		require.EqualValues(t, 1000, v, "word %d", i)
	}
}

// TestReplayAsync keeps one command buffer submitted back to back with SubmitAsync:
// each submission waits for the previous one, and ordering between them comes from
// the barrier every recording starts with.
func TestReplayAsync(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, incSPV, incSpec)
	buf := newBuffer(t, d, 256)
	require.NoError(t, buf.Write(0, make([]byte, 256)))
	cb1, cb2 := newCommandBuffer(t, d), newCommandBuffer(t, d)
	recordInc(t, cb1, k, buf, 64)
	recordInc(t, cb2, k, buf, 64)
	var last *device.Pending
	for i := range 100 {
		cb := cb1
		if i%2 == 1 {
			cb = cb2
		}
		p, err := d.SubmitAsync(cb)
		require.NoError(t, err)
		last = p
	}
	require.NoError(t, last.Wait(context.Background()))
	assert.True(t, last.Done())
	require.NoError(t, d.WaitIdle())
	out := make([]byte, 256)
	require.NoError(t, buf.Read(0, out))
	assert.EqualValues(t, 100, devicetest.BytesU32(out)[63])
}

func TestTimestamps(t *testing.T) {
	d := devicetest.Open(t)
	if !d.Caps().TimestampsSupported {
		t.Skip("the device's queue has no timestamps")
	}
	k := newKernel(t, d, incSPV, incSpec)
	buf := newBuffer(t, d, 4*4096)
	cb := newCommandBuffer(t, d)
	require.NoError(t, cb.EnableTimestamps(3))
	require.NoError(t, cb.Begin())
	_, err := cb.Timestamps()
	assert.Error(t, err, "nothing submitted yet")
	require.NoError(t, cb.Timestamp(0))
	require.NoError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: buf}}, devicetest.U32Bytes(4096), 64, 1, 1))
	require.NoError(t, cb.Timestamp(1))
	assert.Error(t, cb.Timestamp(3), "index beyond the pool")
	require.NoError(t, cb.End())
	require.NoError(t, d.Submit(context.Background(), cb))
	ts, err := cb.Timestamps()
	require.NoError(t, err)
	require.Len(t, ts, 3)
	require.NoError(t, d.Submit(context.Background(), cb), "replay rewrites the timestamps")
	ts2, err := cb.Timestamps()
	require.NoError(t, err)
	assert.Greater(t, ts2[0], ts[1])
	assert.GreaterOrEqual(t, ts[1], ts[0])
	assert.Zero(t, ts[2], "never written")
	t.Logf("inc of 4096 words: %v of device time", ts[1]-ts[0])
}
