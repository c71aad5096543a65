package device_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
)

// TestGCStress creates pipelines, buffers and command buffers and submits work from
// two goroutines while a third runs the garbage collector in a loop: the failure mode
// of vulkan-go (C memory freed by a finalizer during the C call) and any Go pointer
// kept by C would show up here, under -race and cgocheck2.
func TestGCStress(t *testing.T) {
	d := devicetest.Open(t)
	stop := make(chan struct{})
	var gcs atomic.Int64
	var gcDone sync.WaitGroup
	gcDone.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
				gcs.Add(1)
			}
		}
	})
	var workers sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		workers.Go(func() { errs <- stressWorker(d, uint32(w+1), 50) })
	}
	workers.Wait()
	close(stop)
	gcDone.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("%d garbage collections ran alongside", gcs.Load())
}

// stressWorker builds everything anew each round and checks the result.
func stressWorker(d *device.Device, seed uint32, rounds int) error {
	for r := range rounds {
		k, err := d.NewKernel(append([]byte(nil), incSPV...), device.KernelSpec{Bindings: 1, PushConstantSize: 4})
		if err != nil {
			return err
		}
		buf, err := d.NewBuffer(1024)
		if err != nil {
			return err
		}
		if err := buf.Write(0, devicetest.U32Bytes(seed*1000+uint32(r))); err != nil {
			return err
		}
		cb, err := d.NewCommandBuffer()
		if err != nil {
			return err
		}
		err = errors.Join(cb.Begin(),
			cb.Dispatch(k, []device.BufferRange{{Buffer: buf, Size: 256}}, devicetest.U32Bytes(1), 1, 1, 1),
			cb.Barrier(),
			cb.Dispatch(k, []device.BufferRange{{Buffer: buf, Size: 256}}, devicetest.U32Bytes(1), 1, 1, 1),
			cb.End(),
			d.Submit(context.Background(), cb))
		out := make([]byte, 4)
		err = errors.Join(err, buf.Read(0, out), cb.Close(), k.Close(), buf.Close())
		if err != nil {
			return err
		}
		if got, want := devicetest.BytesU32(out)[0], seed*1000+uint32(r)+2; got != want {
			return errors.New("wrong result under GC stress")
		}
	}
	return nil
}

// TestCloseDeviceWithLiveObjects closes the device while a buffer, a kernel and a
// submitted command buffer are open: Close frees them (devicetest asserts that the
// layer reports no leak) and their later use returns ErrClosed.
func TestCloseDeviceWithLiveObjects(t *testing.T) {
	d := devicetest.Open(t)
	k, err := d.NewKernel(incSPV, incSpec)
	require.NoError(t, err)
	buf, err := d.NewBuffer(256)
	require.NoError(t, err)
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	recordInc(t, cb, k, buf, 64)
	p, err := d.SubmitAsync(cb)
	require.NoError(t, err)
	idle, err := d.NewCommandBuffer()
	require.NoError(t, err)
	require.NoError(t, idle.Begin()) // left recording

	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "second Close")
	assert.NoError(t, p.Wait(context.Background()), "the device finished the work before closing")
	assert.ErrorIs(t, buf.Write(0, []byte{1, 2, 3, 4}), device.ErrClosed)
	assert.ErrorIs(t, buf.Read(0, make([]byte, 4)), device.ErrClosed)
	assert.ErrorIs(t, cb.Begin(), device.ErrClosed)
	assert.ErrorIs(t, idle.End(), device.ErrClosed)
	_, err = d.SubmitAsync(cb)
	assert.ErrorIs(t, err, device.ErrClosed)
	_, err = d.NewBuffer(16)
	assert.ErrorIs(t, err, device.ErrClosed)
	_, err = d.NewKernel(incSPV, incSpec)
	assert.ErrorIs(t, err, device.ErrClosed)
	_, err = d.NewCommandBuffer()
	assert.ErrorIs(t, err, device.ErrClosed)
	assert.NoError(t, buf.Close())
	assert.NoError(t, k.Close())
	assert.NoError(t, cb.Close())
}

