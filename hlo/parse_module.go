package hlo

import (
	"hash/fnv"
	"strconv"
)

// Module assembly after every computation is read: the entry, called computations,
// the callees-first order, module-unique instruction names, and the shape checks.

func (p *parser) buildModule(name string, aliases []InputOutputAlias) (*Module, error) {
	if len(p.order) == 0 {
		return nil, p.errorAt(len(p.src), "expected a computation, found end of input")
	}
	entry, err := p.findEntry()
	if err != nil {
		return nil, err
	}
	if err := p.resolveCalls(); err != nil {
		return nil, err
	}
	comps, err := p.orderComputations(entry)
	if err != nil {
		return nil, err
	}
	p.uniquifyNames()
	for _, c := range comps {
		c.Renumber()
	}
	return &Module{Name: name, Computations: comps, Entry: entry.comp, InputOutputAlias: aliases}, nil
}

// findEntry takes the computation marked ENTRY, or the last one when none is (XLA's
// rule).
func (p *parser) findEntry() (*compText, error) {
	var entry *compText
	for _, ct := range p.order {
		if !ct.isEntry {
			continue
		}
		if entry != nil {
			return nil, p.errorAt(ct.pos, "more than one ENTRY computation (%s and %s)", entry.comp.Name, ct.comp.Name)
		}
		entry = ct
	}
	if entry == nil {
		entry = p.order[len(p.order)-1]
	}
	return entry, nil
}

func (p *parser) resolveCalls() error {
	for _, call := range p.calls {
		ct, ok := p.comps[call.name]
		if !ok {
			return p.errorAt(call.pos, "unknown computation %q called by %s", call.name, call.inst.Name)
		}
		call.inst.Called[call.index] = ct.comp
	}
	return nil
}

// orderComputations lists the computations callees first, in text order where that is
// one, with the entry last. Recursion, and calls to the entry, are errors.
func (p *parser) orderComputations(entry *compText) ([]*Computation, error) {
	callsFrom := map[*compText][]pendingCall{}
	for _, call := range p.calls {
		callsFrom[call.from] = append(callsFrom[call.from], call)
	}
	state := map[*compText]visitState{}
	var order []*Computation
	var visit func(ct *compText) error
	visit = func(ct *compText) error {
		state[ct] = visitOpen
		for _, call := range callsFrom[ct] {
			callee := p.comps[call.name]
			switch {
			case callee == entry:
				return p.errorAt(call.pos, "%s calls the ENTRY computation %s", call.inst.Name, entry.comp.Name)
			case state[callee] == visitOpen:
				return p.errorAt(call.pos, "%s calls %s recursively (recursion is not supported)", call.inst.Name, call.name)
			case state[callee] == visitNone:
				if err := visit(callee); err != nil {
					return err
				}
			}
		}
		state[ct] = visitDone
		order = append(order, ct.comp)
		return nil
	}
	for _, ct := range append(p.nonEntry(entry), entry) {
		if state[ct] == visitNone {
			if err := visit(ct); err != nil {
				return nil, err
			}
		}
	}
	return order, nil
}

func (p *parser) nonEntry(entry *compText) []*compText {
	var rest []*compText
	for _, ct := range p.order {
		if ct != entry {
			rest = append(rest, ct)
		}
	}
	return rest
}

// uniquifyNames makes instruction names unique across the module, as the IR requires.
// Hand-written HLO reuses names such as x and y in several reducers (XLA scopes names
// per computation); a later repeat becomes name.1, name.2, … — a suffix not used
// anywhere in the module.
func (p *parser) uniquifyNames() {
	all := map[string]bool{}
	for _, ct := range p.order {
		for _, it := range ct.insts {
			all[it.inst.Name] = true
		}
	}
	taken := map[string]bool{}
	for _, ct := range p.order {
		for _, it := range ct.insts {
			in := it.inst
			if taken[in.Name] {
				in.Name = freshName(in.Name, all)
				all[in.Name] = true
			}
			taken[in.Name] = true
		}
	}
}

func freshName(base string, used map[string]bool) string {
	for k := 1; ; k++ {
		if name := base + "." + strconv.Itoa(k); !used[name] {
			return name
		}
	}
}

// verify checks every instruction's declared shape with CheckShape, reporting the
// first failure at the instruction's line:column in text order; then the module
// verifier checks the invariants that span instructions (the parser builds them, so a
// failure there is a parser bug more than an input error).
func (p *parser) verify(m *Module) error {
	for _, ct := range p.order {
		for _, it := range ct.insts {
			if err := checkDeclaredShape(it.inst); err != nil {
				return p.errorAt(it.pos, "%s: %v", it.inst.Name, err)
			}
		}
	}
	return Verify(m)
}

func checkDeclaredShape(in *Instruction) error {
	operands := make([]Shape, len(in.Operands))
	for i, op := range in.Operands {
		operands[i] = op.Shape
	}
	return CheckShape(in.Op, operands, &in.Attrs, in.Called, in.Shape)
}

// fillElided fills an elided constant ({...} in the text) with pseudo-random values,
// as XLA's parser does by default. The values are deterministic: the generator is
// SplitMix64 seeded with the 64-bit FNV-1a hash of the constant's name as written
// (without %), so a module parses to the same values every time and on every machine.
// Floats are uniform in [-1, 1) (rounded to the element type), integers uniform in
// 0…7 (valid as small indices for every integer type), pred uniform true/false.
func fillElided(l *Literal, name string) {
	h := fnv.New64a()
	h.Write([]byte(name))
	rng := splitMix64(h.Sum64())
	dt := l.DType()
	for i := 0; i < l.NumElements(); i++ {
		r := rng.next()
		switch {
		case dt == Pred:
			l.SetBool(i, r&1 == 1)
		case dt.IsInteger():
			l.SetUint64(i, r%8)
		case dt.IsComplex():
			l.SetComplex128(i, complex(float64(r>>11)/(1<<52)-1, float64(r&(1<<11-1))/(1<<10)-1))
		default:
			l.SetFloat64(i, float64(r>>11)/(1<<52)-1)
		}
	}
}

// splitMix64 is Steele, Lea and Flood's SplitMix64 generator: tiny, fully specified,
// and independent of Go's math/rand versions.
type splitMix64 uint64

func (s *splitMix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
