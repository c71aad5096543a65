package device_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
)

var texelSpec = device.KernelSpec{Bindings: 1, PushConstantSize: 4,
	Texels: []device.TexelFormat{device.TexelRGBA32U, device.TexelRGBA16U}}

// texelInput is one buffer holding both texel ranges of texel.comp at aligned
// offsets that are not zero, with garbage around them, and what the kernel must
// read from it.
type texelInput struct {
	n          uint32   // texels the kernel reads
	buf        []byte   // the whole buffer
	f          []uint32 // the rgba32ui texels' bits, 4 per texel
	u          []uint32 // the rgba16ui texels' values, 4 per texel
	fOff, uOff int64    // the ranges; F is n texels, U runs to the buffer's end
	uTexels    uint32   // texels from uOff to the end
}

func newTexelInput(n uint32) texelInput {
	in := texelInput{n: n, fOff: 48}
	in.uOff = in.fOff + 16*int64(n) + 32 // a gap of garbage between the ranges
	in.uTexels = n + 3                   // U's view is longer than what is read
	in.buf = make([]byte, in.uOff+8*int64(in.uTexels))
	for i := range in.buf {
		in.buf[i] = 0xab
	}
	// The view is an integer format: float bits come back exactly, a denormal and a
	// NaN's payload included (a float format's texel fetch may flush or quiet them).
	specials := []float32{float32(math.Copysign(0, -1)), float32(math.Inf(1)), -3.4e38, 1e-30,
		math.Float32frombits(1), math.Float32frombits(0x7fa01234), math.Float32frombits(0xffc00001)}
	for i := range 4 * n {
		v := float32(i)*0.75 - 100
		if int(i) < len(specials) {
			v = specials[i]
		}
		in.f = append(in.f, math.Float32bits(v))
		binary.LittleEndian.PutUint32(in.buf[in.fOff+4*int64(i):], in.f[i])
	}
	for i := range 4 * in.uTexels {
		v := uint16(i*1733 + 7)
		if i == 1 {
			v = 0xffff
		}
		if i < 4*n {
			in.u = append(in.u, uint32(v))
		}
		binary.LittleEndian.PutUint16(in.buf[in.uOff+2*int64(i):], v)
	}
	return in
}

// want is what texel.comp writes: texel i's float bits then its 16-bit values, then
// the two views' sizes.
func (in texelInput) want() []uint32 {
	var y []uint32
	for i := range int(in.n) {
		y = append(y, in.f[4*i:4*i+4]...)
		y = append(y, in.u[4*i:4*i+4]...)
	}
	return append(y, in.n, in.uTexels)
}

func (in texelInput) bindings(src, dst *device.Buffer) []device.BufferRange {
	return []device.BufferRange{
		{Buffer: dst},
		{Buffer: src, Offset: in.fOff, Size: 16 * int64(in.n)},
		{Buffer: src, Offset: in.uOff}, // Size 0: to the end
	}
}

func dispatchTexel(cb *device.CommandBuffer, k *device.Kernel, in texelInput, src, dst *device.Buffer) error {
	return cb.Dispatch(k, in.bindings(src, dst), devicetest.U32Bytes(in.n), (in.n+63)/64, 1, 1)
}

func readWords(t testing.TB, b *device.Buffer, n int) []uint32 {
	t.Helper()
	out := make([]byte, 4*n)
	require.NoError(t, b.Read(0, out))
	return devicetest.BytesU32(out)
}

