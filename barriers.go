package vkxla

import (
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/plan"
)

// access is a byte range of one buffer a step reads, or writes.
type access struct {
	buf        *device.Buffer
	start, end int64
	write      bool
}

// accesses are the memory each step touches: a copy reads its source and writes
// its destination; a dispatch is taken to write every argument it is given
// (bound or reached by device address), since which of them a fused kernel
// writes in place is the kernel's business.
func (r *recorder) accesses(steps []plan.Step) [][]access {
	out := make([][]access, len(steps))
	of := func(rng int, write bool) access {
		_, pr := r.placedRange(rng)
		return access{buf: pr.Buffer(), start: pr.Offset(), end: pr.Offset() + pr.Size(), write: write}
	}
	for i, st := range steps {
		switch st.Kind {
		case plan.StepCopy:
			out[i] = []access{of(st.Src, false), of(st.Dst, true)}
		default:
			for _, a := range st.Args {
				out[i] = append(out[i], of(a, true))
			}
		}
	}
	return out
}

// overlapping says, for each step, that it needs no barrier before it: it reads
// nothing the steps since the last barrier write and writes nothing they touch.
// A step that conflicts gets a barrier, which orders it after everything before,
// and starts the next group. Copies to and from host memory run beside the
// kernels around them this way, as XLA's host offloading streams them.
func overlapping(steps [][]access) []bool {
	free := make([]bool, len(steps))
	var group []access
	for i, acc := range steps {
		if i > 0 && !conflicts(group, acc) {
			free[i] = true
			group = append(group, acc...)
			continue
		}
		group = append(group[:0], acc...)
	}
	return free
}

// conflicts reports a read-after-write, write-after-read or write-after-write
// between the accesses of a group and those of the next step.
func conflicts(group, next []access) bool {
	for _, a := range next {
		for _, g := range group {
			if a.buf == g.buf && a.start < g.end && g.start < a.end && (a.write || g.write) {
				return true
			}
		}
	}
	return false
}
