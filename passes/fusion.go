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
//     A row reduction joins a kernel that reads it along rows (fusion_rows.go), a
//     dot a kernel that reads its product at each element's own index (its
//     epilogue, fusion_epilogue.go), each moved, never copied. Other reductions,
//     contractions, windows, sort, scatter and control flow are never fused as
//     producers: recomputing them per consumer element would repeat their loops.
//   - a value the root tuple returns may still join a same-dims kernel that reads
//     it, as an extra output of the kernel (fusion_multi.go).
//   - consumers: ops that read each operand element about once — elementwise, data
//     movement (gather excepted: it may read an element many times), dynamic-update-slice and reduce. A
//     dot, convolution or window op keeps plain operands, which its strategy reads
//     best from memory; a dot takes only the widening f16/bf16→f32 converts of its
//     operands, which its loads perform (fusion_operand_convert.go).
//   - a producer with several users is copied into each only when all of them can
//     take it and it is not expensive (transcendentals, divide, power, remainder);
//     otherwise it stays a kernel of its own and its consumers read its buffer.
//   - within one kernel a value is copied once: a fused producer that reads a value
//     already fused into the kernel reads that copy.
//   - the computation's root is never fused away: its value must be materialised.
//   - a fused computation's parameters and extra outputs take at most
//     Config.MaxFusionParams bindings (Config.Bindings: a tensor split across
//     bindings takes one per piece), and it has at most
//     Config.MaxFusedInstructions instructions besides its parameters.
//
// The pass takes time linear in the computation's size (times the parameter
// bound): every fusion step touches only the producer, its operands and the
// parameter it replaces, never the whole fused computation.
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
	bindings  func(bytes int64) int
	maxInstrs int
	names     *nameSet
	changed   bool
	// per computation being fused, indexed by instruction ID
	c       *hlo.Computation
	users   []userCount
	live    map[*hlo.Instruction]bool // liveInstructions (DCE's): dead kernels take no extra outputs
	removed []bool
	added   []*hlo.Computation // fused computations made for c, in order
	// around holds, per instruction of c turned into a multi-output kernel's
	// get-tuple-element 0, the instructions to place before and after it.
	around map[*hlo.Instruction][2][]*hlo.Instruction
}

// userCount counts an instruction's distinct users, and those among them that
// cannot take fused producers.
type userCount struct{ all, nonConsumers int }

func newFuser(m *hlo.Module, cfg Config) *fuser {
	f := &fuser{m: m, maxParams: cfg.MaxFusionParams, bindings: cfg.Bindings, maxInstrs: cfg.MaxFusedInstructions, names: moduleNames(m)}
	if f.maxParams <= 0 {
		f.maxParams = DefaultMaxFusionParams
	}
	if f.maxInstrs <= 0 {
		f.maxInstrs = DefaultMaxFusedInstructions
	}
	return f
}

// fuseComputation visits consumers from the root back and fuses producers into each
// until none qualifies.
func (f *fuser) fuseComputation(c *hlo.Computation) error {
	c.Renumber()
	f.c, f.added, f.around = c, nil, map[*hlo.Instruction][2][]*hlo.Instruction{}
	f.users, f.removed = make([]userCount, len(c.Instructions)), make([]bool, len(c.Instructions))
	f.live = liveInstructions(c)
	for _, in := range c.Instructions {
		for _, x := range distinct(in.Operands) {
			f.addUser(x, in)
		}
	}
	for i := len(c.Instructions) - 1; i >= 0; i-- {
		if consumer := c.Instructions[i]; !f.removed[i] && (isConsumer(consumer) || fusesOperandConverts(consumer)) {
			f.fuseInto(consumer)
		}
	}
	kept := c.Instructions[:0:0]
	for _, in := range c.Instructions {
		if !f.removed[in.ID] {
			ar := f.around[in]
			kept = append(append(append(kept, ar[0]...), in), ar[1]...)
		}
	}
	c.Instructions = kept
	c.Renumber()
	// The fused computations are called by c: place them before it.
	f.m.Computations = slices.Insert(f.m.Computations, slices.Index(f.m.Computations, c), f.added...)
	return nil
}

// fuseInto fuses producers into consumer while one qualifies.
func (f *fuser) fuseInto(consumer *hlo.Instruction) {
	var k *fusedKernel
	if consumer.Op == hlo.OpFusion {
		k = openKernel(consumer)
	}
	for {
		p, how := f.pickProducer(consumer, k)
		if p == nil {
			break
		}
		if k == nil {
			k = f.wrap(consumer)
		}
		clone := f.fuse(k, p)
		if how == asOutput {
			k.addOutput(p, clone)
			f.remove(p) // the root tuple reads it from the kernel (splitOutputs)
		}
	}
	if k != nil {
		k.close()
		if len(k.outputs) > 0 {
			before, after := f.splitOutputs(k)
			f.around[consumer] = [2][]*hlo.Instruction{before, after}
		}
	}
}

