package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vkxla/vkxla/device"
)

// dispatch is one recorded kernel launch.
type dispatch struct {
	kernel   *device.Kernel
	bindings []device.BufferRange
	push     []byte
	groups   [3]uint32
}

// kernelRunner replays one pre-recorded command buffer of dispatches on the device,
// with a barrier between consecutive dispatches and timestamps around each: the way
// both the hand-written baselines and directly lowered codegen programs run. It
// owns its buffers and kernels.
type kernelRunner struct {
	name    string
	d       *device.Device
	kernels []*device.Kernel
	bufs    []*device.Buffer
	cb      *device.CommandBuffer
	n       int // dispatches recorded
	timed   bool
}

func newKernelRunner(d *device.Device, name string) *kernelRunner {
	return &kernelRunner{name: name, d: d, timed: d.Caps().TimestampsSupported}
}

func (r *kernelRunner) Name() string { return r.name }

// PeakBytes is the size of the runner's buffers.
func (r *kernelRunner) PeakBytes() int64 {
	var n int64
	for _, b := range r.bufs {
		n += b.Size()
	}
	return n
}

// kernel creates a kernel the runner owns.
func (r *kernelRunner) kernel(spirv []byte, spec device.KernelSpec) (*device.Kernel, error) {
	k, err := r.d.NewKernel(spirv, spec)
	if err != nil {
		return nil, err
	}
	r.kernels = append(r.kernels, k)
	return k, nil
}

// buffer creates a buffer the runner owns, holding data (or size undefined bytes
// when data is nil).
func (r *kernelRunner) buffer(size int64, data []byte) (*device.Buffer, error) {
	b, err := r.d.NewBuffer(max(size, 4))
	if err != nil {
		return nil, err
	}
	r.bufs = append(r.bufs, b)
	if data != nil {
		return b, b.Write(0, data)
	}
	return b, nil
}

// record records the dispatches into the runner's command buffer.
func (r *kernelRunner) record(ds []dispatch) error {
	cb, err := r.d.NewCommandBuffer()
	if err != nil {
		return err
	}
	r.cb, r.n = cb, len(ds)
	if r.timed {
		if err := cb.EnableTimestamps(2 * len(ds)); err != nil {
			return err
		}
	}
	if err := cb.Begin(); err != nil {
		return err
	}
	for i, d := range ds {
		if i > 0 {
			if err := cb.Barrier(); err != nil {
				return err
			}
		}
		if err := r.timestamp(2 * i); err != nil {
			return err
		}
		if err := cb.Dispatch(d.kernel, d.bindings, d.push, d.groups[0], d.groups[1], d.groups[2]); err != nil {
			return err
		}
		if err := r.timestamp(2*i + 1); err != nil {
			return err
		}
	}
	return cb.End()
}

func (r *kernelRunner) timestamp(i int) error {
	if !r.timed {
		return nil
	}
	return r.cb.Timestamp(i)
}

// Run submits the recording and waits for it.
func (r *kernelRunner) Run(ctx context.Context) (Sample, error) {
	start := time.Now()
	if err := r.d.Submit(ctx, r.cb); err != nil {
		return Sample{}, err
	}
	s := Sample{Wall: time.Since(start), Dispatches: r.n}
	if !r.timed {
		return s, nil
	}
	ts, err := r.cb.Timestamps()
	if err != nil {
		return Sample{}, err
	}
	for i := 0; i+1 < len(ts); i += 2 {
		s.GPU += ts[i+1] - ts[i]
	}
	return s, nil
}

// read downloads a whole buffer.
func read(b *device.Buffer) ([]byte, error) {
	out := make([]byte, b.Size())
	return out, b.Read(0, out)
}

// Close frees the command buffer, kernels and buffers.
func (r *kernelRunner) Close() error {
	var errs []error
	if r.cb != nil {
		errs = append(errs, r.cb.Close())
	}
	for _, k := range r.kernels {
		errs = append(errs, k.Close())
	}
	for _, b := range r.bufs {
		errs = append(errs, b.Close())
	}
	r.cb, r.kernels, r.bufs = nil, nil, nil
	return errors.Join(errs...)
}

// checked runs r once and checks its result with check; on any error it closes r.
func checked(ctx context.Context, r Runner, check func() error) (Runner, error) {
	_, err := r.Run(ctx)
	if err == nil {
		err = check()
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", r.Name(), err), r.Close())
	}
	return r, nil
}