func TestTexelCaps(t *testing.T) {
	d := devicetest.Open(t)
	c := d.Caps()
	t.Logf("maxTexelBufferElements %d, minTexelBufferOffsetAlignment %d, maxPerStageDescriptorSampledImages %d, maxPerStageResources %d, texel formats %v",
		c.MaxTexelBufferElements, c.MinTexelBufferOffsetAlignment, c.MaxSampledImagesPerStage, c.MaxResourcesPerStage, c.TexelFormats)
	// Vulkan's required minimums (the spec's limit table, and its format table for
	// these two formats' UNIFORM_TEXEL_BUFFER feature).
	assert.GreaterOrEqual(t, c.MaxTexelBufferElements, int64(65536))
	assert.Positive(t, c.MinTexelBufferOffsetAlignment)
	assert.LessOrEqual(t, c.MinTexelBufferOffsetAlignment, int64(256))
	assert.GreaterOrEqual(t, c.MaxSampledImagesPerStage, 16)
	assert.GreaterOrEqual(t, c.MaxResourcesPerStage, 128)
	assert.True(t, c.SupportsTexel(device.TexelRGBA32U))
	assert.True(t, c.SupportsTexel(device.TexelRGBA16U))
	assert.True(t, c.SupportsTexel(device.TexelR32U))
	assert.True(t, c.SupportsTexel(device.TexelR16U))
	assert.False(t, c.SupportsTexel(0))
	assert.Equal(t, int64(16), device.TexelRGBA32U.Bytes())
	assert.Equal(t, int64(8), device.TexelRGBA16U.Bytes())
	assert.Equal(t, int64(0), device.TexelFormat(0).Bytes())
	assert.Equal(t, "rgba32ui", device.TexelRGBA32U.String())
	assert.Equal(t, "rgba16ui", device.TexelRGBA16U.String())
	assert.Equal(t, int64(4), device.TexelR32U.Bytes())
	assert.Equal(t, int64(2), device.TexelR16U.Bytes())
	assert.Equal(t, "r32ui", device.TexelR32U.String())
	assert.Equal(t, "r16ui", device.TexelR16U.String())
	assert.Equal(t, "TexelFormat(9)", device.TexelFormat(9).String())
	if c.Driver.Name == "llvmpipe" {
		assert.Equal(t, int64(134217728), c.MaxTexelBufferElements)
		assert.Equal(t, int64(16), c.MinTexelBufferOffsetAlignment)
		assert.Equal(t, 128, c.MaxSampledImagesPerStage)
		assert.Equal(t, 128, c.MaxResourcesPerStage)
	}
}

// TestTexelFetch reads an rgba32ui and an rgba16ui range of one buffer, each at a
// non-zero offset among garbage, through uniform texel buffers: every value arrives
// bit for bit, and each view's size is its range's (the second to the buffer's end).
func TestTexelFetch(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, texelSPV, texelSpec)
	for _, staging := range []bool{false, true} {
		device.SetForceStaging(d, staging)
		in := newTexelInput(100)
		src := newBuffer(t, d, int64(len(in.buf)))
		require.NoError(t, src.Write(0, in.buf))
		want := in.want()
		dst := newBuffer(t, d, 4*int64(len(want)))
		cb := newCommandBuffer(t, d)
		require.NoError(t, cb.Begin())
		require.NoError(t, dispatchTexel(cb, k, in, src, dst))
		require.NoError(t, cb.End())
		require.NoError(t, d.Submit(context.Background(), cb))
		assert.Equal(t, want, readWords(t, dst, len(want)), "staging %v", staging)
	}
}

// TestTexelFetchScalar reads the same ranges through single-channel views (r32ui,
// r16ui): texel i is element i, and the fetch's other components are (0, 0, 1).
func TestTexelFetchScalar(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, texelSPV, device.KernelSpec{Bindings: 1, PushConstantSize: 4,
		Texels: []device.TexelFormat{device.TexelR32U, device.TexelR16U}})
	in := newTexelInput(100)
	n := 4 * in.n // elements of the rgba32ui range, read one per texel
	src := newBuffer(t, d, int64(len(in.buf)))
	require.NoError(t, src.Write(0, in.buf))
	var want []uint32
	for i := range n {
		want = append(want, in.f[i], 0, 0, 1, in.u[i], 0, 0, 1)
	}
	want = append(want, n, 4*in.uTexels)
	dst := newBuffer(t, d, 4*int64(len(want)))
	cb := newCommandBuffer(t, d)
	require.NoError(t, cb.Begin())
	require.NoError(t, cb.Dispatch(k, in.bindings(src, dst), devicetest.U32Bytes(n), (n+63)/64, 1, 1))
	require.NoError(t, cb.End())
	require.NoError(t, d.Submit(context.Background(), cb))
	assert.Equal(t, want, readWords(t, dst, len(want)))
}

