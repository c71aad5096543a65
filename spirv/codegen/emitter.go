package codegen

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// The elemental emitter, after XLA's: emit(in, idx) produces the SPIR-V value of the
// element at multi-index idx (index-typed ids, one per dimension) of instruction in,
// by asking its operands for the elements it needs. Elementwise ops ask for the same
// index; data movement rewrites the index; reductions and contractions loop over the
// elements they combine. A whole kernel computation therefore becomes one expression
// per output element, which is what makes fusion free: a fused computation is
// lowered exactly like a single op.
//
// Values are cached per (instruction, index ids) so that an operand used twice at one
// index is computed once. Code inside a branch or loop body does not dominate the
// code after it, so those regions open a cache scope (scoped) whose entries are
// dropped when the region closes.

// elementalFunc emits the element(s) of an instruction at idx: one value for an array
// result, one per tuple element for a tuple-shaped result.
type elementalFunc func(g *gen, in *hlo.Instruction, idx []spirv.ID) []spirv.ID

// elementalOps holds the ops that are not unary or binary elementwise (those two
// kinds share one emitter each). TestElementalCoverage checks it against the op table.
var elementalOps map[hlo.Opcode]elementalFunc

func init() {
	elementalOps = map[hlo.Opcode]elementalFunc{
		hlo.OpParameter: one(emitParameter), hlo.OpConstant: one(emitConstant),
		hlo.OpIota:    one(emitIota),
		hlo.OpCompare: one(emitCompare), hlo.OpSelect: one(emitSelect), hlo.OpClamp: one(emitClamp),
		hlo.OpConvert: one(emitConvert), hlo.OpBitcastConvert: one(emitBitcastConvert),
		hlo.OpBroadcast: one(emitBroadcast), hlo.OpReshape: one(emitReshape),
		hlo.OpTranspose: one(emitTranspose), hlo.OpSlice: one(emitSlice),
		hlo.OpConcatenate: one(emitConcatenate), hlo.OpPad: one(emitPad),
		hlo.OpReverse: one(emitReverse), hlo.OpCopy: one(emitCopy),
		hlo.OpDynamicSlice:       one(emitDynamicSlice),
		hlo.OpDynamicUpdateSlice: one(emitDynamicUpdateSlice), hlo.OpGather: one(emitGather),
		hlo.OpReduce: emitReduce, hlo.OpReduceWindow: emitReduceWindow,
		hlo.OpSelectAndScatter: one(emitSelectAndScatter),
		hlo.OpDot:              one(emitDot), hlo.OpConvolution: one(emitConvolution),
		hlo.OpTuple: emitTuple, hlo.OpGetTupleElement: emitGetTupleElement,
		hlo.OpComplex: one(emitComplex),
	}
}

