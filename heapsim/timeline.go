package heapsim

import (
	"math"
	"slices"
)

// The timeline orders every step of an executable, loop bodies and branches
// included, so that buffer lifetimes can be compared across blocks. Positions are
// given depth first: a while step takes one position for itself, then its
// condition's and body's steps, then one for its back edge; a conditional one for
// the host's read of its selector, then each branch's steps in turn.
//
// A buffer's lifetime is the span from its first to its last reference, except:
//   - a buffer referred to inside a loop but made outside it (loop state, values
//     the body reads from before the loop) lives for the whole loop, back edge
//     included: every iteration needs it. Buffers a body makes are remade by every
//     iteration (the body is a DAG over the state), so their lifetimes stay within
//     the iteration and they can share memory with each other;
//   - a loop's predicate lives for the whole loop (the host reads it between
//     condition and body);
//   - parameters live from before the first position (Run stages them first),
//     the root's leaves to after the last, constants always (uploaded once).

// timeline holds the positions and the lifetimes of one lowering.
type timeline struct {
	pos         map[*Block][]int // position of each step of each block
	first, last []int            // per range; -1 is before the first step
	end         int              // the position after the last step
	refs        map[int][]int    // positions of every range's references
}

// loopSpan is the positions of one while step, and the blocks lowered inside it.
type loopSpan struct {
	start, end int
	inner      map[*Block]bool
}

// timelineBuilder walks the blocks.
type timelineBuilder struct {
	l     *lowering
	tl    *timeline
	next  int
	loops []*loopSpan            // enclosing loops of the block being walked
	chain map[*Block][]*loopSpan // each block's enclosing loops
	refs  []struct {
		r, at int
		b     *Block
	} // every reference, for the loop rule
	preds []struct {
		r    int
		loop *loopSpan
	} // loop predicates
}

// buildTimeline numbers the steps and computes every range's lifetime.
func (l *lowering) buildTimeline(main *Block, root Value) *timeline {
	n := len(l.plan.Ranges)
	tb := &timelineBuilder{l: l, tl: &timeline{pos: map[*Block][]int{}, first: make([]int, n), last: make([]int, n),
		refs: map[int][]int{}}, chain: map[*Block][]*loopSpan{}}
	for r := range n {
		tb.tl.first[r], tb.tl.last[r] = math.MaxInt, math.MinInt
	}
	tb.walk(main)
	tb.tl.end = tb.next
	tb.applyLoopRule()
	tb.applyKinds(root)
	return tb.tl
}

func (tb *timelineBuilder) walk(b *Block) {
	tb.chain[b] = append([]*loopSpan(nil), tb.loops...)
	for _, loop := range tb.loops {
		loop.inner[b] = true
	}
	pos := make([]int, len(b.Steps))
	for i := range b.Steps {
		pos[i] = tb.walkStep(b, &b.Steps[i])
	}
	tb.tl.pos[b] = pos
}

// walkStep gives a step its position(s) and records its references.
func (tb *timelineBuilder) walkStep(b *Block, st *Step) int {
	at := tb.next
	tb.next++
	st.at = at
	switch st.Kind {
	case StepDispatch:
		for _, r := range st.Args {
			tb.ref(r, at, b)
		}
	case StepCopy:
		tb.ref(st.Src, at, b)
		tb.ref(st.Dst, at, b)
	case StepCollective:
		for _, r := range append(slices.Clone(st.Args), st.Outs...) {
			tb.ref(r, at, b)
		}
	case StepWhile:
		loop := &loopSpan{start: at, inner: map[*Block]bool{}}
		tb.loops = append(tb.loops, loop)
		tb.walk(st.Cond)
		tb.walk(st.Body)
		tb.loops = tb.loops[:len(tb.loops)-1]
		loop.end = tb.next // the back edge
		tb.next++
		tb.ref(st.Pred, at, b)
		tb.preds = append(tb.preds, struct {
			r    int
			loop *loopSpan
		}{st.Pred, loop})
	case StepConditional:
		tb.ref(st.Index, at, b)
		for _, br := range st.Branches {
			tb.walk(br)
		}
	}
	return at
}

func (tb *timelineBuilder) ref(r, at int, b *Block) {
	tb.extend(r, at, at)
	tb.tl.refs[r] = append(tb.tl.refs[r], at)
	tb.refs = append(tb.refs, struct {
		r, at int
		b     *Block
	}{r, at, b})
}

func (tb *timelineBuilder) extend(r, first, last int) {
	tb.tl.first[r] = min(tb.tl.first[r], first)
	tb.tl.last[r] = max(tb.tl.last[r], last)
}

// applyLoopRule stretches every buffer referred to inside a loop it was not made
// in over that loop, and every predicate over its loop.
func (tb *timelineBuilder) applyLoopRule() {
	for _, ref := range tb.refs {
		home := tb.l.home[ref.r]
		for _, loop := range tb.chain[ref.b] {
			if !loop.inner[home] {
				tb.extend(ref.r, loop.start, loop.end)
			}
		}
	}
	for _, p := range tb.preds {
		tb.extend(p.r, p.loop.start, p.loop.end)
	}
}

// applyKinds applies the rules for parameters, constants, outputs and buffers no
// step refers to.
func (tb *timelineBuilder) applyKinds(root Value) {
	tl := tb.tl
	for _, r := range root.Leaves {
		tb.extend(r, tl.end, tl.end)
	}
	for r := range tl.first {
		switch {
		case tb.l.kinds[r] == rangeConstant:
			tl.first[r], tl.last[r] = -1, math.MaxInt
		case tb.l.kinds[r] == rangeParam:
			tl.first[r] = -1
			tl.last[r] = max(tl.last[r], -1)
		case tl.first[r] == math.MaxInt: // referred to by nothing: keep it out of the way
			tl.first[r], tl.last[r] = -1, tl.end
		}
	}
}