func (f *fuser) addUser(x, u *hlo.Instruction) {
	f.users[x.ID].all++
	if !isConsumer(u) {
		f.users[x.ID].nonConsumers++
	}
}

func (f *fuser) dropUser(x, u *hlo.Instruction) {
	f.users[x.ID].all--
	if !isConsumer(u) {
		f.users[x.ID].nonConsumers--
	}
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
	case hlo.OpReduce:
		_, ok := hlo.RowReduceDims(in)
		return ok
	case hlo.OpDot:
		return true // as an epilogue's producer only (fusion_epilogue.go)
	case hlo.OpConvolution:
		return convEpilogueCandidate(in) // likewise
	case hlo.OpConstant:
		lit := in.Attrs.Literal
		return lit != nil && (lit.Shape().NumElements() <= maxFusedConstant || lit.IsUniform())
	}
	return false
}

// isExpensive marks ops that are worth computing once even at the price of a
// buffer (the op table's Expensive column).
func isExpensive(in *hlo.Instruction) bool { return in.Info().Expensive }

// pickProducer returns an operand of consumer (whose kernel, if it has one yet, is
// k) that may be fused into it, or nil.
func (f *fuser) pickProducer(consumer *hlo.Instruction, k *fusedKernel) (*hlo.Instruction, fuseAs) {
	size := 1
	if k != nil {
		size = len(k.body)
	}
	if size >= f.maxInstrs {
		return nil, notFused
	}
	operands := map[*hlo.Instruction]bool{}
	for _, x := range consumer.Operands {
		operands[x] = true
	}
	for _, p := range consumer.Operands {
		if how := f.fuseKind(p, consumer, operands, k); how != notFused {
			return p, how
		}
	}
	return nil, notFused
}

// canFuse says whether p may be fused into the consumer whose distinct operands are
// operands and whose kernel, if it has one yet, is k.
func (f *fuser) canFuse(p *hlo.Instruction, operands map[*hlo.Instruction]bool, k *fusedKernel) bool {
	if p == f.c.Root || !isFusibleProducer(p) {
		return false
	}
	if f.bindingsAfter(operands, p, k) > f.maxParams {
		return false
	}
	users := f.users[p.ID]
	if users.all == 1 {
		return true
	}
	return !isExpensive(p) && users.nonConsumers == 0
}

// fuseKind says how p may join consumer's kernel (k, if it has one yet): as a
// producer, as an extra output (fusion_multi.go), or not at all.
func (f *fuser) fuseKind(p, consumer *hlo.Instruction, operands map[*hlo.Instruction]bool, k *fusedKernel) fuseAs {
	if readForContraction(k, consumer, p) {
		if f.canFuseOperandConvert(p, consumer, operands, k) {
			return asProducer
		}
		return notFused
	}
	if f.canFuse(p, operands, k) {
		switch {
		case p.Op == hlo.OpReduce && !f.canFuseRow(p, consumer, k):
			return notFused
		case isContraction(p) && !f.canFuseContraction(p, consumer, k):
			return notFused
		}
		return asProducer
	}
	if p != f.c.Root && isFusibleProducer(p) && f.bindingsAfter(operands, p, k)+f.paramBindings(p) <= f.maxParams && f.canFuseAsOutput(p, consumer, k) {
		return asOutput
	}
	return notFused
}

// fuseAs is how a producer joins a kernel.
type fuseAs int

const (
	notFused fuseAs = iota
	asProducer
	asOutput // a producer the root tuple also returns: an extra output
)

// bindingsAfter counts the bindings a consumer's fused computation (k, if it has
// one yet) would have with p fused in, its root output aside: its parameters' (p's
// parameter goes, p's operands come in unless already there as parameters or
// fused copies) and its extra outputs' (fusion_multi.go).
func (f *fuser) bindingsAfter(operands map[*hlo.Instruction]bool, p *hlo.Instruction, k *fusedKernel) int {
	n := 0
	if k != nil {
		for _, o := range k.outputs {
			n += f.paramBindings(o.outer)
		}
	}
	for x := range operands {
		if x != p {
			n += f.paramBindings(x)
		}
	}
	for _, x := range distinct(p.Operands) {
		if !operands[x] && (k == nil || k.clones[x] == nil) {
			n += f.paramBindings(x)
		}
	}
	return n
}

