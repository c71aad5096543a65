package heapsim

import (
	"fmt"

	"github.com/vkxla/vkxla/alloc"
	"github.com/vkxla/vkxla/hlo"
)

// Host offload (XLA's MoveToHost and MoveToDevice, JAX's
// save_and_offload_only_these_names): MoveToHost's result is a buffer in host
// memory, filled by a copy from its device operand; MoveToDevice's a device
// buffer, filled by a copy from host memory. Host buffers are placed by lifetime
// like the arena's, in blocks of their own (host-visible memory the runtime
// allocates beside the arena), and count in MemoryStats.HostBytes, not in the
// device peak: a value offloaded between its forward use and its backward use
// holds no device memory in between. The copies are steps like any other, in
// the same command buffers as the kernels.

// lowerPlacement lowers a MoveToHost (toHost) or MoveToDevice of x: a copy into
// a new buffer in the other memory, or x itself when it is there already.
func (l *lowering) lowerPlacement(b *Block, in *hlo.Instruction, x Value, toHost bool) (Value, error) {
	if x.Shape.IsTuple() {
		return Value{}, fmt.Errorf("%w: %s moves a tuple %v; XLA's host offload moves arrays", ErrUnsupported, in.Name, x.Shape)
	}
	src := x.Leaves[0]
	if l.onHost(src) == toHost || l.isToken(src) {
		return x, nil
	}
	out := l.newValue(in.Name, in.Shape, rangeTemp)
	l.host[out.Leaves[0]] = toHost
	b.Steps = append(b.Steps, Step{Kind: StepCopy, Name: in.Name, Src: src, Dst: out.Leaves[0]})
	return out, nil
}

// hostParams puts in host memory every entry parameter staged by the run (not
// the caller's memory) that only MoveToDevice copies read: JAX's arguments of
// memory kind pinned_host, and what the host-offload budget pass makes of a
// parameter it moves. Run writes such an input into the host buffers, and the
// device holds it only from each MoveToDevice to that copy's last reader.
func (l *lowering) hostParams(c *hlo.Computation, params []Value) {
	readers := map[*hlo.Instruction][]*hlo.Instruction{}
	for _, in := range c.Instructions {
		for _, op := range in.Operands {
			readers[op] = append(readers[op], in)
		}
	}
	for i, p := range c.Params {
		if hlo.HostResident(p, readers[p]) && l.ext[params[i].Leaves[0]] == extNone { // an array: one leaf
			l.host[params[i].Leaves[0]] = true
		}
	}
}

// onHost reports whether range r's memory is host memory.
func (l *lowering) onHost(r int) bool { return l.host[l.owner(r)] }

// inArena reports an owner in the executable's device arena: memory of its own,
// not the caller's, not the host's.
func (l *lowering) inArena(r int) bool { return l.shares[r] < 0 && l.ext[r] == extNone && !l.host[r] }

// hostOwners are the host buffers (none shares another's memory).
func (l *lowering) hostOwners() []int {
	var out []int
	for r := range l.plan.Ranges {
		if l.host[r] && l.shares[r] < 0 {
			out = append(out, r)
		}
	}
	return out
}

// placeHost places the host buffers by lifetime, largest first, in blocks of
// their own numbering.
func (l *lowering) placeHost(lt []lifetime) {
	owners := l.hostOwners()
	if len(owners) == 0 {
		return
	}
	addr, _ := l.placeInOrder(l.placementOrders(owners, lt)[0], lt)
	l.assignBlocks(owners, addr)
}

// hostPlan is the host buffers' placement: every other range empty.
func (l *lowering) hostPlan() alloc.Plan {
	p := alloc.Plan{Ranges: make([]alloc.PlanRange, len(l.plan.Ranges))}
	for r, pr := range l.plan.Ranges {
		if l.onHost(r) {
			p.Ranges[r] = pr
		} else {
			p.Ranges[r] = alloc.PlanRange{Name: pr.Name}
		}
	}
	return p
}

// HostArena is the host buffers' placement (blocks of host-visible memory); the
// ranges not on the host are empty there, as the host buffers are in Arena.
func (m *Model) HostArena() *alloc.Plan {
	p := m.l.hostPlan()
	return &p
}

// OnHost reports whether plan range r is in host memory (HostArena).
func (m *Model) OnHost(r int) bool { return m.l.onHost(r) }

// HostBlockSizes is the size of each host allocation the plan needs (aligned).
func (m *Model) HostBlockSizes() []int64 { return alignedBlocks(m.l.hostPlan(), m.l.limits) }
