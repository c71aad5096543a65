package passes

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Fusion is XLA's instruction fusion for vkxla's code generator. Walking each
// sequential computation (the entry, loop bodies and conditions, branches, calls)
// from its root back, it copies cheap producers (elementwise ops, data movement,
// small constants) into the kernel of their consumer, so that their results are
// computed per element inside the consumer's kernel instead of being written to and
// read back from device memory. A consumer with fused producers becomes a `fusion`
// instruction calling a flat computation: kind kInput when its root is a reduce,
// kLoop otherwise. The code generator lowers a fused computation exactly like a
// single op, so fusion changes where values live, never what is computed.
//
// Rules, chosen so that fusion never multiplies work that matters:
//   - producers: elementwise ops, data movement (broadcast, reshape, transpose,
//     slice, concatenate, pad, reverse, copy, iota, dynamic-slice, gather), and
//     constants the kernel can hold (uniform, or at most maxFusedConstant elements).
//     Reductions, contractions, windows, sort, scatter and control flow are never
//     fused as producers: recomputing them per consumer element would repeat their
//     loops, and dots and large reduces have strategies of their own as roots.
//   - consumers: ops that read each operand element about once — elementwise, data
//     movement (gather excepted: it may read an element many times), dynamic-update-slice and reduce. A
//     dot, convolution or window op keeps plain operands, which its strategy reads
//     best from memory.
//   - a producer with several users is copied into each only when all of them can
//     take it and it is not expensive (transcendentals, divide, power, remainder);
//     otherwise it stays a kernel of its own and its consumers read its buffer.
//   - the computation's root is never fused away: its value must be materialised.
//   - a fused computation has at most Config.MaxFusionParams parameters.
func Fusion(m *hlo.Module, cfg Config) (bool, error) {
	f := newFuser(m, cfg)
	for _, c := range sequentialComputations(m) {
		if err := f.fuseComputation(c); err != nil {
			return f.changed, fmt.Errorf("computation %s: %w", c.Name, err)
		}
	}
	return f.changed, nil
}

// maxFusedConstant is the largest non-uniform constant copied into a kernel (held
// there in a per-invocation array).
const maxFusedConstant = 16

// sequentialComputations lists the computations the runtime lowers as sequences of
// kernels: the entry and what while, conditional and call reach from it. Reducers,
// comparators and fused computations are inlined into kernels and are not listed.
func sequentialComputations(m *hlo.Module) []*hlo.Computation {
	var out []*hlo.Computation
	seen := map[*hlo.Computation]bool{}
	var visit func(c *hlo.Computation)
	visit = func(c *hlo.Computation) {
		if c == nil || seen[c] {
			return
		}
		seen[c] = true
		out = append(out, c)
		for _, in := range c.Instructions {
			switch in.Op {
			case hlo.OpWhile, hlo.OpConditional, hlo.OpCall:
				for _, callee := range in.Called {
					visit(callee)
				}
			}
		}
	}
	visit(m.Entry)
	return out
}

// fuser holds the state of one Fusion run.
type fuser struct {
	m         *hlo.Module
	maxParams int
	names     nameSet
	changed   bool
	// per computation being fused
	c       *hlo.Computation
	users   map[*hlo.Instruction][]*hlo.Instruction
	removed map[*hlo.Instruction]bool
}

func newFuser(m *hlo.Module, cfg Config) *fuser {
	f := &fuser{m: m, maxParams: cfg.MaxFusionParams, names: moduleNames(m)}
	if f.maxParams <= 0 {
		f.maxParams = DefaultMaxFusionParams
	}
	return f
}

// fuseComputation visits consumers from the root back and fuses producers into each
// until none qualifies.
func (f *fuser) fuseComputation(c *hlo.Computation) error {
	f.c, f.users, f.removed = c, usersOf(c), map[*hlo.Instruction]bool{}
	for i := len(c.Instructions) - 1; i >= 0; i-- {
		consumer := c.Instructions[i]
		if f.removed[consumer] || !isConsumer(consumer) {
			continue
		}
		for {
			p := f.pickProducer(consumer)
			if p == nil {
				break
			}
			consumer = f.fuse(consumer, p)
		}
		if consumer.Op == hlo.OpFusion {
			sortParams(consumer, c)
		}
	}
	kept := c.Instructions[:0:0]
	for _, in := range c.Instructions {
		if !f.removed[in] {
			kept = append(kept, in)
		}
	}
	c.Instructions = kept
	c.Renumber()
	return nil
}

// usersOf maps every instruction to its distinct users.
func usersOf(c *hlo.Computation) map[*hlo.Instruction][]*hlo.Instruction {
	users := map[*hlo.Instruction][]*hlo.Instruction{}
	for _, in := range c.Instructions {
		for _, op := range in.Operands {
			if !slices.Contains(users[op], in) {
				users[op] = append(users[op], in)
			}
		}
	}
	return users
}

