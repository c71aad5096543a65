package heapsim

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// In-place outputs. A kernel that reads an input only at the element it writes
// (codegen.Program.InPlace) may write its output over that input's buffer when
// nothing reads the input afterwards: saxpy writes over x (the hand-written kernel
// over y), and the executable holds one buffer fewer. Parameters qualify too:
// Run stages its inputs into the executable's own buffers, so the caller's tensors
// are never touched.

// inPlaceCandidate is a program's last dispatch (a block and step) and the (input
// range, output range) pairs its program allows to share memory.
type inPlaceCandidate struct {
	block *Block
	step  int
	pairs [][2]int
}

// noteInPlace records the pairs a program allows: an input marked InPlace and an
// output of the same element size and count. An input whose buffer is also bound
// to a slot the program reads elsewhere (the same Value passed twice) is left out.
// The candidate's step is the program's last dispatch, where every input is bound
// for the last time.
func (l *lowering) noteInPlace(b *Block, prog *codegen.Program, ops []Value, out Value) {
	if prog.InPlace == nil || len(prog.Dispatches) == 0 {
		return
	}
	c := inPlaceCandidate{block: b, step: len(b.Steps) - 1}
	for j, os := range prog.Outputs {
		for i, is := range prog.Inputs {
			if prog.InPlace[i] && sameFootprint(is, os) && !readElsewhere(prog, ops, i) {
				c.pairs = append(c.pairs, [2]int{ops[i].Leaves[0], out.Leaves[j]})
			}
		}
	}
	if len(c.pairs) > 0 {
		l.inPlace = append(l.inPlace, c)
	}
}

// noteStateTakesInit makes each copy of a loop's initial value into its state,
// steps from..end of b, an in-place candidate: where the copy is the initial
// value's last use (a stacking loop's zero broadcast, the forward loop's stack
// that the backward loop takes over), the state is the initial value's memory
// and the copy is dropped (dropSelfCopies), as XLA's copy insertion leaves out
// the copy of a while's operand that dies there.
func (l *lowering) noteStateTakesInit(b *Block, from int) {
	for i := from; i < len(b.Steps); i++ {
		st := b.Steps[i]
		l.inPlace = append(l.inPlace, inPlaceCandidate{block: b, step: i, pairs: [][2]int{{st.Src, st.Dst}}})
	}
}

// readElsewhere reports another input slot, not read in place, bound to input i's
// buffer.
func readElsewhere(prog *codegen.Program, ops []Value, i int) bool {
	for k := range prog.Inputs {
		if k != i && !prog.InPlace[k] && ops[k].Leaves[0] == ops[i].Leaves[0] {
			return true
		}
	}
	return false
}

// sameFootprint: element i of both shapes occupies the same bytes.
func sameFootprint(a, b hlo.Shape) bool {
	return a.DType.StorageBits() == b.DType.StorageBits() && a.NumElements() == b.NumElements()
}

// shareInPlace lets each candidate output share the memory of an input whose
// memory is last used by the candidate's own dispatch (timeline order, loop-carried
// values live to their loop's back edge), so that a chain of in-place kernels
// keeps writing one buffer. Constants never qualify (they are uploaded once), nor
// do the executable's outputs (they live past the last step), nor borrowed
// parameters (the caller's memory, read only).
func (l *lowering) shareInPlace(tl *timeline) {
	lastMem := slices.Clone(tl.last)
	for r, o := range l.shares { // outputs written over their parameters (alias.go)
		if o >= 0 {
			lastMem[l.owner(r)] = max(lastMem[l.owner(r)], lastMem[r])
		}
	}
	for _, c := range l.inPlace {
		at := tl.pos[c.block][c.step]
		taken := map[int]bool{} // one output per input: two outputs of one kernel never share
		for _, p := range c.pairs {
			in, out := l.owner(p[0]), p[1]
			if taken[in] || l.shares[out] >= 0 || in == out || l.kinds[in] == rangeConstant || l.ext[in] == extBorrowed || l.host[in] || l.host[out] ||
				l.plan.Ranges[in].Size != l.plan.Ranges[out].Size {
				continue
			}
			if lastMem[in] != at && !l.updatesState(tl, in, out, at) {
				continue
			}
			l.shares[out] = in
			taken[in] = true
			lastMem[in] = max(lastMem[in], lastMem[out])
		}
	}
}

// loopCarry is a loop-state leaf and the body result copied into it at the end of
// every iteration.
type loopCarry struct {
	state, next int
	body        *Block
}

// updatesState reports whether out, computed at position at, is the next Value of
// loop-state leaf state and at is the iteration's last read of the state leaf
// (the copy of out into it aside): then out may be written over the state, which
// makes the end-of-iteration copy a no-op (dropSelfCopies). A training loop
// updates its weights in place instead of holding a second copy.
func (l *lowering) updatesState(tl *timeline, owner, out, at int) bool {
	for _, c := range l.carries {
		// owner is the state's own memory, or a donated parameter's that the
		// state is written over (alias.go).
		if l.owner(c.state) != owner || c.next != out {
			continue
		}
		state := c.state
		pos := tl.pos[c.body]
		if len(pos) == 0 {
			return false
		}
		first, last := pos[0], pos[len(pos)-1]
		copyAt := -1
		for i, st := range c.body.Steps {
			if st.Kind == StepCopy && st.Src == out && st.Dst == state {
				copyAt = pos[i]
			}
		}
		lastRead := -1
		for _, p := range tl.refs[state] {
			if p >= first && p <= last && p != copyAt {
				lastRead = max(lastRead, p)
			}
		}
		return lastRead == at
	}
	return false
}

// dropSelfCopies removes copies whose source and destination share memory (a loop
// state updated in place; a scatter's or dynamic-update-slice's operand copy), in
// every block.
func (l *lowering) dropSelfCopies(b *Block) {
	kept := b.Steps[:0]
	for _, st := range b.Steps {
		if st.Kind == StepCopy && l.owner(st.Src) == l.owner(st.Dst) {
			continue
		}
		if st.Kind == StepDispatch && st.Copies && l.owner(st.Src) == l.owner(st.Dst) {
			continue
		}
		for _, nested := range append([]*Block{st.Cond, st.Body}, st.Branches...) {
			if nested != nil {
				l.dropSelfCopies(nested)
			}
		}
		kept = append(kept, st)
	}
	b.Steps = kept
}

// owner is the range whose memory r uses.
func (l *lowering) owner(r int) int {
	for l.shares[r] >= 0 {
		r = l.shares[r]
	}
	return r
}
