package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vkxla/vkxla/device"
)

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

// record records the dispatches into the runner's command buffer, as the runtime
// records an executable (device.Record), so both measure the same way.
func (r *kernelRunner) record(ds []device.Command) error {
	cb, err := r.d.Record(ds, r.timed)
	if err != nil {
		return err
	}
	r.cb, r.n = cb, len(ds)
	return nil
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
	times, err := r.cb.DispatchTimes()
	if err != nil {
		return Sample{}, err
	}
	for _, t := range times {
		s.GPU += t
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
