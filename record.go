package vkxla

import (
	"errors"
	"fmt"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/plan"
)

// segment is a unit of execution: a pre-recorded command buffer of consecutive
// dispatches and copies, or one control step (while, conditional) the host drives.
type segment struct {
	cb         *device.CommandBuffer
	dispatches []string // the instruction of each timed dispatch, for Profile
	control    *plan.Step
	timed      bool // timestamps around each dispatch
	// repeated segments may run several times in one Run (inside a while loop), so
	// their timestamps are read after every submission, not once when asked for.
	repeated bool
}

// recorder turns blocks of steps into recorded segments on one placed arena.
type recorder struct {
	dev     *device.Device
	arena   *arena.Arena
	kernels map[*plan.KernelRef]*device.Kernel
	cbs     []*device.CommandBuffer
	timed   bool
	// segments are each block's recorded command buffers and control steps.
	segments map[*plan.Block][]segment
}

func (r *recorder) createKernels(refs []*plan.KernelRef) error {
	r.kernels = make(map[*plan.KernelRef]*device.Kernel, len(refs))
	for _, ref := range refs {
		k := ref.Kernel
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
func (r *recorder) recordBlock(b *plan.Block, repeated bool) error {
	var run []plan.Step
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		seg, err := r.recordSegment(run)
		seg.repeated = repeated
		r.segments[b] = append(r.segments[b], seg)
		run = nil
		return err
	}
	for i := range b.Steps {
		st := &b.Steps[i]
		if st.Kind == plan.StepDispatch || st.Kind == plan.StepCopy {
			run = append(run, *st)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if err := r.recordControl(st, repeated); err != nil {
			return err
		}
		r.segments[b] = append(r.segments[b], segment{control: st})
	}
	return flush()
}

func (r *recorder) recordControl(st *plan.Step, repeated bool) error {
	repeated = repeated || st.Kind == plan.StepWhile
	for _, sub := range append([]*plan.Block{st.Cond, st.Body}, st.Branches...) {
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
func (r *recorder) recordSegment(steps []plan.Step) (segment, error) {
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
			return seg, fmt.Errorf("%s: %w", st.Name, err)
		}
	}
	return seg, cb.End()
}

func countDispatches(steps []plan.Step) int {
	n := 0
	for _, st := range steps {
		if st.Kind == plan.StepDispatch {
			n++
		}
	}
	return n
}

func (r *recorder) recordStep(cb *device.CommandBuffer, seg *segment, st plan.Step) error {
	if st.Kind == plan.StepCopy {
		src, dst := r.arena.PlanRange(st.Src), r.arena.PlanRange(st.Dst)
		return cb.Copy(src.Buffer(), src.Offset(), dst.Buffer(), dst.Offset(), min(src.Size(), dst.Size()))
	}
	bindings := make([]device.BufferRange, len(st.Args))
	for i, a := range st.Args {
		bindings[i] = r.arena.PlanRange(a).BufferRange()
	}
	n := len(seg.dispatches)
	if r.timed {
		if err := cb.Timestamp(2 * n); err != nil {
			return err
		}
	}
	if err := cb.Dispatch(r.kernels[st.Kernel], bindings, st.Push, st.Groups[0], st.Groups[1], st.Groups[2]); err != nil {
		return err
	}
	seg.dispatches = append(seg.dispatches, st.Name)
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
