package vkxla

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// In-place outputs. A kernel that reads an input only at the element it writes
// (codegen.Program.InPlace) may write its output over that input's buffer when
// nothing reads the input afterwards: saxpy writes y's buffer, as the hand-written
// kernel does, and the executable holds one buffer fewer. Parameters qualify too:
// Run stages its inputs into the executable's own buffers, so the caller's tensors
// are never touched.

// inPlaceCandidate is a dispatch of the main block and the (input range, output
// range) pairs its program allows to share memory.
type inPlaceCandidate struct {
	block *block
	step  int
	pairs [][2]int
}

// noteInPlace records the pairs a one-dispatch program allows: an input marked
// InPlace and an output of the same element size and count.
func (l *lowering) noteInPlace(b *block, prog *codegen.Program, ops []value, out value) {
	if len(prog.Dispatches) != 1 || prog.InPlace == nil {
		return
	}
	c := inPlaceCandidate{block: b, step: len(b.steps) - 1}
	for j, os := range prog.Outputs {
		for i, is := range prog.Inputs {
			if prog.InPlace[i] && sameFootprint(is, os) {
				c.pairs = append(c.pairs, [2]int{ops[i].leaves[0], out.leaves[j]})
			}
		}
	}
	if len(c.pairs) > 0 {
		l.inPlace = append(l.inPlace, c)
	}
}

// sameFootprint: element i of both shapes occupies the same bytes.
func sameFootprint(a, b hlo.Shape) bool {
	return a.DType.Size() == b.DType.Size() && a.NumElements() == b.NumElements()
}

// shareInPlace lets each candidate output share the memory of an input whose
// memory is last used by the candidate's own dispatch, in step order, so that a
// chain of in-place kernels keeps writing one buffer. Constants never qualify (they
// are uploaded once), nor do outputs of the executable as inputs (they must
// survive to the end).
func (l *lowering) shareInPlace(main *block, root value) {
	lastMem := l.lastUses(main, root)
	for _, c := range l.inPlace {
		if c.block != main {
			continue // loop bodies and branches: lifetimes span iterations
		}
		for _, p := range c.pairs {
			in, out := l.owner(p[0]), p[1]
			if l.shares[out] >= 0 || in == out || l.kinds[in] == rangeConstant ||
				lastMem[in] != c.step || l.plan.Ranges[in].Size != l.plan.Ranges[out].Size {
				continue
			}
			l.shares[out] = in
			lastMem[in] = max(lastMem[in], lastMem[out])
		}
	}
}

// owner is the range whose memory r uses.
func (l *lowering) owner(r int) int {
	for l.shares[r] >= 0 {
		r = l.shares[r]
	}
	return r
}

// lastUses maps every range to the index of the last step of main that refers to
// it (a control step refers to everything its blocks do); the root's leaves are
// used after the last step.
func (l *lowering) lastUses(main *block, root value) []int {
	last := make([]int, len(l.plan.Ranges))
	for i := range last {
		last[i] = -1
	}
	for i := range main.steps {
		for _, r := range stepRanges(&main.steps[i], nil) {
			last[r] = i
		}
	}
	for _, r := range root.leaves {
		last[r] = len(main.steps)
	}
	return last
}

// stepRanges appends every range a step (and the blocks it runs) refers to.
func stepRanges(st *step, out []int) []int {
	switch st.kind {
	case stepDispatch:
		return append(out, st.args...)
	case stepCopy:
		return append(out, st.src, st.dst)
	case stepWhile:
		out = append(out, st.pred)
		for _, b := range []*block{st.cond, st.body} {
			out = blockRanges(b, out)
		}
		return out
	}
	out = append(out, st.index)
	for _, b := range st.branches {
		out = blockRanges(b, out)
	}
	return out
}

func blockRanges(b *block, out []int) []int {
	for i := range b.steps {
		out = stepRanges(&b.steps[i], out)
	}
	return out
}