func TestTexelKernelErrors(t *testing.T) {
	d := devicetest.Open(t)
	caps := d.Caps()
	many := make([]device.TexelFormat, caps.MaxSampledImagesPerStage+1)
	for i := range many {
		many[i] = device.TexelRGBA32U
	}
	_, err := d.NewKernel(texelSPV, device.KernelSpec{Bindings: 1, PushConstantSize: 4, Texels: many})
	assert.ErrorContains(t, err, fmt.Sprintf("device: NewKernel(main): %d uniform texel buffers; the device allows %d (maxPerStageDescriptorSampledImages)",
		len(many), caps.MaxSampledImagesPerStage))
	_, err = d.NewKernel(texelSPV, device.KernelSpec{Bindings: 1, PushConstantSize: 4, Texels: []device.TexelFormat{device.TexelRGBA32U, 0}})
	assert.ErrorContains(t, err, "binding 2 (uniform texel buffer): unknown format TexelFormat(0)")
	_, err = d.NewKernel(texelSPV, device.KernelSpec{Bindings: 1, PushConstantSize: 4, Texels: []device.TexelFormat{device.TexelRGBA32U, 7}})
	assert.ErrorContains(t, err, "binding 2 (uniform texel buffer): unknown format TexelFormat(7)")

	device.EditCaps(d, func(c *device.Caps) { c.MaxResourcesPerStage = 2 })
	_, err = d.NewKernel(texelSPV, texelSpec)
	assert.ErrorContains(t, err, "1 storage and 2 uniform texel buffers; the device allows 2 in all (maxPerStageResources)")
	device.EditCaps(d, func(c *device.Caps) {
		c.MaxResourcesPerStage = caps.MaxResourcesPerStage
		c.TexelFormats = []device.TexelFormat{device.TexelRGBA32U}
	})
	_, err = d.NewKernel(texelSPV, texelSpec)
	assert.ErrorContains(t, err, "binding 2 (uniform texel buffer): the device cannot read rgba16ui texels")
	device.EditCaps(d, func(c *device.Caps) { c.TexelFormats = caps.TexelFormats })

	spec := texelSpec
	spec.Texels = slices.Clone(texelSpec.Texels)
	k := newKernel(t, d, texelSPV, spec)
	spec.Texels[0] = device.TexelRGBA16U
	assert.Equal(t, texelSpec.Texels, k.Spec().Texels, "NewKernel keeps its own copy")
	k.Spec().Texels[1] = device.TexelRGBA32U
	assert.Equal(t, texelSpec.Texels, k.Spec().Texels, "Spec returns a copy")
}