// TestCloseWhileInFlight closes a buffer and a kernel while a long dispatch that uses
// them runs: they must stay alive until it completes (the layer would report
// destroying objects in use), and the result must still arrive.
func TestCloseWhileInFlight(t *testing.T) {
	d := devicetest.Open(t)
	k, err := d.NewKernel(spinSPV, spinSpec)
	require.NoError(t, err)
	const groups, iters = 32, 20000 // tens of milliseconds on lavapipe
	buf, err := d.NewBuffer(4 * 64 * groups)
	require.NoError(t, err)
	require.NoError(t, buf.Write(0, make([]byte, 4*64*groups)))
	out := newBuffer(t, d, 64)
	cb := newCommandBuffer(t, d)
	require.NoError(t, cb.Begin())
	require.NoError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: buf}}, devicetest.U32Bytes(iters), groups, 1, 1))
	require.NoError(t, cb.Barrier())
	require.NoError(t, cb.Copy(buf, 4*64*groups-4, out, 0, 4))
	require.NoError(t, cb.End())
	p, err := d.SubmitAsync(cb)
	require.NoError(t, err)
	require.NoError(t, buf.Close())
	require.NoError(t, k.Close())
	assert.ErrorIs(t, buf.Write(0, []byte{0, 0, 0, 0}), device.ErrClosed)
	require.NoError(t, p.Wait(context.Background()))
	got := make([]byte, 4)
	require.NoError(t, out.Read(0, got))
	assert.Equal(t, lcg(0, iters), devicetest.BytesU32(got)[0])
	_, err = d.SubmitAsync(cb)
	assert.ErrorIs(t, err, device.ErrClosed, "the recording uses a closed buffer")
}

var spinSpec = device.KernelSpec{Bindings: 1, PushConstantSize: 4}

func lcg(v uint32, n int) uint32 {
	for range n {
		v = v*1664525 + 1013904223
	}
	return v
}

// TestSubmitCancelled: a context that ends during the wait returns its error while
// the work stays in flight and completes; an ended context submits nothing.
func TestSubmitCancelled(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, spinSPV, spinSpec)
	const groups, iters = 96, 60000 // about 0.2 s on lavapipe
	buf := newBuffer(t, d, 4*64*groups)
	require.NoError(t, buf.Write(0, make([]byte, 4*64*groups)))
	cb := newCommandBuffer(t, d)
	require.NoError(t, cb.Begin())
	require.NoError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: buf}}, devicetest.U32Bytes(iters), groups, 1, 1))
	require.NoError(t, cb.End())

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, d.Submit(cancelled, cb), context.Canceled)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	p, err := d.SubmitAsync(cb)
	require.NoError(t, err)
	err = p.Wait(ctx)
	if err == nil {
		t.Skipf("the dispatch finished within %v; cannot observe cancellation", time.Since(start))
	}
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.False(t, p.Done())
	t.Logf("cancelled after %v", time.Since(start))
	require.NoError(t, p.Wait(context.Background()))
	t.Logf("completed after %v", time.Since(start))
	got := make([]byte, 4)
	require.NoError(t, buf.Read(0, got))
	assert.Equal(t, lcg(0, iters), devicetest.BytesU32(got)[0], "exactly one submission ran")
}

