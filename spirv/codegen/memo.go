package codegen

import (
	"github.com/vkxla/vkxla/hlo"
)

// Memo memoises Lower (and Facts) for one target by the kernel computation's structure
// (hlo.Fingerprint: names do not matter), so that the memory model can ask for a
// kernel's facts (scratch buffers, in-place inputs, dispatches) as often as the
// schedule and remat passes need them, and the planner's final lowering reuses
// them: a rematerialised copy of an instruction costs no new code generation.
// Computations that differ only in names share one Program (its kernels carry the
// first one's names). The passes ask Facts (no SPIR-V); the planner's final
// lowering asks Lower. A Memo is not safe for concurrent use.
type Memo struct {
	t     Target
	done  map[[32]byte]memoEntry
	facts map[[32]byte]memoEntry
}

type memoEntry struct {
	p   *Program
	err error
}

// NewMemo returns an empty memo for target t.
func NewMemo(t Target) *Memo {
	return &Memo{t: t, done: map[[32]byte]memoEntry{}, facts: map[[32]byte]memoEntry{}}
}

// Lower is Lower(c, m's target), computed once per structure.
func (m *Memo) Lower(c *hlo.Computation) (*Program, error) {
	key := hlo.Fingerprint(kernelModule(c))
	if e, ok := m.done[key]; ok {
		return e.p, e.err
	}
	p, err := Lower(c, m.t)
	m.done[key] = memoEntry{p, err}
	return p, err
}

// Facts is Facts(c, m's target), computed once per structure: the memory model's
// questions during the passes (schedule and remat trials) emit no SPIR-V; a
// structure already lowered answers from its program.
func (m *Memo) Facts(c *hlo.Computation) (*Program, error) {
	key := hlo.Fingerprint(kernelModule(c))
	if e, ok := m.done[key]; ok {
		return e.p, e.err
	}
	if e, ok := m.facts[key]; ok {
		return e.p, e.err
	}
	p, err := Facts(c, m.t)
	m.facts[key] = memoEntry{p, err}
	return p, err
}

// Len is the number of distinct kernel computations lowered.
func (m *Memo) Len() int { return len(m.done) }

// kernelModule wraps c and the computations it calls (to any depth, callees
// first) as a module, the unit hlo.Fingerprint hashes.
func kernelModule(c *hlo.Computation) *hlo.Module {
	mod := &hlo.Module{Name: "kernel", Entry: c}
	seen := map[*hlo.Computation]bool{}
	var visit func(*hlo.Computation)
	visit = func(x *hlo.Computation) {
		if seen[x] {
			return
		}
		seen[x] = true
		for _, in := range x.Instructions {
			for _, callee := range in.Called {
				visit(callee)
			}
		}
		mod.Computations = append(mod.Computations, x)
	}
	visit(c)
	return mod
}