// paramBindings is how many bindings a kernel parameter (or extra output) holding
// x takes: at least one, so that MaxFusionParams bounds the parameters of a kernel
// that reaches them by address too.
func (f *fuser) paramBindings(x *hlo.Instruction) int {
	return f.shapeBindings(x.Shape)
}

// shapeBindings is paramBindings for a value of shape s.
func (f *fuser) shapeBindings(s hlo.Shape) int {
	if f.bindings == nil {
		return 1
	}
	return max(1, f.bindings(s.ByteSize()))
}

// fusedKernel is a fusion instruction and its computation while producers are
// fused into it. The computation's instructions are kept as the parameters and the
// body, in the order fused (root first; a producer fused later reads values fused
// before it only when they are shared, see clones), and written back in dependency
// order by close.
type fusedKernel struct {
	fusion *hlo.Instruction
	fc     *hlo.Computation
	body   []*hlo.Instruction
	// uses lists, per parameter, the operand slots of the body that read it.
	uses map[*hlo.Instruction][]operandSlot
	// clones maps each outer value fused into the kernel to its copy in the body.
	// A producer fused later that reads such a value reads the copy: without it,
	// a value two fused producers share would come back as a parameter and be
	// fused a second time, so the kernel would grow as the number of paths
	// through the fused graph (exponential in the depth of a graph like Philox
	// rounds, which reuse every value) instead of its size, and hit the
	// instruction bound with the shared intermediates left materialised.
	clones map[*hlo.Instruction]*hlo.Instruction
	// outputs lists the extra outputs (multi-output fusion), in the order fused.
	outputs []multiOutput
}

// operandSlot is operand k of in.
type operandSlot struct {
	in *hlo.Instruction
	k  int
}

// openKernel takes up a fusion instruction the pass did not make (from the input).
func openKernel(fusion *hlo.Instruction) *fusedKernel {
	fc := fusion.Called[0]
	k := newKernel(fusion, fc)
	for i := len(fc.Instructions) - 1; i >= 0; i-- {
		if in := fc.Instructions[i]; in.Op != hlo.OpParameter {
			k.body = append(k.body, in)
			k.noteUses(in)
		}
	}
	return k
}

func newKernel(fusion *hlo.Instruction, fc *hlo.Computation) *fusedKernel {
	return &fusedKernel{fusion: fusion, fc: fc, uses: map[*hlo.Instruction][]operandSlot{},
		clones: map[*hlo.Instruction]*hlo.Instruction{}}
}

// noteUses records the parameters in reads.
func (k *fusedKernel) noteUses(in *hlo.Instruction) {
	for j, x := range in.Operands {
		if x.Op == hlo.OpParameter {
			k.uses[x] = append(k.uses[x], operandSlot{in, j})
		}
	}
}

// wrap turns in, in place, into a fusion instruction of the same name whose
// computation holds a copy of in over one parameter per distinct operand. Being
// the same instruction, it keeps in's users and its place.
func (f *fuser) wrap(in *hlo.Instruction) *fusedKernel {
	fc := &hlo.Computation{Name: f.names.fresh("fused_" + in.Name)}
	root := &hlo.Instruction{Name: f.names.fresh(in.Name), Op: in.Op, Shape: in.Shape.Clone(),
		Attrs: in.Attrs, Called: in.Called}
	operands := in.Operands
	in.Op, in.Operands, in.Attrs, in.Called = hlo.OpFusion, nil, hlo.Attributes{}, []*hlo.Computation{fc}
	k := newKernel(in, fc)
	for _, x := range operands {
		p, _ := k.paramFor(x, f.names)
		root.Operands = append(root.Operands, p)
	}
	fc.Root = root
	k.body = append(k.body, root)
	k.noteUses(root)
	f.added = append(f.added, fc)
	return k
}

// fuse copies producer p into k's computation in place of p's parameter. p's
// operands already fused into k are read from their copies; the others become
// parameters.
func (f *fuser) fuse(k *fusedKernel, p *hlo.Instruction) *hlo.Instruction {
	j := slices.Index(k.fusion.Operands, p)
	clone := &hlo.Instruction{Name: f.names.fresh(p.Name), Op: p.Op, Shape: p.Shape.Clone(),
		Attrs: p.Attrs.Clone(), Called: p.Called}
	for _, x := range p.Operands {
		if c, ok := k.clones[x]; ok {
			clone.Operands = append(clone.Operands, c)
			continue
		}
		param, added := k.paramFor(x, f.names)
		if added {
			f.addUser(x, k.fusion)
		}
		clone.Operands = append(clone.Operands, param)
	}
	k.replaceParam(j, clone)
	k.body = append(k.body, clone)
	k.noteUses(clone)
	k.clones[p] = clone
	f.dropUser(p, k.fusion)
	if f.users[p.ID].all == 0 {
		f.remove(p)
	}
	f.changed = true
	return clone
}

