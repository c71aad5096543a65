package spirv

// Function is a function under construction. Instructions are appended to the
// current block; the control-flow helpers (If, For, While) open and close
// blocks so that straight-line emission code never names a label.
type Function struct {
	m      *Module
	id     ID
	ret    ID
	typ    ID
	params []ID
	vars   section // Function-storage OpVariables, hoisted to the entry block
	// head holds straight-line code hoisted to the start of the entry block, after
	// the variables (InEntry): values every later block may use.
	head    section
	inEntry bool
	blocks  []*block
	cur     *block
	loops   []loopFrame
}

type block struct {
	label      ID
	body       section
	terminated bool
}

// Function starts a function returning ret (TypeVoid for none) with the given
// parameter types; its entry block is current.
func (m *Module) Function(name string, ret ID, params ...ID) *Function {
	f := &Function{m: m, id: m.NewID(), ret: ret, typ: m.TypeFunction(ret, params...)}
	m.valueTypes[f.id] = ret
	m.Name(f.id, name)
	for _, p := range params {
		id := m.NewID()
		m.valueTypes[id] = p
		f.params = append(f.params, id)
	}
	m.functions = append(m.functions, f)
	f.Block(m.NewID())
	return f
}

// Module returns the module the function belongs to.
func (f *Function) Module() *Module { return f.m }

// ID returns the function's id, as OpFunctionCall and OpEntryPoint name it.
func (f *Function) ID() ID { return f.id }

// Param returns the id of parameter i.
func (f *Function) Param(i int) ID {
	if i < 0 || i >= len(f.params) {
		f.m.failf("parameter %d out of range (function has %d)", i, len(f.params))
		return 0
	}
	return f.params[i]
}

// Block starts a new block with the given label (from Module.NewID). The
// previous block must have been terminated. Most code never calls this: the
// structured helpers do.
func (f *Function) Block(label ID) {
	if f.cur != nil && !f.cur.terminated {
		f.m.failf("block %d starts while block %d has no terminator", label, f.cur.label)
	}
	f.cur = &block{label: label}
	f.blocks = append(f.blocks, f.cur)
}

// CurrentBlock returns the label of the block being appended to.
func (f *Function) CurrentBlock() ID { return f.cur.label }

// Terminated reports whether the current block already ends in a branch,
// return or OpUnreachable (nothing more may be appended to it).
func (f *Function) Terminated() bool { return f.cur.terminated }

// Op appends any instruction: resultType is used when the grammar gives op a
// result type (pass 0 otherwise); a result id is allocated and returned when
// op has one. The typed helpers are built on it; it stays public for the
// instructions they do not cover.
func (f *Function) Op(op Op, resultType ID, operands ...uint32) ID {
	info := op.Info()
	if info == nil {
		f.m.failf("unknown opcode %d", uint16(op))
		return 0
	}
	var words []uint32
	if op.HasResultType() {
		if resultType == 0 {
			f.m.failf("%s needs a result type", op)
			return 0
		}
		words = append(words, uint32(resultType))
	}
	var id ID
	if op.HasResult() {
		id = f.m.NewID()
		words = append(words, uint32(id))
		if resultType != 0 {
			f.m.valueTypes[id] = resultType
		}
	}
	words = append(words, operands...)
	if need := op.minOperandWords(); len(words) < need {
		f.m.failf("%s needs at least %d operand words, got %d", op, need, len(words))
		return 0
	}
	f.append(op, words)
	return id
}

func (f *Function) append(op Op, words []uint32) {
	if f.inEntry {
		if isTerminator(op) || op == OpLabel || op == OpSelectionMerge || op == OpLoopMerge || op == OpPhi {
			f.m.failf("InEntry: %s is not straight-line code", op)
			return
		}
		f.head.add(op, words...)
		return
	}
	if f.cur.terminated {
		f.m.failf("%s after the terminator of block %d", op, f.cur.label)
		return
	}
	f.cur.body.add(op, words...)
	f.cur.terminated = isTerminator(op)
}

func isTerminator(op Op) bool {
	switch op {
	case OpBranch, OpBranchConditional, OpSwitch, OpReturn, OpReturnValue,
		OpKill, OpUnreachable, OpTerminateInvocation:
		return true
	}
	return false
}

