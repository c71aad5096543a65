package heapsim

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Aliasing and donation (XLA's input_output_alias and copy insertion, jax.jit's
// donate_argnums).
//
// A donated parameter's storage is the caller's: the executable's arena holds no
// memory for it, the runtime binds the caller's buffer, and the buffer is dead to
// the caller after the run. Each alias (the module's input_output_alias, plus a
// donated leaf matched to the first unaliased output of its shape, as jax does)
// lets an output be written over its parameter's storage, so that the output takes
// the memory over. A borrowed parameter is read from the caller's memory in place
// (weights kept on the device): the arena holds none of it and nothing writes it.
//
// An output may be written over its parameter only where that write comes after
// every read of the parameter (aliasOutputs): every reference to the parameter
// precedes the output's first write, or the kernel that writes the output reads
// the parameter last and may write in place over it (a dynamic-update-slice of a
// KV cache), or the write is a copy of the parameter (a loop's initial state).
// Elsewhere a must-alias output is computed into a buffer of its own and copied
// over the parameter after the last step, and a may-alias output keeps its own
// buffer. An output that is a parameter or a constant is always copied over (the
// copy it needed anyway), through a temporary when the source is itself written
// over by an alias.

// extKind says whose memory a range's owner is.
type extKind uint8

const (
	extNone     extKind = iota // the executable's arena
	extDonated                 // the caller's, given up to the run
	extBorrowed                // the caller's, read only
)

// Slot is a parameter leaf whose memory the caller provides at run time.
type Slot struct {
	Param, Leaf int
	Donated     bool // else borrowed: read, never written
}

// alias is a resolved input_output_alias entry: output leaf out over leaf leaf of
// parameter param.
type alias struct {
	out, param, leaf int
	must             bool
}

// markExternal records which parameter leaves are the caller's memory: the donated
// parameters, every parameter an alias names, and the borrowed ones.
func (l *lowering) markExternal(params []Value, donate, borrow []int, aliases []alias) error {
	mark := func(p int, k extKind, what string) error {
		if p < 0 || p >= len(params) {
			return fmt.Errorf("%s parameter %d is out of range: the entry takes %d", what, p, len(params))
		}
		for _, r := range params[p].Leaves {
			if l.ext[r] != extNone && l.ext[r] != k {
				return fmt.Errorf("parameter %d is both donated and borrowed", p)
			}
			l.ext[r] = k
		}
		return nil
	}
	for _, p := range donate {
		if err := mark(p, extDonated, "donated"); err != nil {
			return err
		}
	}
	for _, a := range aliases {
		if err := mark(a.param, extDonated, "aliased"); err != nil {
			return err
		}
	}
	for _, p := range borrow {
		if err := mark(p, extBorrowed, "borrowed"); err != nil {
			return err
		}
	}
	return nil
}

// aliasesOf resolves m's input_output_alias and matches every other leaf of a
// donated parameter to the first output leaf of its shape that no alias names
// (may-alias), in parameter order.
func aliasesOf(m *hlo.Module, donate []int) ([]alias, error) {
	resolved, err := hlo.ResolveAliases(m)
	if err != nil {
		return nil, err
	}
	var as []alias
	outTaken, leafTaken := map[int]bool{}, map[[2]int]bool{}
	for _, r := range resolved {
		as = append(as, alias{out: r.Output, param: r.Param, leaf: r.ParamLeaf, must: r.Kind == hlo.MustAlias})
		outTaken[r.Output], leafTaken[[2]int{r.Param, r.ParamLeaf}] = true, true
	}
	outs := m.Entry.Root.Shape.Leaves()
	for _, p := range slices.Sorted(slices.Values(donate)) {
		if p < 0 || p >= len(m.Entry.Params) {
			continue // markExternal reports it
		}
		for k, leaf := range m.Entry.Params[p].Shape.Leaves() {
			if leafTaken[[2]int{p, k}] {
				continue
			}
			for j, o := range outs {
				if !outTaken[j] && o.Equal(leaf) {
					as = append(as, alias{out: j, param: p, leaf: k})
					outTaken[j], leafTaken[[2]int{p, k}] = true, true
					break
				}
			}
		}
	}
	return as, nil
}

// aliasedOutputs is the set of output leaves some alias names.
func aliasedOutputs(as []alias) map[int]bool {
	out := make(map[int]bool, len(as))
	for _, a := range as {
		out[a.out] = true
	}
	return out
}

// aliasOutputs writes each aliased output over its parameter's storage, directly
// where that is safe and by a copy after the last step where it must (see the
// package comment above). b is the entry's block, root its outputs.
func (l *lowering) aliasOutputs(b *Block, name string, root Value, params []Value, as []alias) Value {
	root = Value{Shape: root.Shape, Leaves: slices.Clone(root.Leaves)}
	storage := func(a alias) int { return params[a.param].Leaves[a.leaf] }
	written := map[int]bool{}
	for _, a := range as {
		written[storage(a)] = true
	}
	var late []alias
	type copyOver struct {
		a   alias
		src int
	}
	var early []copyOver
	for _, a := range as {
		src := root.Leaves[a.out]
		switch {
		case src == storage(a): // the output is its own parameter: nothing to write
		case l.kinds[src] == rangeParam || l.kinds[src] == rangeConstant:
			if written[src] {
				src = l.copyTo(b, name, src, l.newRange(name+".alias_tmp", l.plan.Ranges[src].Size, rangeTemp))
			}
			early = append(early, copyOver{a, src})
		default:
			late = append(late, a)
		}
	}
	for _, c := range early {
		root.Leaves[c.a.out] = l.copyOver(b, name, c.src, storage(c.a))
	}
	if len(late) == 0 {
		return root
	}
	tl := l.buildTimeline(b, root)
	for _, a := range late {
		out, p := root.Leaves[a.out], storage(a)
		l.kinds[out] = rangeOutput
		switch {
		case l.shares[out] < 0 && l.writesAfterReads(tl, b, p, out):
			l.shares[out] = p
		case a.must:
			root.Leaves[a.out] = l.copyOver(b, name, out, p)
		}
	}
	return root
}

// copyTo appends a copy of range src into dst and returns dst.
func (l *lowering) copyTo(b *Block, name string, src, dst int) int {
	b.Steps = append(b.Steps, Step{Kind: StepCopy, Name: name, Src: src, Dst: dst})
	return dst
}

// copyOver copies src into a new output range written over parameter range p.
func (l *lowering) copyOver(b *Block, name string, src, p int) int {
	dst := l.newRange(name+".alias", l.plan.Ranges[p].Size, rangeOutput)
	l.shares[dst] = p
	return l.copyTo(b, name, src, dst)
}

// writesAfterReads reports whether output range out may be written over parameter
// range p: p's last reference comes before out's first, or it is the last
// dispatch of an in-place kernel that writes out over p, or a copy of p into out.
func (l *lowering) writesAfterReads(tl *timeline, b *Block, p, out int) bool {
	last, first := tl.last[p], tl.first[out]
	if last < first {
		return true
	}
	for _, c := range l.inPlace {
		if tl.pos[c.block][c.step] == last && slices.Contains(c.pairs, [2]int{p, out}) {
			return true
		}
	}
	for i, at := range tl.pos[b] { // the copies aliasOutputs appends come later
		st := b.Steps[i]
		copies := st.Kind == StepCopy || (st.Kind == StepDispatch && st.Copies)
		if at == last && last == first && copies && st.Src == p && st.Dst == out {
			return true
		}
	}
	return false
}

// external is the kind of memory range r uses (its owner's).
func (l *lowering) external(r int) extKind { return l.ext[l.owner(r)] }

// Slots are the parameter leaves whose memory the caller provides at run time, in
// parameter and leaf order; SlotOf gives a range's slot.
func (m *Model) Slots() []Slot { return slices.Clone(m.slots) }

// SlotOf is the slot whose memory plan range r uses, or -1 when r is in the arena.
func (m *Model) SlotOf(r int) int { return m.slotOf[r] }

// slotsOf numbers the external parameter leaves and maps every range to its slot.
func (l *lowering) slotsOf(params []Value) ([]Slot, []int) {
	var slots []Slot
	byRange := map[int]int{}
	for p, v := range params {
		for k, r := range v.Leaves {
			if l.ext[r] != extNone {
				byRange[r] = len(slots)
				slots = append(slots, Slot{Param: p, Leaf: k, Donated: l.ext[r] == extDonated})
			}
		}
	}
	slotOf := make([]int, len(l.plan.Ranges))
	for r := range slotOf {
		s, ok := byRange[l.owner(r)]
		slotOf[r] = -1
		if ok {
			slotOf[r] = s
		}
	}
	return slots, slotOf
}