// TestTexelDispatchErrors: each bad texel range is refused before anything is
// recorded, naming the binding, and leaves no view behind; a good one then records.
func TestTexelDispatchErrors(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, texelSPV, texelSpec)
	src := newBuffer(t, d, 1028)
	dst := newBuffer(t, d, 1024)
	cb := newCommandBuffer(t, d)
	require.NoError(t, cb.Begin())
	dispatch := func(f, u device.BufferRange) error {
		return cb.Dispatch(k, []device.BufferRange{{Buffer: dst}, f, u}, devicetest.U32Bytes(1), 1, 1, 1)
	}
	f := device.BufferRange{Buffer: src, Offset: 16, Size: 64}
	u := device.BufferRange{Buffer: src, Offset: 96, Size: 64}
	align := d.Caps().MinTexelBufferOffsetAlignment
	cases := []struct {
		f, u device.BufferRange
		want string
	}{
		{device.BufferRange{Buffer: src, Offset: align / 2, Size: 64}, u,
			fmt.Sprintf("device: Dispatch(main): binding 1 (uniform texel buffer, rgba32ui): offset %d is not a multiple of minTexelBufferOffsetAlignment %d", align/2, align)},
		{device.BufferRange{Buffer: src, Offset: 16, Size: 24}, u,
			"device: Dispatch(main): binding 1 (uniform texel buffer, rgba32ui): size 24 is not a multiple of the 16-byte texel"},
		{f, device.BufferRange{Buffer: src, Offset: 16}, // 1012 bytes to the end
			"device: Dispatch(main): binding 2 (uniform texel buffer, rgba16ui): size 1012 is not a multiple of the 8-byte texel"},
		{f, device.BufferRange{Buffer: src, Offset: 1024, Size: 8},
			"device: Dispatch(main): binding 2 (uniform texel buffer, rgba16ui): range [1024, 1032) outside the 1028-byte buffer"},
		{f, device.BufferRange{Buffer: nil, Size: 8},
			"device: Dispatch(main): binding 2 (uniform texel buffer, rgba16ui): nil buffer or a buffer of another device"},
	}
	for _, c := range cases {
		assert.EqualError(t, dispatch(c.f, c.u), c.want)
	}
	assert.EqualError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: dst}, f}, devicetest.U32Bytes(1), 1, 1, 1),
		"device: Dispatch(main): 2 bindings, the kernel has 3 (1 storage and 2 uniform texel buffers)")
	require.NoError(t, dispatch(f, device.BufferRange{Buffer: src, Offset: 16, Size: 8 * 5}), "5 texels: within the real limit")
	device.EditCaps(d, func(c *device.Caps) { c.MaxTexelBufferElements = 4 })
	assert.EqualError(t, dispatch(f, device.BufferRange{Buffer: src, Offset: 16, Size: 8 * 5}),
		"device: Dispatch(main): binding 2 (uniform texel buffer, rgba16ui): 5 texels exceed maxTexelBufferElements 4")
	assert.Equal(t, 2, device.TexelViews(cb), "only the good dispatch made views")
	require.NoError(t, cb.End())
}

// TestTexelViewsLifetime: a recording's views live until it is discarded — by Begin,
// Reset, EnableTimestamps or Close — and not longer. The layer (devicetest) reports
// any view left at device destruction, and any view destroyed in use or after its
// buffer.
func TestTexelViewsLifetime(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, texelSPV, texelSpec)
	in := newTexelInput(64)
	src := newBuffer(t, d, int64(len(in.buf)))
	require.NoError(t, src.Write(0, in.buf))
	want := in.want()
	dst := newBuffer(t, d, 4*int64(len(want)))
	cb := newCommandBuffer(t, d)
	record := func(dispatches int) {
		t.Helper()
		require.NoError(t, cb.Begin())
		for range dispatches {
			require.NoError(t, dispatchTexel(cb, k, in, src, dst))
			require.NoError(t, cb.Barrier())
		}
		require.NoError(t, cb.End())
	}
	record(3)
	assert.Equal(t, 6, device.TexelViews(cb))
	require.NoError(t, d.Submit(context.Background(), cb))
	require.NoError(t, d.Submit(context.Background(), cb), "replay reuses the views")
	assert.Equal(t, want, readWords(t, dst, len(want)))
	record(1)
	assert.Equal(t, 2, device.TexelViews(cb), "Begin released the earlier recording's views")
	require.NoError(t, cb.Reset())
	assert.Equal(t, 0, device.TexelViews(cb), "Reset")
	record(2)
	require.NoError(t, cb.EnableTimestamps(2))
	assert.Equal(t, 0, device.TexelViews(cb), "EnableTimestamps")

	// A buffer closed while recorded is freed when the recording goes: after its views.
	own := newTexelInput(8)
	ownSrc, err := d.NewBuffer(int64(len(own.buf)))
	require.NoError(t, err)
	require.NoError(t, ownSrc.Write(0, own.buf))
	require.NoError(t, cb.Begin())
	require.NoError(t, dispatchTexel(cb, k, own, ownSrc, dst))
	require.NoError(t, cb.End())
	p, err := d.SubmitAsync(cb)
	require.NoError(t, err)
	require.NoError(t, ownSrc.Close())
	require.NoError(t, cb.Reset(), "waits for the submission, then frees views and buffer")
	require.NoError(t, p.Wait(context.Background()))
	assert.Equal(t, own.want(), readWords(t, dst, len(own.want())))

	record(2)
	require.NoError(t, cb.Close())
	assert.Equal(t, 0, device.TexelViews(cb), "Close")

	// A recording left open is freed by the device's Close (devicetest).
	left := newCommandBuffer(t, d)
	require.NoError(t, left.Begin())
	require.NoError(t, dispatchTexel(left, k, in, src, dst))
	require.NoError(t, left.End())
	assert.Equal(t, 2, device.TexelViews(left))
	assert.Equal(t, 4, d.LiveObjects(), "the kernel, src, dst and left: the closed buffer and command buffer are gone")
}

