package vkxla

import (
	"errors"
	"fmt"
	"sync/atomic"

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
	dev   *device.Device
	arena *arena.Arena
	// host holds the plan's host buffers (offloaded values), onHost says which
	// ranges they are; host is nil when the plan has none.
	host    *arena.Arena
	onHost  func(r int) bool
	kernels map[*plan.KernelRef]*device.Kernel
	cbs     []*device.CommandBuffer
	tables  []*device.Buffer // the address tables' buffers (bindings.go)
	// tableBytes counts the tables' bytes while they are held (the runtime's
	// Runtime.tableBytes, for MemoryStats).
	tableBytes *atomic.Int64
	timed      bool
	// segments are each block's recorded command buffers and control steps.
	segments map[*plan.Block][]segment
	// bound maps the plan's slots to the run's memory (donate.go); nil: none.
	bound *slotBinding
}

func (r *recorder) createKernels(refs []*plan.KernelRef) error {
	r.kernels = make(map[*plan.KernelRef]*device.Kernel, len(refs))
	for _, ref := range refs {
		k := ref.Kernel
		dk, err := r.dev.NewKernel(k.SPIRV, KernelSpec(k))
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

// recordSegment records steps as device.Record does every recording: a full
// barrier between consecutive steps unless a step touches none of the memory of
// the steps since the last barrier (overlapping), and, when timed, timestamps
// around every dispatch.
func (r *recorder) recordSegment(steps []plan.Step) (segment, error) {
	seg := segment{timed: r.timed}
	tables, err := r.addressTables(steps)
	if err != nil {
		return seg, err
	}
	cmds := make([]device.Command, len(steps))
	for i, st := range steps {
		if cmds[i], err = r.command(st, tables[i]); err != nil {
			return seg, fmt.Errorf("%s: %w", st.Name, err)
		}
		if st.Kind == plan.StepDispatch {
			seg.dispatches = append(seg.dispatches, st.Name)
		}
	}
	for i, free := range overlapping(r.accesses(steps)) {
		cmds[i].Overlaps = free
	}
	cb, err := r.dev.Record(cmds, r.timed)
	if err != nil {
		if ce, ok := errors.AsType[*device.CommandError](err); ok && ce.Index < len(steps) {
			return seg, fmt.Errorf("%s: %w", steps[ce.Index].Name, ce.Err)
		}
		return seg, err
	}
	r.cbs = append(r.cbs, cb)
	seg.cb = cb
	return seg, nil
}

// command is a plan step as the device records it, on the placed arena; table is
// a dispatch's address table (addressTables).
func (r *recorder) command(st plan.Step, table device.BufferRange) (device.Command, error) {
	if st.Kind == plan.StepCopy {
		return device.Command{Src: r.bufferRange(st.Src), Dst: r.bufferRange(st.Dst)}, nil
	}
	bindings, err := r.dispatchBindings(st, table)
	if err != nil {
		return device.Command{}, err
	}
	return device.Command{Kernel: r.kernels[st.Kernel], Bindings: bindings, Push: st.Push, Groups: st.Groups}, nil
}

// close frees the command buffers, address tables and kernels.
func (r *recorder) close() error {
	errs := []error{r.closeRecording()}
	for _, k := range r.kernels {
		errs = append(errs, k.Close())
	}
	r.kernels = nil
	return errors.Join(errs...)
}