func TestErrors(t *testing.T) {
	d := devicetest.Open(t)
	_, err := d.NewBuffer(1 << 50)
	assert.ErrorIs(t, err, device.ErrOutOfDeviceMemory)
	t.Logf("absurd size: %v", err)
	_, err = d.NewBuffer(0)
	assert.Error(t, err)

	_, err = d.NewKernel([]byte("not a shader at all!"), incSpec)
	assert.ErrorContains(t, err, "not SPIR-V")
	bad := append([]byte(nil), incSPV...)
	bad[22] = 0xff // the first instruction's word count
	_, err = d.NewKernel(bad, incSpec)
	assert.ErrorContains(t, err, "malformed SPIR-V")
	_, err = d.NewKernel(incSPV, device.KernelSpec{EntryPoint: "nope", Bindings: 1, PushConstantSize: 4})
	assert.ErrorContains(t, err, `no GLCompute entry point "nope"`)
	_, err = d.NewKernel(incSPV, device.KernelSpec{Bindings: 1, PushConstantSize: 3})
	assert.ErrorContains(t, err, "multiple of 4")

	k := newKernel(t, d, incSPV, incSpec)
	buf := newBuffer(t, d, 1024)
	cb := newCommandBuffer(t, d)
	assert.Error(t, cb.Dispatch(k, []device.BufferRange{{Buffer: buf}}, devicetest.U32Bytes(1), 1, 1, 1), "not recording")
	_, err = d.SubmitAsync(cb)
	assert.Error(t, err, "not recorded")
	require.NoError(t, cb.Begin())
	one := []device.BufferRange{{Buffer: buf}}
	assert.ErrorContains(t, cb.Dispatch(k, nil, devicetest.U32Bytes(1), 1, 1, 1), "0 bindings")
	assert.ErrorContains(t, cb.Dispatch(k, one, nil, 1, 1, 1), "push constants")
	assert.ErrorContains(t, cb.Dispatch(k, []device.BufferRange{{Buffer: buf, Offset: 1}}, devicetest.U32Bytes(1), 1, 1, 1), "minStorageBufferOffsetAlignment")
	assert.ErrorContains(t, cb.Dispatch(k, []device.BufferRange{{Buffer: buf, Offset: 512, Size: 1024}}, devicetest.U32Bytes(1), 1, 1, 1), "outside")
	assert.ErrorContains(t, cb.Dispatch(k, one, devicetest.U32Bytes(1), 1<<31, 1, 1), "workgroups")
	require.NoError(t, cb.End())

	require.NoError(t, buf.Close())
	require.NoError(t, buf.Close(), "second Close")
	assert.ErrorIs(t, buf.Write(0, []byte{1}), device.ErrClosed)
	require.NoError(t, cb.Begin())
	assert.ErrorIs(t, cb.Dispatch(k, one, devicetest.U32Bytes(1), 1, 1, 1), device.ErrClosed)
	require.NoError(t, k.Close())
	other := newBuffer(t, d, 1024)
	assert.ErrorIs(t, cb.Dispatch(k, []device.BufferRange{{Buffer: other}}, devicetest.U32Bytes(1), 1, 1, 1), device.ErrClosed)
	require.NoError(t, cb.End())
	require.NoError(t, cb.Close())
	assert.ErrorIs(t, cb.Begin(), device.ErrClosed)

	var ve *device.VkError
	assert.False(t, errors.As(err, &ve))
	e := &device.VkError{Call: "vkAllocateMemory", Result: -2}
	assert.Equal(t, "device: vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY", e.Error())
	assert.ErrorIs(t, e, device.ErrOutOfDeviceMemory)
	assert.ErrorIs(t, &device.VkError{Call: "vkQueueSubmit", Result: -4}, device.ErrDeviceLost)
	assert.ErrorIs(t, &device.VkError{Call: "vkCreateBuffer", Result: -1}, device.ErrOutOfHostMemory)
}

