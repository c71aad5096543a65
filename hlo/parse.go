package hlo

import (
	"fmt"
	"os"
	"strings"
)

// The HLO text parser: XLA's syntax for the supported op set, as XLA dumps it and as
// hand-written tests write it. See docs/ir.md for what is accepted and ignored.
//
// Parsing runs in three steps: each computation is read into instructions that refer
// to operands by name; names are then resolved within the computation (so operands may
// be defined later in the text) and the instructions sorted topologically; finally
// called computations are resolved across the module (so the ENTRY computation and
// callees may appear in any order) and the computations ordered callees first.

// ParseModule parses HLO text and checks the result: every declared shape must be
// the one shape inference gives for its operands and attributes (CheckShape), then the
// module verifier runs. Errors name line:column.
func ParseModule(text string) (*Module, error) {
	return parse(text, true)
}

// ParseModuleFile reads and parses an HLO text file; errors are prefixed with the path.
func ParseModuleFile(path string) (*Module, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := ParseModule(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	return m, nil
}

// ParseModuleUnverified parses HLO text without checking shapes: the syntax, names,
// operand counts, attributes and operand shape annotations are checked, but not that
// the declared shapes follow from the operands. Tests of the verifier and of passes use
// it to build modules that are deliberately invalid.
func ParseModuleUnverified(text string) (*Module, error) {
	return parse(text, false)
}

func parse(text string, verify bool) (m *Module, err error) {
	p := &parser{lexer: lexer{src: text}, comps: map[string]*compText{}}
	defer func() {
		// The parser is written not to panic; this keeps a bug from crashing a caller.
		// FuzzParse fails on this message, so such a bug cannot hide.
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("%s: %v", internalParserError, r)
		}
	}()
	if m, err = p.parseModule(); err != nil {
		return nil, err
	}
	if verify {
		if err := p.verify(m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

const internalParserError = "internal HLO parser error"

// maxElidedBytes bounds the size of one elided constant that the parser materialises
// (1 GiB); tests lower it so that fuzzing never allocates much.
var maxElidedBytes int64 = 1 << 30

type parser struct {
	lexer
	comps   map[string]*compText
	order   []*compText // text order
	current *compText   // the computation being read
	calls   []pendingCall
	// tupleDepth is how many tuple shapes enclose the shape being read.
	tupleDepth int
	// lastLayout is the minor-to-major layout of the last array shape read (nil:
	// none written); bitcast reads its operand's and result's.
	lastLayout []int64
}

// compText is one computation as read, before names are resolved.
type compText struct {
	comp    *Computation
	pos     int
	isEntry bool
	sig     *compSignature
	insts   []*instText
	// named are the instructions that attributes name (control-predecessors).
	named []operandRef
}

type compSignature struct {
	params    []sigParam
	result    Shape
	resultPos int
}

type sigParam struct {
	name  string
	shape Shape
	pos   int
}

// instText is one instruction as read, with its operands still names.
type instText struct {
	inst     *Instruction
	pos      int
	isRoot   bool
	operands []operandRef
	layout   []int64 // the result shape's layout as written (nil: none)
}

type operandRef struct {
	name   string
	shape  *Shape  // the annotation before the name, if any
	layout []int64 // the annotation's layout (nil: none written)
	pos    int
}

// pendingCall is a computation reference, resolved once the whole module is read.
type pendingCall struct {
	from  *compText
	inst  *Instruction
	index int
	name  string
	pos   int
}

func (p *parser) parseModule() (*Module, error) {
	if t := p.next(); t.kind != tokName || t.text != "HloModule" {
		return nil, p.errorAt(t.pos, "expected 'HloModule' at start of module, found %s", t.describe())
	}
	name := p.next()
	if name.kind != tokName {
		return nil, p.errorAt(name.pos, "expected module name after 'HloModule', found %s", name.describe())
	}
	aliases, err := p.parseModuleAttributes()
	if err != nil {
		return nil, err
	}
	if err := p.skipStackFrameIndex(); err != nil {
		return nil, err
	}
	for p.peek().kind != tokEOF {
		if err := p.parseComputation(); err != nil {
			return nil, err
		}
	}
	return p.buildModule(strings.TrimPrefix(name.text, "%"), aliases)
}

// stackFrameSections are the sections of the stack frame index XLA prints after the
// module header when instructions' metadata carry stack_frame_id: each a keyword
// and entries "n value", the value a string (file and function names) or a braced
// record (file locations, frames).
var stackFrameSections = []struct {
	keyword string
	braced  bool
}{{"FileNames", false}, {"FunctionNames", false}, {"FileLocations", true}, {"StackFrames", true}}

// skipStackFrameIndex reads and drops the stack frame index, if there is one: it is
// debug information for metadata, which vkxla drops too.
func (p *parser) skipStackFrameIndex() error {
	if t := p.peek(); t.kind != tokName || t.text != stackFrameSections[0].keyword {
		return nil
	}
	for _, sec := range stackFrameSections {
		if t := p.next(); t.kind != tokName || t.text != sec.keyword {
			return p.errorAt(t.pos, "expected %s in the stack frame index, found %s", sec.keyword, t.describe())
		}
		for p.peek().kind == tokNumber {
			if _, err := p.parseInt(); err != nil {
				return err
			}
			var err error
			if sec.braced {
				err = p.skipValue(sec.keyword)
			} else {
				_, err = p.parseString(sec.keyword)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// parseScopeAttributes reads the ", name=value" pairs after a computation or in the
// module header (where), by the table of attr_xla.go; read handles the honoured
// ones, and reports whether it did.
func (p *parser) parseScopeAttributes(scope attrScope, where string, read func(name token) (bool, error)) error {
	seen := map[string]bool{}
	for p.accept(",") {
		name := p.next()
		if name.kind != tokName {
			return p.errorAt(name.pos, "expected attribute name in %s, found %s", where, name.describe())
		}
		if err := p.expect("=", "after attribute name "+name.text); err != nil {
			return err
		}
		if seen[name.text] {
			return p.errorAt(name.pos, "duplicate attribute %s in %s", name.text, where)
		}
		seen[name.text] = true
		if err := namingAttribute(name.text, p.readScopeAttribute(scope, where, name, read)); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) readScopeAttribute(scope attrScope, where string, name token, read func(name token) (bool, error)) error {
	if done, err := read(name); done || err != nil {
		return err
	}
	a, ok := lookupXLAAttr(name.text, scope, "")
	if !ok {
		return p.errorAt(name.pos, "unknown attribute %s in %s", name.text, where)
	}
	return p.readXLAAttr(a, name, where)
}

// skipValue skips an ignored attribute's value: a balanced {…}, […] or (…) group, a
// quoted string, or a bare word.
func (p *parser) skipValue(attr string) error {
	t := p.peek()
	switch {
	case t.text == "{" || t.text == "[" || t.text == "(":
		if !p.skipBalanced() {
			return p.errorAt(t.pos, "unterminated %s in the value of %s", t.text, attr)
		}
	case t.kind == tokString:
		return p.stringToken(attr)
	default:
		if word, pos := p.atom(); word == "" {
			return p.errorAt(pos, "expected a value for attribute %s, found %s", attr, t.describe())
		}
	}
	return nil
}

// stringToken consumes a quoted string, reporting an unterminated one.
func (p *parser) stringToken(attr string) error {
	if t := p.next(); !stringClosed(t.text) {
		return p.errorAt(t.pos, "unterminated string in the value of %s", attr)
	}
	return nil
}

// stringClosed reports whether a string token ends with its closing, unescaped quote.
func stringClosed(s string) bool {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i == len(s)-1
		}
	}
	return false
}

// accept consumes the punctuation text if it comes next.
func (p *parser) accept(punct string) bool {
	if t := p.peek(); t.kind == tokPunct && t.text == punct {
		p.next()
		return true
	}
	return false
}

// expect consumes punctuation or reports "expected 'x' context, found …".
func (p *parser) expect(punct, context string) error {
	if t := p.peek(); !(t.kind == tokPunct && t.text == punct) {
		return p.errorAt(t.pos, "expected '%s' %s, found %s", punct, context, t.describe())
	}
	p.next()
	return nil
}

// parseComputation reads [ENTRY] name [signature] { instructions } [, attrs].
func (p *parser) parseComputation() error {
	ct := &compText{comp: &Computation{}}
	p.current = ct
	if err := p.parseComputationHead(ct); err != nil {
		return err
	}
	if err := p.parseBody(ct); err != nil {
		return err
	}
	noneHonoured := func(token) (bool, error) { return false, nil }
	if err := p.parseScopeAttributes(onComputation, "computation "+ct.comp.Name, noneHonoured); err != nil {
		return err
	}
	p.comps[ct.comp.Name] = ct
	p.order = append(p.order, ct)
	return p.resolveComputation(ct)
}

// parseComputationHead reads [ENTRY] name [(params) -> result].
func (p *parser) parseComputationHead(ct *compText) error {
	t := p.next()
	if t.kind == tokName && t.text == "ENTRY" {
		ct.isEntry = true
		t = p.next()
	}
	if t.kind != tokName {
		return p.errorAt(t.pos, "expected computation name, found %s", t.describe())
	}
	ct.comp.Name, ct.pos = strings.TrimPrefix(t.text, "%"), t.pos
	if prev, dup := p.comps[ct.comp.Name]; dup {
		line, col := p.lineCol(prev.pos)
		return p.errorAt(t.pos, "duplicate computation name %q (first defined at %d:%d)", ct.comp.Name, line, col)
	}
	if t := p.peek(); t.kind != tokPunct || t.text != "(" {
		return nil
	}
	sig, err := p.parseSignature()
	ct.sig = sig
	return err
}

// parseBody reads { instructions }.
func (p *parser) parseBody(ct *compText) error {
	if err := p.expect("{", "to start the body of computation "+ct.comp.Name); err != nil {
		return err
	}
	for !p.accept("}") {
		if t := p.peek(); t.kind == tokEOF {
			return p.errorAt(t.pos, "expected '}' to end computation %s, found end of input", ct.comp.Name)
		}
		it, err := p.parseInstruction()
		if err != nil {
			return err
		}
		ct.insts = append(ct.insts, it)
	}
	return nil
}

// parseSignature reads (x: f32[], y: f32[]) -> f32[].
func (p *parser) parseSignature() (*compSignature, error) {
	sig := &compSignature{}
	p.next() // (
	for !p.accept(")") {
		if len(sig.params) > 0 {
			if err := p.expect(",", "or ')' after a parameter in the signature"); err != nil {
				return nil, err
			}
		}
		name := p.next()
		if name.kind != tokName {
			return nil, p.errorAt(name.pos, "expected parameter name in the signature, found %s", name.describe())
		}
		if err := p.expect(":", "after parameter name "+name.text); err != nil {
			return nil, err
		}
		shape, err := p.parseShape()
		if err != nil {
			return nil, err
		}
		sig.params = append(sig.params, sigParam{strings.TrimPrefix(name.text, "%"), shape, name.pos})
	}
	if err := p.expect("->", "after the parameter list"); err != nil {
		return nil, err
	}
	sig.resultPos = p.peek().pos
	result, err := p.parseShape()
	sig.result = result
	return sig, err
}

// parseInstruction reads [ROOT] name = shape opcode(operands) [, attr=value]*.
func (p *parser) parseInstruction() (*instText, error) {
	it := &instText{inst: &Instruction{}}
	t := p.next()
	if t.kind == tokName && t.text == "ROOT" && p.peek().text != "=" {
		it.isRoot = true
		t = p.next()
	}
	if t.kind != tokName {
		return nil, p.errorAt(t.pos, "expected instruction name, found %s", t.describe())
	}
	in := it.inst
	in.Name, it.pos = strings.TrimPrefix(t.text, "%"), t.pos
	if err := p.expect("=", "after instruction name "+t.text); err != nil {
		return nil, err
	}
	shape, err := p.parseShape()
	if err != nil {
		return nil, err
	}
	in.Shape, it.layout = shape, p.lastLayout
	opTok := p.next()
	op, ok := LookupOpcode(opTok.text)
	if opTok.kind != tokName || !ok {
		return nil, p.errorAt(opTok.pos, "expected an opcode, found %s (not a supported HLO op)", opTok.describe())
	}
	in.Op = op
	if err := p.expect("(", "after opcode "+opTok.text); err != nil {
		return nil, err
	}
	if err := p.parsePayload(it); err != nil {
		return nil, err
	}
	if err := p.parseAttributes(it); err != nil {
		return nil, err
	}
	return it, nil
}

// parsePayload reads what stands in the parentheses, through the closing ')':
// parameter's number, constant's literal, or the operands.
func (p *parser) parsePayload(it *instText) error {
	in := it.inst
	switch in.Op {
	case OpParameter:
		n, err := p.parseInt()
		if err != nil {
			return err
		}
		if n < 0 {
			return p.errorAt(it.pos, "parameter number %d is negative", n)
		}
		in.Attrs.ParameterNumber = n
	case OpConstant:
		lit, err := p.parseConstant(in.Shape, in.Name)
		if err != nil {
			return err
		}
		in.Attrs.Literal = lit
	default:
		if err := p.parseOperands(it); err != nil {
			return err
		}
		return p.checkArity(it)
	}
	return p.expect(")", "after the "+in.Op.String()+" value")
}

// parseOperands reads "[shape] name, …)" through the closing parenthesis.
func (p *parser) parseOperands(it *instText) error {
	if p.accept(")") {
		return nil
	}
	for {
		ref, err := p.parseOperand()
		if err != nil {
			return err
		}
		it.operands = append(it.operands, ref)
		if p.accept(")") {
			return nil
		}
		if err := p.expect(",", "or ')' after operand"); err != nil {
			return err
		}
	}
}

// parseOperand reads an operand with an optional shape annotation: f32[2]{0} %x, or x.
func (p *parser) parseOperand() (operandRef, error) {
	var ref operandRef
	if p.shapeFollows() {
		shape, err := p.parseShape()
		if err != nil {
			return ref, err
		}
		ref.shape, ref.layout = &shape, p.lastLayout
	}
	t := p.next()
	if t.kind != tokName {
		return ref, p.errorAt(t.pos, "expected operand name, found %s", t.describe())
	}
	ref.name, ref.pos = strings.TrimPrefix(t.text, "%"), t.pos
	return ref, nil
}

// shapeFollows reports whether an operand starts with a shape: "(" of a tuple shape,
// or an element type name directly followed by '['.
func (p *parser) shapeFollows() bool {
	t := p.peek()
	if t.kind == tokPunct && t.text == "(" {
		return true
	}
	end := t.pos + len(t.text)
	return t.kind == tokName && end < len(p.src) && p.src[end] == '['
}

func (p *parser) checkArity(it *instText) error {
	in := it.inst
	arity := in.Info().Arity
	if arity != Variadic && len(it.operands) != arity {
		return p.errorAt(it.pos, "%s takes %d operand(s), found %d", in.Op, arity, len(it.operands))
	}
	return nil
}

// parseAttributes reads ", name=value" pairs: the opcode's own attributes into the
// instruction, ignorable ones skipped; anything else is an error naming it.
func (p *parser) parseAttributes(it *instText) error {
	in := it.inst
	seen := map[string]bool{}
	for p.accept(",") {
		t := p.next()
		if t.kind != tokName {
			return p.errorAt(t.pos, "expected attribute name after ',', found %s", t.describe())
		}
		if err := p.expect("=", "after attribute name "+t.text); err != nil {
			return err
		}
		if seen[t.text] {
			return p.errorAt(t.pos, "duplicate attribute %s", t.text)
		}
		seen[t.text] = true
		if err := p.parseAttribute(in, t); err != nil {
			return err
		}
	}
	return p.checkRequired(it, seen)
}

// parseAttribute reads one attribute: the opcode's own into the instruction, any
// other that XLA gives this opcode by the table of attr_xla.go (read and dropped,
// or refused). Errors name the attribute.
func (p *parser) parseAttribute(in *Instruction, name token) error {
	return namingAttribute(name.text, p.readAttribute(in, name))
}

func (p *parser) readAttribute(in *Instruction, name token) error {
	for _, a := range opAttrs[in.Op] {
		if a.name == name.text {
			return a.codec.parse(p, in)
		}
	}
	op := in.Op.String()
	if a, ok := lookupXLAAttr(name.text, onInstruction, op); ok {
		if a.keep != nil {
			return a.keep(p, in)
		}
		return p.readXLAAttr(a, name, op)
	}
	if ops := xlaAttrOps(name.text); ops != nil {
		return p.errorAt(name.pos, "attribute %s does not apply to %s (XLA gives it to %s)", name.text, op, strings.Join(ops, ", "))
	}
	return p.errorAt(name.pos, "unknown attribute %s on %s", name.text, op)
}

// namingAttribute makes a parse error of an attribute's value name the attribute.
func namingAttribute(attr string, err error) error {
	if pe, ok := err.(*ParseError); ok && !strings.Contains(pe.Msg, attr) {
		pe.Msg += " (in attribute " + attr + ")"
	}
	return err
}

// checkRequired reports a missing required attribute, and applies XLA's defaults.
func (p *parser) checkRequired(it *instText, seen map[string]bool) error {
	in := it.inst
	for _, a := range opAttrs[in.Op] {
		if a.required && !seen[a.name] {
			return p.errorAt(it.pos, "%s %s is missing attribute %s", in.Op, in.Name, a.name)
		}
	}
	switch in.Op {
	case OpConditional:
		return p.checkBranches(it, seen)
	case OpDot:
		dotDims(&in.Attrs)
	case OpCustomCall:
		target := in.Attrs.CustomCall.Target
		if _, ok := LookupCustomCall(target); !ok {
			e := p.errorAt(it.pos, "%v", unknownTarget(target, in.Name))
			e.Err = ErrUnknownCustomCall
			return e
		}
	}
	return nil
}

// checkBranches requires either branch_computations or both true_computation and
// false_computation, not a mix.
func (p *parser) checkBranches(it *instText, seen map[string]bool) error {
	trueFalse := seen["true_computation"] || seen["false_computation"]
	switch {
	case seen["branch_computations"] && trueFalse:
		return p.errorAt(it.pos, "conditional %s has both branch_computations and true/false_computation", it.inst.Name)
	case seen["branch_computations"]:
		return nil
	case seen["true_computation"] && seen["false_computation"]:
		return nil
	}
	return p.errorAt(it.pos, "conditional %s is missing attribute branch_computations (or true_computation and false_computation)", it.inst.Name)
}

// resolveComputation resolves operand names, orders the instructions operands first,
// and collects the parameters and the root.
func (p *parser) resolveComputation(ct *compText) error {
	if len(ct.insts) == 0 {
		return p.errorAt(ct.pos, "computation %s has no instructions", ct.comp.Name)
	}
	byName, err := p.indexNames(ct)
	if err != nil {
		return err
	}
	for _, ref := range ct.named {
		if _, ok := byName[ref.name]; !ok {
			return p.errorAt(ref.pos, "unknown instruction %q in control-predecessors (not in computation %s)", ref.name, ct.comp.Name)
		}
	}
	for _, it := range ct.insts {
		if err := p.resolveOperands(it, byName); err != nil {
			return err
		}
	}
	if err := p.sortInstructions(ct); err != nil {
		return err
	}
	if err := p.setRoot(ct); err != nil {
		return err
	}
	if err := p.setParams(ct); err != nil {
		return err
	}
	return p.checkSignature(ct)
}

func (p *parser) indexNames(ct *compText) (map[string]*instText, error) {
	byName := make(map[string]*instText, len(ct.insts))
	for _, it := range ct.insts {
		if prev, dup := byName[it.inst.Name]; dup {
			line, col := p.lineCol(prev.pos)
			return nil, p.errorAt(it.pos, "duplicate instruction name %q (first defined at %d:%d)", it.inst.Name, line, col)
		}
		byName[it.inst.Name] = it
	}
	return byName, nil
}

func (p *parser) resolveOperands(it *instText, byName map[string]*instText) error {
	in := it.inst
	for _, ref := range it.operands {
		def, ok := byName[ref.name]
		if !ok {
			return p.errorAt(ref.pos, "unknown operand %q of %s", ref.name, in.Name)
		}
		if ref.shape != nil && !ref.shape.Equal(def.inst.Shape) {
			return p.errorAt(ref.pos, "operand %s is annotated %v but has shape %v", ref.name, *ref.shape, def.inst.Shape)
		}
		in.Operands = append(in.Operands, def.inst)
		if in.Op == OpBitcast {
			layout := def.layout
			if ref.layout != nil {
				layout = ref.layout
			}
			in.Attrs.Layouts = bitcastLayouts(layout, it.layout, def.inst.Shape.Rank(), in.Shape.Rank())
		}
	}
	return nil
}

// sortInstructions orders instructions so that operands come before users, keeping
// the text order where it already is one (a stable depth-first post-order). A cycle
// is an error at an instruction on it.
func (p *parser) sortInstructions(ct *compText) error {
	s := &topoSort{state: map[*Instruction]visitState{}}
	for _, it := range ct.insts {
		if cycle := s.visit(it.inst); cycle != nil {
			return p.errorAt(ct.posOf(cycle), "instruction %s depends on itself (a cycle through its operands)", cycle.Name)
		}
	}
	ct.comp.Instructions = s.sorted
	return nil
}

// posOf finds where an instruction of the computation is defined.
func (ct *compText) posOf(in *Instruction) int {
	for _, it := range ct.insts {
		if it.inst == in {
			return it.pos
		}
	}
	return ct.pos
}

type visitState uint8

const (
	visitNone visitState = iota
	visitOpen
	visitDone
)

// topoSort is an iterative depth-first post-order over operands (iterative, so that a
// long chain of instructions cannot exhaust the stack).
type topoSort struct {
	state  map[*Instruction]visitState
	sorted []*Instruction
}

// visit appends root and its unvisited operands, operands first; it returns an
// instruction on a cycle, if it meets one.
func (s *topoSort) visit(root *Instruction) *Instruction {
	if s.state[root] != visitNone {
		return nil
	}
	type frame struct {
		in   *Instruction
		next int
	}
	stack := []frame{{in: root}}
	s.state[root] = visitOpen
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.in.Operands) {
			s.state[top.in] = visitDone
			s.sorted = append(s.sorted, top.in)
			stack = stack[:len(stack)-1]
			continue
		}
		op := top.in.Operands[top.next]
		top.next++
		switch s.state[op] {
		case visitOpen:
			return op
		case visitNone:
			s.state[op] = visitOpen
			stack = append(stack, frame{in: op})
		}
	}
	return nil
}

// setRoot takes the ROOT instruction, or the last one in the text when none is marked
// (as XLA does).
func (p *parser) setRoot(ct *compText) error {
	for _, it := range ct.insts {
		if !it.isRoot {
			continue
		}
		if ct.comp.Root != nil {
			return p.errorAt(it.pos, "computation %s has more than one ROOT", ct.comp.Name)
		}
		ct.comp.Root = it.inst
	}
	if ct.comp.Root == nil {
		ct.comp.Root = ct.insts[len(ct.insts)-1].inst
	}
	return nil
}

// setParams orders the parameters by number; the numbers must be 0…n-1.
func (p *parser) setParams(ct *compText) error {
	var params []*instText
	for _, it := range ct.insts {
		if it.inst.Op == OpParameter {
			params = append(params, it)
		}
	}
	ct.comp.Params = make([]*Instruction, len(params))
	for _, it := range params {
		n := it.inst.Attrs.ParameterNumber
		if n >= int64(len(params)) {
			return p.errorAt(it.pos, "parameter(%d) in computation %s, which has %d parameters (numbers must be 0…%d)",
				n, ct.comp.Name, len(params), len(params)-1)
		}
		if ct.comp.Params[n] != nil {
			return p.errorAt(it.pos, "duplicate parameter(%d) in computation %s", n, ct.comp.Name)
		}
		ct.comp.Params[n] = it.inst
	}
	return nil
}

// checkSignature compares a written signature with the parameters and the root.
func (p *parser) checkSignature(ct *compText) error {
	sig, c := ct.sig, ct.comp
	if sig == nil {
		return nil
	}
	if len(sig.params) != len(c.Params) {
		return p.errorAt(ct.pos, "signature of %s lists %d parameters, the body has %d", c.Name, len(sig.params), len(c.Params))
	}
	for i, sp := range sig.params {
		if !sp.shape.Equal(c.Params[i].Shape) {
			return p.errorAt(sp.pos, "signature gives parameter %d of %s shape %v, the body declares %v", i, c.Name, sp.shape, c.Params[i].Shape)
		}
	}
	if !sig.result.Equal(c.Root.Shape) {
		return p.errorAt(sig.resultPos, "signature gives %s result shape %v, its root %s has %v", c.Name, sig.result, c.Root.Name, c.Root.Shape)
	}
	return nil
}