// TestTexelConcurrent records and submits texel dispatches from several goroutines,
// each with its own command buffer and output, all reading one input buffer: under
// -race and the validation layer, view creation and destruction race with nothing.
func TestTexelConcurrent(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, texelSPV, texelSpec)
	in := newTexelInput(130)
	src := newBuffer(t, d, int64(len(in.buf)))
	require.NoError(t, src.Write(0, in.buf))
	want := in.want()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() { errs <- texelWorker(d, k, in, src, want, 20) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func texelWorker(d *device.Device, k *device.Kernel, in texelInput, src *device.Buffer, want []uint32, rounds int) error {
	dst, err := d.NewBuffer(4 * int64(len(want)))
	if err != nil {
		return err
	}
	defer dst.Close()
	cb, err := d.NewCommandBuffer()
	if err != nil {
		return err
	}
	defer cb.Close()
	out := make([]byte, 4*len(want))
	for range rounds {
		if err := errors.Join(cb.Begin(), dispatchTexel(cb, k, in, src, dst), cb.End()); err != nil {
			return err
		}
		if err := errors.Join(dst.Write(0, make([]byte, len(out))), d.Submit(context.Background(), cb), dst.Read(0, out)); err != nil {
			return err
		}
		if !slices.Equal(devicetest.BytesU32(out), want) {
			return errors.New("wrong texel values under concurrency")
		}
	}
	return nil
}

// TestTexelDescriptorPoolRoom records more uniform texel buffer descriptors than one
// descriptor pool holds, eight per set (the layout may declare bindings the shader
// does not use): the command buffer counts texel room apart from storage room and
// takes new pools in time. lavapipe does not enforce a pool's room, nor does the
// layer check it (since maintenance1 running out is a legal VK_ERROR_OUT_OF_POOL_MEMORY),
// so the test also asserts that the pools had room for everything allocated from them.
func TestTexelDescriptorPoolRoom(t *testing.T) {
	d := devicetest.Open(t)
	spec := texelSpec
	spec.Texels = append(slices.Clone(texelSpec.Texels), slices.Repeat([]device.TexelFormat{device.TexelRGBA16U}, 6)...)
	k := newKernel(t, d, texelSPV, spec)
	in := newTexelInput(16)
	src := newBuffer(t, d, int64(len(in.buf)))
	require.NoError(t, src.Write(0, in.buf))
	want := in.want()
	dst := newBuffer(t, d, 4*int64(len(want)))
	bindings := in.bindings(src, dst)
	for range 6 {
		bindings = append(bindings, device.BufferRange{Buffer: src, Offset: in.uOff})
	}
	cb := newCommandBuffer(t, d)
	require.NoError(t, cb.Begin())
	const dispatches = 100
	for range dispatches {
		require.NoError(t, cb.Dispatch(k, bindings, devicetest.U32Bytes(in.n), 1, 1, 1))
		require.NoError(t, cb.Barrier())
	}
	require.NoError(t, cb.End())
	assert.Equal(t, 8*dispatches, device.TexelViews(cb))
	storage, texels := device.DescriptorRoom(cb)
	assert.GreaterOrEqual(t, storage, int64(dispatches))
	assert.GreaterOrEqual(t, texels, int64(8*dispatches))
	require.NoError(t, d.Submit(context.Background(), cb))
	assert.Equal(t, want, readWords(t, dst, len(want)))
}
