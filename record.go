package vkxla

import (
	"errors"
	"fmt"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/device"
)

// segment is a unit of execution: a pre-recorded command buffer of consecutive
// dispatches and copies, or one control step (while, conditional) the host drives.
type segment struct {
	cb         *device.CommandBuffer
	dispatches []string // the instruction of each timed dispatch, for Profile
	control    *step
	timed      bool // timestamps around each dispatch
	// repeated segments may run several times in one Run (inside a while loop), so
	// their timestamps are read after every submission, not once when asked for.
	repeated bool
}

// recorder turns blocks of steps into recorded segments on one placed arena.
type recorder struct {
	dev     *device.Device
	arena   *arena.Arena
	kernels map[*kernelRef]*device.Kernel
	cbs     []*device.CommandBuffer
	timed   bool
}

func (r *recorder) createKernels(set *kernelSet) error {
	r.kernels = make(map[*kernelRef]*device.Kernel, len(set.all))
	for _, ref := range set.all {
		k := ref.kernel
		dk, err := r.dev.NewKernel(k.SPIRV, device.KernelSpec{EntryPoint: k.EntryPoint, Bindings: k.Bindings, PushConstantSize: k.PushConstantSize})
		if err != nil {
			return fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		r.kernels[ref] = dk
	}
	return nil
}

// recordBlock splits b's steps at control steps and records each run of dispatches
// and copies into one command buffer. Control steps' own blocks are recorded too.
func (r *recorder) recordBlock(b *block, repeated bool) error {
	var run []step
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		seg, err := r.recordSegment(run)
		seg.repeated = repeated
		b.segments = append(b.segments, seg)
		run = nil
		return err
	}
	for i := range b.steps {
		st := &b.steps[i]
		if st.kind == stepDispatch || st.kind == stepCopy {
			run = append(run, *st)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if err := r.recordControl(st, repeated); err != nil {
			return err
		}
		b.segments = append(b.segments, segment{control: st})
	}
	return flush()
}

func (r *recorder) recordControl(st *step, repeated bool) error {
	repeated = repeated || st.kind == stepWhile
	for _, sub := range append([]*block{st.cond, st.body}, st.branches...) {
		if sub == nil {
			continue
		}
		if err := r.recordBlock(sub, repeated); err != nil {
			return err
		}
	}
	return nil
}

// recordSegment records steps with a full barrier between consecutive ones (each
// step may read what the previous wrote) and timestamps around every dispatch.
func (r *recorder) recordSegment(steps []step) (segment, error) {
	cb, err := r.dev.NewCommandBuffer()
	if err != nil {
		return segment{}, err
	}
	r.cbs = append(r.cbs, cb)
	seg := segment{cb: cb, timed: r.timed}
	if r.timed {
		if err := cb.EnableTimestamps(2 * countDispatches(steps)); err != nil {
			return seg, err
		}
	}
	if err := cb.Begin(); err != nil {
		return seg, err
	}
	for i, st := range steps {
		if i > 0 {
			if err := cb.Barrier(); err != nil {
				return seg, err
			}
		}
		if err := r.recordStep(cb, &seg, st); err != nil {
			return seg, fmt.Errorf("%s: %w", st.name, err)
		}
	}
	return seg, cb.End()
}

func countDispatches(steps []step) int {
	n := 0
	for _, st := range steps {
		if st.kind == stepDispatch {
			n++
		}
	}
	return n
}

func (r *recorder) recordStep(cb *device.CommandBuffer, seg *segment, st step) error {
	if st.kind == stepCopy {
		src, dst := r.arena.PlanRange(st.src), r.arena.PlanRange(st.dst)
		return cb.Copy(src.Buffer(), src.Offset(), dst.Buffer(), dst.Offset(), min(src.Size(), dst.Size()))
	}
	bindings := make([]device.BufferRange, len(st.args))
	for i, a := range st.args {
		bindings[i] = r.arena.PlanRange(a).BufferRange()
	}
	n := len(seg.dispatches)
	if r.timed {
		if err := cb.Timestamp(2 * n); err != nil {
			return err
		}
	}
	if err := cb.Dispatch(r.kernels[st.kernel], bindings, st.push, st.groups[0], st.groups[1], st.groups[2]); err != nil {
		return err
	}
	seg.dispatches = append(seg.dispatches, st.name)
	if r.timed {
		return cb.Timestamp(2*n + 1)
	}
	return nil
}

// close frees the command buffers and kernels.
func (r *recorder) close() error {
	var errs []error
	for _, cb := range r.cbs {
		errs = append(errs, cb.Close())
	}
	for _, k := range r.kernels {
		errs = append(errs, k.Close())
	}
	r.cbs, r.kernels = nil, nil
	return errors.Join(errs...)
}