// Var declares a Function-storage variable of type t. It is placed in the
// entry block (where SPIR-V requires it) whichever block is current; mem2reg
// in the optimiser turns such variables into SSA values.
func (f *Function) Var(t ID, name string) ID {
	ptr := f.m.TypePointer(StorageClassFunction, t)
	id := f.m.NewID()
	f.m.valueTypes[id] = ptr
	f.vars.add(OpVariable, uint32(ptr), uint32(id), uint32(StorageClassFunction))
	f.m.Name(id, name)
	return id
}

// InEntry emits what emit emits at the start of the entry block, whichever block is
// current, so that its values dominate every block of the function, those made
// before it included: a buffer's device address, read once and turned into a
// pointer, however deep in the kernel the buffer is first bound. emit must be
// straight-line code whose operands are module-scope ids or its own results.
func (f *Function) InEntry(emit func()) {
	if f.inEntry {
		emit()
		return
	}
	f.inEntry = true
	defer func() { f.inEntry = false }()
	emit()
}

// Return ends the current block with OpReturn.
func (f *Function) Return() { f.Op(OpReturn, 0) }

// ReturnValue ends the current block with OpReturnValue v.
func (f *Function) ReturnValue(v ID) { f.Op(OpReturnValue, 0, uint32(v)) }

// Unreachable ends the current block with OpUnreachable.
func (f *Function) Unreachable() { f.Op(OpUnreachable, 0) }

// Branch ends the current block with an unconditional branch.
func (f *Function) Branch(target ID) { f.Op(OpBranch, 0, uint32(target)) }

// Call calls g with args and returns the result id (meaningless for void).
func (f *Function) Call(g *Function, args ...ID) ID {
	return f.Op(OpFunctionCall, g.ret, append([]uint32{uint32(g.id)}, idWords(args)...)...)
}

// finish closes the last block of a void function with OpReturn, so that
// kernels need not end with an explicit Return.
func (f *Function) finish() {
	if f.cur.terminated {
		return
	}
	if f.m.typeInfoOf(f.ret).op != OpTypeVoid {
		f.m.failf("function %d: last block %d has no terminator", f.id, f.cur.label)
		return
	}
	f.Return()
}

func (f *Function) encode() section {
	var s section
	s.add(OpFunction, uint32(f.ret), uint32(f.id), uint32(FunctionControlNone), uint32(f.typ))
	for i, p := range f.params {
		s.add(OpFunctionParameter, uint32(f.m.typeInfoOf(f.typ).params[i]), uint32(p))
	}
	for i, b := range f.blocks {
		s.add(OpLabel, uint32(b.label))
		if i == 0 {
			s = append(s, f.vars...)
			s = append(s, f.head...)
		}
		s = append(s, b.body...)
	}
	s.add(OpFunctionEnd)
	return s
}

// entryPoint is one OpEntryPoint.
type entryPoint struct {
	fn    *Function
	name  string
	model ExecutionModel
}

// operands lists OpEntryPoint's operands. Before SPIR-V 1.4 the interface
// holds only Input and Output variables; from 1.4 on it must hold every
// global the entry point uses, and listing all of them is always correct.
func (ep *entryPoint) operands(m *Module) []uint32 {
	ops := append([]uint32{uint32(ep.model), uint32(ep.fn.id)}, stringWords(ep.name)...)
	for _, v := range m.globalVars {
		sc := m.typeInfoOf(m.valueTypes[v]).storage
		if m.version >= Version1_4 || sc == StorageClassInput || sc == StorageClassOutput {
			ops = append(ops, uint32(v))
		}
	}
	return ops
}

// Kernel starts a GLCompute entry point named name with workgroup size
// (x, y, z): a void function with no parameters, its entry block current.
func (m *Module) Kernel(name string, x, y, z uint32) *Function {
	f := m.Function(name, m.TypeVoid())
	m.entryPoints = append(m.entryPoints, &entryPoint{fn: f, name: name, model: ExecutionModelGLCompute})
	m.ExecutionMode(f, ExecutionModeLocalSize, x, y, z)
	return f
}

// ExecutionMode adds OpExecutionMode for an entry point.
func (m *Module) ExecutionMode(f *Function, mode ExecutionMode, args ...uint32) {
	m.modes.add(OpExecutionMode, append([]uint32{uint32(f.id), uint32(mode)}, args...)...)
}