// one adapts a single-valued emitter.
func one(fn func(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID) elementalFunc {
	return func(g *gen, in *hlo.Instruction, idx []spirv.ID) []spirv.ID {
		return []spirv.ID{fn(g, in, idx)}
	}
}

// gen emits elements of the instructions of one computation into a kernel.
type gen struct {
	k *kernel
	// param reads element idx of a parameter: a buffer load in a kernel
	// computation, a bound argument in an inlined scalar computation.
	param  func(p *hlo.Instruction, idx []spirv.ID) spirv.ID
	scopes []map[string][]spirv.ID
	// arrays holds the Function variable of each non-uniform array constant,
	// initialised in the kernel's prologue (prepareConstants).
	arrays map[*hlo.Instruction]spirv.ID
}

func newGen(k *kernel, param func(p *hlo.Instruction, idx []spirv.ID) spirv.ID) *gen {
	return &gen{k: k, param: param, scopes: []map[string][]spirv.ID{{}},
		arrays: map[*hlo.Instruction]spirv.ID{}}
}

// fail records an error naming the instruction.
func (g *gen) fail(in *hlo.Instruction, format string, args ...any) {
	g.k.failf("%s (%v %v): %s", in.Name, in.Op, in.Shape, fmt.Sprintf(format, args...))
}

// emit returns the element of an array-shaped instruction at idx.
func (g *gen) emit(in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	vs := g.emitN(in, idx)
	if len(vs) != 1 {
		g.fail(in, "a tuple-shaped value is used as an array")
		return 0
	}
	return vs[0]
}

// emitN returns the element(s) of any instruction at idx, cached per scope.
func (g *gen) emitN(in *hlo.Instruction, idx []spirv.ID) []spirv.ID {
	if g.k.err != nil {
		return g.placeholder(in)
	}
	key := valueKey(in, idx)
	for s := len(g.scopes) - 1; s >= 0; s-- {
		if vs, ok := g.scopes[s][key]; ok {
			return vs
		}
	}
	vs := g.compute(in, idx)
	g.define(in, idx, vs)
	return vs
}

// valueKey is the cache key of in's element(s) at idx.
func valueKey(in *hlo.Instruction, idx []spirv.ID) string { return fmt.Sprintf("%p%v", in, idx) }

// define caches vals as the element(s) of in at idx in the innermost scope: emitN's
// own cache, and how a row kernel hands in the reductions it computed up front.
func (g *gen) define(in *hlo.Instruction, idx []spirv.ID, vals []spirv.ID) {
	g.scopes[len(g.scopes)-1][valueKey(in, idx)] = vals
}

// memo returns the value cached under key in the visible scopes, or makes it with
// mk and caches it in the innermost one.
func (g *gen) memo(key string, mk func() spirv.ID) spirv.ID {
	return g.memoN(key, func() []spirv.ID { return []spirv.ID{mk()} })[0]
}

// memoN is memo for a list of values.
func (g *gen) memoN(key string, mk func() []spirv.ID) []spirv.ID {
	for s := len(g.scopes) - 1; s >= 0; s-- {
		if vs, ok := g.scopes[s][key]; ok {
			return vs
		}
	}
	vs := mk()
	g.scopes[len(g.scopes)-1][key] = vs
	return vs
}

// placeholder returns zero values of the right count after an error, so that
// emission can unwind without special cases.
func (g *gen) placeholder(in *hlo.Instruction) []spirv.ID {
	if in.Shape.IsTuple() {
		return make([]spirv.ID, len(in.Shape.Elems))
	}
	return []spirv.ID{0}
}

func (g *gen) compute(in *hlo.Instruction, idx []spirv.ID) []spirv.ID {
	if len(idx) != in.Shape.Rank() && !in.Shape.IsTuple() {
		g.fail(in, "internal: index of rank %d", len(idx))
		return g.placeholder(in)
	}
	switch in.Info().Kind {
	case hlo.KindUnary:
		return []spirv.ID{emitUnary(g, in, idx)}
	case hlo.KindBinary:
		return []spirv.ID{emitBinary(g, in, idx)}
	}
	fn, ok := elementalOps[in.Op]
	if !ok {
		g.fail(in, "cannot be emitted per element inside a kernel computation (it needs its own kernel; see docs/codegen.md)")
		return g.placeholder(in)
	}
	return fn(g, in, idx)
}

// scoped runs body in a fresh cache scope: values it creates are not reused after
// it, where they would not dominate their uses.
func (g *gen) scoped(body func()) {
	g.scopes = append(g.scopes, map[string][]spirv.ID{})
	body()
	g.scopes = g.scopes[:len(g.scopes)-1]
}

// ifValue is cond ? then() : els() with each arm in its own block and cache scope,
// so that an arm may read memory that is only valid when it is taken.
func (g *gen) ifValue(t, cond spirv.ID, then, els func() spirv.ID) spirv.ID {
	arm := func(body func() spirv.ID) func() spirv.ID {
		return func() (v spirv.ID) {
			g.scoped(func() { v = body() })
			return v
		}
	}
	return g.k.f.IfValue(t, cond, arm(then), arm(els))
}

// unrollLimit is the largest trip count that loops emit unrolled: small windows and
// short contractions become straight-line code with constant indices (cheaper, and
// free of lavapipe's loop-iteration budget).
const unrollLimit = 8

// loop runs body(i) for i in [0, n), each iteration in its own cache scope.
func (g *gen) loop(n int64, body func(i spirv.ID)) {
	if n <= unrollLimit {
		for i := range n {
			g.scoped(func() { body(g.k.ic(i)) })
		}
		return
	}
	g.k.loop(n, func(i spirv.ID) { g.scoped(func() { body(i) }) })
}

// call inlines a scalar computation (a reducer, comparator or select) on register
// arguments and returns its result(s).
func (g *gen) call(c *hlo.Computation, args []spirv.ID) []spirv.ID {
	child := &gen{k: g.k, scopes: []map[string][]spirv.ID{{}}, arrays: g.arrays}
	child.param = func(p *hlo.Instruction, _ []spirv.ID) spirv.ID {
		n := int(p.Attrs.ParameterNumber)
		if n >= len(args) {
			g.k.failf("called computation %s: parameter %d of %d", c.Name, n, len(args))
			return 0
		}
		return args[n]
	}
	return child.emitN(c.Root, nil)
}

// scalarIndex is the index of a rank-0 value.
var scalarIndex []spirv.ID

func emitParameter(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	if !in.Shape.IsArray() {
		g.fail(in, "tuple-shaped parameters are not supported in kernels")
		return 0
	}
	return g.param(in, idx)
}

func emitTuple(g *gen, in *hlo.Instruction, idx []spirv.ID) []spirv.ID {
	var vs []spirv.ID
	for _, x := range in.Operands {
		vs = append(vs, g.emitN(x, idx)...)
	}
	return vs
}

func emitGetTupleElement(g *gen, in *hlo.Instruction, idx []spirv.ID) []spirv.ID {
	x := in.Operands[0]
	i := int(in.Attrs.TupleIndex)
	if !x.Shape.IsTuple() || i >= len(x.Shape.Elems) || !x.Shape.Elems[i].IsArray() {
		g.fail(in, "get-tuple-element %d of %v (nested tuples are not supported)", i, x.Shape)
		return []spirv.ID{0}
	}
	return []spirv.ID{g.emitN(x, idx)[i]}
}

// maxInlineConstant bounds array constants emitted into kernels; the runtime passes
// larger ones as inputs.
const maxInlineConstant = 4096

// prepareConstants initialises a Function variable for every non-uniform array
// constant of c and the computations it calls, at the current point (the kernel's
// entry, which dominates every use).
func (g *gen) prepareConstants(c *hlo.Computation) {
	for _, in := range c.Instructions {
		for _, callee := range in.Called {
			g.prepareConstants(callee)
		}
		lit := in.Attrs.Literal
		if in.Op != hlo.OpConstant || lit == nil || g.arrays[in] != 0 || lit.IsUniform() {
			continue
		}
		n := lit.NumElements()
		if n > maxInlineConstant {
			g.fail(in, "an array constant of %d elements is too large to emit inline (the limit is %d; pass it as an input)", n, maxInlineConstant)
			return
		}
		k := g.k
		parts := make([]spirv.ID, n)
		for i := range parts {
			parts[i] = k.constant(lit, i)
		}
		t := k.m.TypeArray(k.regType(lit.DType()), uint32(n))
		g.arrays[in] = k.variable(t, k.m.ConstComposite(t, parts...), in.Name)
	}
}

func emitConstant(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	lit := in.Attrs.Literal
	if lit == nil || !lit.Shape().IsArray() {
		g.fail(in, "constant without an array literal")
		return 0
	}
	k := g.k
	if lit.NumElements() == 0 {
		return k.zero(lit.DType())
	}
	if lit.IsUniform() {
		return k.constant(lit, 0)
	}
	v := g.arrays[in]
	if v == 0 {
		g.fail(in, "internal: array constant not prepared")
		return 0
	}
	return k.f.Load(k.f.AccessChain(v, k.linearize(idx, in.Shape.Dims)))
}