// isConsumer says whether in (or the root of the fusion it is) may take fused
// producers.
func isConsumer(in *hlo.Instruction) bool {
	root := in
	if in.Op == hlo.OpFusion {
		root = in.Called[0].Root
	}
	switch root.Info().Kind {
	case hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise:
		return true
	case hlo.KindMovement:
		return root.Op != hlo.OpGather && root.Op != hlo.OpScatter
	}
	return root.Op == hlo.OpReduce
}

// isFusibleProducer says whether in may be computed inside a consumer's kernel.
func isFusibleProducer(in *hlo.Instruction) bool {
	if !in.Shape.IsArray() {
		return false
	}
	switch in.Info().Kind {
	case hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise:
		return true
	case hlo.KindMovement:
		return in.Op != hlo.OpScatter && in.Op != hlo.OpDynamicUpdateSlice
	}
	switch in.Op {
	case hlo.OpIota:
		return true
	case hlo.OpConstant:
		lit := in.Attrs.Literal
		return lit != nil && (lit.Shape().NumElements() <= maxFusedConstant || lit.IsUniform())
	}
	return false
}

// isExpensive marks ops that are worth computing once even at the price of a buffer.
func isExpensive(in *hlo.Instruction) bool {
	switch in.Op {
	case hlo.OpDivide, hlo.OpRemainder, hlo.OpPower, hlo.OpAtan2, hlo.OpExp, hlo.OpExpm1,
		hlo.OpLog, hlo.OpLog1p, hlo.OpSqrt, hlo.OpRsqrt, hlo.OpCbrt, hlo.OpTanh,
		hlo.OpLogistic, hlo.OpSin, hlo.OpCos, hlo.OpGather, hlo.OpConcatenate, hlo.OpPad:
		return true
	}
	return false
}

// pickProducer returns an operand of consumer that may be fused into it, or nil.
func (f *fuser) pickProducer(consumer *hlo.Instruction) *hlo.Instruction {
	for _, p := range consumer.Operands {
		if f.canFuse(p, consumer) {
			return p
		}
	}
	return nil
}

func (f *fuser) canFuse(p, consumer *hlo.Instruction) bool {
	if p == f.c.Root || !isFusibleProducer(p) {
		return false
	}
	if f.paramsAfter(consumer, p) > f.maxParams {
		return false
	}
	users := f.users[p]
	if len(users) == 1 {
		return true
	}
	if isExpensive(p) {
		return false
	}
	for _, u := range users {
		if !isConsumer(u) {
			return false
		}
	}
	return true
}

// paramsAfter counts the parameters consumer's fused computation would have with p
// fused in: p's parameter goes, p's operands come in unless already there.
func (f *fuser) paramsAfter(consumer, p *hlo.Instruction) int {
	ops := distinct(consumer.Operands)
	n := len(ops) - 1
	for _, x := range distinct(p.Operands) {
		if !slices.Contains(ops, x) {
			n++
		}
	}
	return n
}

func distinct(ins []*hlo.Instruction) []*hlo.Instruction { return appendNew(nil, ins...) }

// fuse copies producer p into consumer's fused computation (making consumer a
// fusion first if it is a plain op) and returns the fusion instruction.
func (f *fuser) fuse(consumer, p *hlo.Instruction) *hlo.Instruction {
	fusion := consumer
	if consumer.Op != hlo.OpFusion {
		fusion = f.wrap(consumer)
	}
	fc := fusion.Called[0]
	j := slices.Index(fusion.Operands, p)
	clone := &hlo.Instruction{Name: f.names.fresh(p.Name), Op: p.Op, Shape: p.Shape.Clone(),
		Attrs: p.Attrs.Clone(), Called: p.Called}
	for _, x := range p.Operands {
		clone.Operands = append(clone.Operands, f.paramFor(fusion, x))
	}
	replaceUses(fc, fc.Params[j], clone)
	f.dropParam(fusion, j)
	fc.Instructions = slices.Insert(fc.Instructions, len(fc.Params), clone)
	fc.Renumber()
	fusion.Attrs.FusionKind = fusionKind(fc)
	f.unlinkUser(p, fusion)
	f.changed = true
	return fusion
}

// wrap replaces in by a fusion instruction of the same name whose computation holds
// a copy of in over one parameter per distinct operand.
func (f *fuser) wrap(in *hlo.Instruction) *hlo.Instruction {
	fc := &hlo.Computation{Name: f.names.fresh("fused_" + in.Name)}
	fusion := &hlo.Instruction{Name: in.Name, Op: hlo.OpFusion, Shape: in.Shape, Called: []*hlo.Computation{fc}}
	root := &hlo.Instruction{Name: f.names.fresh(in.Name), Op: in.Op, Shape: in.Shape.Clone(),
		Attrs: in.Attrs.Clone(), Called: in.Called}
	for _, x := range in.Operands {
		root.Operands = append(root.Operands, f.paramFor(fusion, x))
	}
	fc.Instructions = append(fc.Instructions, root)
	fc.Root = root
	fc.Renumber()
	// The fused computation is called by in's computation: place it before.
	f.m.Computations = slices.Insert(f.m.Computations, slices.Index(f.m.Computations, f.c), fc)
	f.replaceInstruction(in, fusion)
	return fusion
}