// TestLavapipeLoopLimit records a driver fact code generation must respect: lavapipe
// ends a shader invocation's loops after about 65535 iterations in all (gallivm's
// loop limiter), without an error. On other drivers the loop runs to the end.
func TestLavapipeLoopLimit(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, spinSPV, spinSpec)
	buf := newBuffer(t, d, 4*64)
	require.NoError(t, buf.Write(0, make([]byte, 4*64)))
	cb := newCommandBuffer(t, d)
	require.NoError(t, cb.Begin())
	require.NoError(t, cb.Dispatch(k, []device.BufferRange{{Buffer: buf}}, devicetest.U32Bytes(70000), 1, 1, 1))
	require.NoError(t, cb.End())
	require.NoError(t, d.Submit(context.Background(), cb))
	got := make([]byte, 4)
	require.NoError(t, buf.Read(0, got))
	v := devicetest.BytesU32(got)[0]
	if d.Caps().Driver.Name != "llvmpipe" {
		assert.Equal(t, lcg(0, 70000), v)
		return
	}
	n := -1
	for i, x := 0, uint32(0); i <= 70000; i, x = i+1, x*1664525+1013904223 {
		if x == v {
			n = i
			break
		}
	}
	t.Logf("lavapipe ran %d of 70000 loop iterations", n)
	assert.True(t, n >= 65000 && n <= 65535, "iterations run: %d", n)
}

// TestConcurrentClose closes the device, and a buffer, while other goroutines record
// and submit work that uses them: every call either succeeds or returns ErrClosed,
// nothing crashes, and the layer reports nothing.
func TestConcurrentClose(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, incSPV, incSpec)
	shared := newBuffer(t, d, 256)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 3 {
		wg.Go(func() { errs <- submitUntilClosed(d, k, shared) })
	}
	time.Sleep(30 * time.Millisecond)
	require.NoError(t, shared.Close())
	time.Sleep(30 * time.Millisecond)
	require.NoError(t, d.Close())
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.ErrorIs(t, err, device.ErrClosed)
	}
}

// submitUntilClosed records and submits dispatches on its own buffer and on shared
// until an error, which it returns.
func submitUntilClosed(d *device.Device, k *device.Kernel, shared *device.Buffer) error {
	own, err := d.NewBuffer(256)
	if err != nil {
		return err
	}
	cb, err := d.NewCommandBuffer()
	if err != nil {
		return err
	}
	for {
		buf := own
		if err := cb.Begin(); err != nil {
			return err
		}
		if shared.Size() > 0 && time.Now().UnixNano()%2 == 0 {
			buf = shared
		}
		err := errors.Join(
			cb.Dispatch(k, []device.BufferRange{{Buffer: buf}}, devicetest.U32Bytes(64), 1, 1, 1),
			cb.End())
		if err == nil {
			err = d.Submit(context.Background(), cb)
		}
		if err != nil && !errors.Is(err, device.ErrClosed) {
			return err
		}
		if err != nil && buf == own {
			return err
		}
	}
}

// TestConcurrentCloseDuringDispatch closes and frees a buffer on another goroutine
// after Dispatch has checked it but before Dispatch holds it (CI's race detector
// caught Dispatch reading the buffer's C handle there, unsynchronised with the free).
// Dispatch must then answer ErrClosed, and HostVisible, read meanwhile, must not race
// either. The hook waits by sleeping, not by synchronising, so that the race detector
// sees any access of Dispatch's to the freed buffer; an attempt whose closer had not
// run by then is repeated.
func TestConcurrentCloseDuringDispatch(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, incSPV, incSpec)
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	defer device.SetDispatchCheckedHook(nil)
	for attempt := range 20 {
		buf, err := d.NewBuffer(256)
		require.NoError(t, err)
		require.NoError(t, cb.Begin())
		device.SetDispatchCheckedHook(func() {
			go func() {
				_ = buf.HostVisible()
				_ = buf.Close()
			}()
			time.Sleep(time.Duration(attempt+1) * 5 * time.Millisecond)
		})
		err = cb.Dispatch(k, []device.BufferRange{{Buffer: buf}}, devicetest.U32Bytes(64), 1, 1, 1)
		_ = buf.HostVisible()
		if errors.Is(err, device.ErrClosed) {
			return
		}
		require.NoError(t, err)
	}
	t.Fatal("the closer never ran before Dispatch took hold of the buffer in 20 attempts")
}