// remove marks p, which nothing reads any more, removed, and with it the operands
// it was the last reader of: a value that only dead code reads must not count as
// read, or a producer it reads would look shared and stay out of a kernel (a
// layernorm's mean, read by the kernel and by a centred copy the kernel made dead).
func (f *fuser) remove(p *hlo.Instruction) {
	f.removed[p.ID] = true
	for _, x := range distinct(p.Operands) {
		f.dropUser(x, p)
		if f.users[x.ID].all == 0 && !f.removed[x.ID] && x != f.c.Root && x.Op != hlo.OpParameter && x.SideEffectFree() {
			f.remove(x)
		}
	}
}

// paramFor returns k's parameter for outer value x, adding a parameter (and an
// operand of the fusion) if x is not one yet; added says which.
func (k *fusedKernel) paramFor(x *hlo.Instruction, names *nameSet) (p *hlo.Instruction, added bool) {
	if j := slices.Index(k.fusion.Operands, x); j >= 0 {
		return k.fc.Params[j], false
	}
	p = &hlo.Instruction{Name: names.fresh("param_" + x.Name), Op: hlo.OpParameter,
		Shape: x.Shape.Clone(), Attrs: hlo.Attributes{ParameterNumber: int64(len(k.fc.Params))}}
	k.fc.Params = append(k.fc.Params, p)
	k.fusion.Operands = append(k.fusion.Operands, x)
	return p, true
}

// replaceParam makes every reader of parameter j read repl instead, and removes
// the parameter and the matching operand of the fusion.
func (k *fusedKernel) replaceParam(j int, repl *hlo.Instruction) {
	param := k.fc.Params[j]
	for _, s := range k.uses[param] {
		s.in.Operands[s.k] = repl
	}
	delete(k.uses, param)
	if k.fc.Root == param {
		k.fc.Root = repl
	}
	k.fc.Params = slices.Delete(k.fc.Params, j, j+1)
	k.fusion.Operands = slices.Delete(k.fusion.Operands, j, j+1)
}

// close writes the computation's instructions back: the parameters ordered as
// their values appear in the outer computation (so that the signature reads like
// the unfused code), then the body in dependency order.
func (k *fusedKernel) close() {
	fc, fusion := k.fc, k.fusion
	order := make([]int, len(fc.Params))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return fusion.Operands[a].ID - fusion.Operands[b].ID })
	ops, params := make([]*hlo.Instruction, len(order)), make([]*hlo.Instruction, len(order))
	for i, j := range order {
		ops[i], params[i] = fusion.Operands[j], fc.Params[j]
		params[i].Attrs.ParameterNumber = int64(i)
	}
	fusion.Operands, fc.Params = ops, params
	fc.Instructions = append(slices.Clone(params), k.bodyInOrder()...)
	fc.Renumber()
	fusion.Attrs.FusionKind = fusionKind(fc)
}

// bodyInOrder lists the body so that every instruction follows its operands:
// depth first from the instructions fused last, which, where nothing is shared,
// is exactly the fused order reversed.
func (k *fusedKernel) bodyInOrder() []*hlo.Instruction {
	out := make([]*hlo.Instruction, 0, len(k.body))
	placed := make(map[*hlo.Instruction]bool, len(k.body))
	var place func(in *hlo.Instruction)
	place = func(in *hlo.Instruction) {
		if in.Op == hlo.OpParameter || placed[in] {
			return
		}
		placed[in] = true
		for _, x := range in.Operands {
			place(x)
		}
		out = append(out, in)
	}
	for i := len(k.body) - 1; i >= 0; i-- {
		place(k.body[i])
	}
	return out
}

// fusionKind is kInput for a reduction root, kOutput for a dot or convolution with
// its epilogue,
// kLoop otherwise.
func fusionKind(fc *hlo.Computation) hlo.FusionKind {
	switch {
	case fc.Root.Op == hlo.OpReduce:
		return hlo.FusionInput
	case slices.ContainsFunc(fc.Instructions, isContraction):
		return hlo.FusionOutput
	}
	return hlo.FusionLoop
}