// paramFor returns the fused computation's parameter for outer value x, adding a
// parameter (and an operand of fusion) if x is not one yet.
func (f *fuser) paramFor(fusion, x *hlo.Instruction) *hlo.Instruction {
	fc := fusion.Called[0]
	if j := slices.Index(fusion.Operands, x); j >= 0 {
		return fc.Params[j]
	}
	p := &hlo.Instruction{Name: f.names.fresh("param_" + x.Name), Op: hlo.OpParameter,
		Shape: x.Shape.Clone(), Attrs: hlo.Attributes{ParameterNumber: int64(len(fc.Params))}}
	fc.Params = append(fc.Params, p)
	fc.Instructions = slices.Insert(fc.Instructions, len(fc.Params)-1, p)
	fusion.Operands = append(fusion.Operands, x)
	if !slices.Contains(f.users[x], fusion) {
		f.users[x] = append(f.users[x], fusion)
	}
	return p
}

// dropParam removes parameter j (no longer used) and the matching operand.
func (f *fuser) dropParam(fusion *hlo.Instruction, j int) {
	fc := fusion.Called[0]
	fc.Instructions = slices.DeleteFunc(fc.Instructions, func(in *hlo.Instruction) bool { return in == fc.Params[j] })
	fc.Params = slices.Delete(fc.Params, j, j+1)
	for i, p := range fc.Params {
		p.Attrs.ParameterNumber = int64(i)
	}
	fusion.Operands = slices.Delete(fusion.Operands, j, j+1)
}

// unlinkUser records that fusion no longer reads p; a producer left without users is
// removed.
func (f *fuser) unlinkUser(p, fusion *hlo.Instruction) {
	f.users[p] = slices.DeleteFunc(f.users[p], func(u *hlo.Instruction) bool { return u == fusion })
	if len(f.users[p]) > 0 {
		return
	}
	f.removed[p] = true
	for _, x := range distinct(p.Operands) {
		f.users[x] = slices.DeleteFunc(f.users[x], func(u *hlo.Instruction) bool { return u == p })
	}
}

// replaceInstruction puts repl in old's place in the computation, its users and
// its operands' user lists.
func (f *fuser) replaceInstruction(old, repl *hlo.Instruction) {
	c := f.c
	c.Instructions[slices.Index(c.Instructions, old)] = repl
	if c.Root == old {
		c.Root = repl
	}
	for _, u := range f.users[old] {
		for k, op := range u.Operands {
			if op == old {
				u.Operands[k] = repl
			}
		}
	}
	f.users[repl] = f.users[old]
	delete(f.users, old)
	for _, x := range distinct(old.Operands) {
		f.users[x] = slices.DeleteFunc(f.users[x], func(u *hlo.Instruction) bool { return u == old })
	}
}

// replaceUses makes every user of old inside c use repl.
func replaceUses(c *hlo.Computation, old, repl *hlo.Instruction) {
	for _, in := range c.Instructions {
		for k, op := range in.Operands {
			if op == old {
				in.Operands[k] = repl
			}
		}
	}
	if c.Root == old {
		c.Root = repl
	}
}

// sortParams orders a fusion's operands (and its computation's parameters) as their
// values appear in c, so that the signature reads like the unfused code.
func sortParams(fusion *hlo.Instruction, c *hlo.Computation) {
	fc := fusion.Called[0]
	order := make([]int, len(fc.Params))
	for i := range order {
		order[i] = i
	}
	pos := func(i int) int { return slices.Index(c.Instructions, fusion.Operands[i]) }
	slices.SortStableFunc(order, func(a, b int) int { return pos(a) - pos(b) })
	ops, params := make([]*hlo.Instruction, len(order)), make([]*hlo.Instruction, len(order))
	for i, j := range order {
		ops[i], params[i] = fusion.Operands[j], fc.Params[j]
		params[i].Attrs.ParameterNumber = int64(i)
	}
	fusion.Operands, fc.Params = ops, params
	copy(fc.Instructions, params)
	fc.Renumber()
}

// fusionKind is kInput for a reduction root, kLoop otherwise.
func fusionKind(fc *hlo.Computation) hlo.FusionKind {
	if fc.Root.Op == hlo.OpReduce {
		return hlo.FusionInput
	}
	return hlo.FusionLoop
}
