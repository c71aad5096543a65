package spirv

// Structured control flow. Each helper emits the header's merge instruction
// and conditional branch, runs the caller's callbacks in fresh blocks, closes
// those blocks with a branch to the merge block (unless the callback already
// ended them with Break, Continue or Return) and leaves the merge block
// current. Blocks are appended in an order in which every block follows its
// dominators, as SPIR-V requires.

// loopFrame is the innermost loop's break and continue targets.
type loopFrame struct {
	merge, cont ID
}

// If emits `if cond { then() } else { els() }`; els may be nil.
func (f *Function) If(cond ID, then, els func()) {
	m := f.m
	merge, thenLabel := m.NewID(), m.NewID()
	elseLabel := merge
	if els != nil {
		elseLabel = m.NewID()
	}
	f.Op(OpSelectionMerge, 0, uint32(merge), uint32(SelectionControlNone))
	f.Op(OpBranchConditional, 0, uint32(cond), uint32(thenLabel), uint32(elseLabel))
	f.arm(thenLabel, merge, then)
	if els != nil {
		f.arm(elseLabel, merge, els)
	}
	f.Block(merge)
}

// arm runs body in a new block labelled label and falls through to merge.
func (f *Function) arm(label, merge ID, body func()) {
	f.Block(label)
	body()
	if !f.cur.terminated {
		f.Branch(merge)
	}
}

// IfValue emits an if/else whose arms each produce a value of type t and
// returns the merged value (an OpPhi). Prefer Select when both arms are
// cheap and side-effect free.
func (f *Function) IfValue(t, cond ID, then, els func() ID) ID {
	m := f.m
	merge, thenLabel, elseLabel := m.NewID(), m.NewID(), m.NewID()
	f.Op(OpSelectionMerge, 0, uint32(merge), uint32(SelectionControlNone))
	f.Op(OpBranchConditional, 0, uint32(cond), uint32(thenLabel), uint32(elseLabel))
	thenValue, thenEnd := f.valueArm(thenLabel, merge, then)
	elseValue, elseEnd := f.valueArm(elseLabel, merge, els)
	f.Block(merge)
	return f.Op(OpPhi, t, uint32(thenValue), uint32(thenEnd), uint32(elseValue), uint32(elseEnd))
}

// valueArm runs body in a new block and returns its value and the label of
// the block that branches to merge (body may itself have opened blocks).
func (f *Function) valueArm(label, merge ID, body func() ID) (value, end ID) {
	f.Block(label)
	value = body()
	end = f.cur.label
	if f.cur.terminated {
		f.m.failf("IfValue: an arm must fall through to the merge with its value")
	}
	f.Branch(merge)
	return value, end
}

// For emits a counted loop over an SSA induction variable:
//
//	for i := init; cond(i); i = step(i) { body(i) }
//
// i is an OpPhi in the loop header; cond must be straight-line code (no
// control-flow helpers) because it is emitted into the header itself. body
// may use Break and Continue.
func (f *Function) For(init ID, cond func(i ID) ID, step func(i ID) ID, body func(i ID)) {
	m := f.m
	t := m.TypeOf(init)
	pre := f.cur.label
	header, bodyLabel, cont, merge := m.NewID(), m.NewID(), m.NewID(), m.NewID()
	f.Branch(header)

	f.Block(header)
	i := f.Op(OpPhi, t, uint32(init), uint32(pre), 0, uint32(cont))
	nextSlot := len(f.cur.body) - 2 // the back-edge value, patched below
	phiBlock := f.cur
	c := cond(i)
	f.loopHeader(header, merge, cont, c, bodyLabel)

	f.loopBody(bodyLabel, merge, cont, func() { body(i) })

	f.Block(cont)
	next := step(i)
	f.Branch(header)
	phiBlock.body[nextSlot] = uint32(next)
	f.Block(merge)
}

// Range emits `for i := start; i < end; i += stride { body(i) }`, with a
// signed or unsigned comparison chosen by the type of start: the shape of a
// grid-stride loop.
func (f *Function) Range(start, end, stride ID, body func(i ID)) {
	f.For(start,
		func(i ID) ID { return f.Less(i, end) },
		func(i ID) ID { return f.Add(i, stride) },
		body)
}

// While emits `for cond() { body() }`. Like For's, cond is emitted into the
// loop header and must be straight-line code. Loop-carried values live in
// Function variables (Var).
func (f *Function) While(cond func() ID, body func()) {
	m := f.m
	header, bodyLabel, cont, merge := m.NewID(), m.NewID(), m.NewID(), m.NewID()
	f.Branch(header)
	f.Block(header)
	f.loopHeader(header, merge, cont, cond(), bodyLabel)
	f.loopBody(bodyLabel, merge, cont, body)
	f.Block(cont)
	f.Branch(header)
	f.Block(merge)
}

// loopHeader ends the header block: OpLoopMerge, then the exit test.
func (f *Function) loopHeader(header, merge, cont, cond, bodyLabel ID) {
	if f.cur.label != header {
		f.m.failf("loop condition must be straight-line code (it opened block %d)", f.cur.label)
		return
	}
	f.Op(OpLoopMerge, 0, uint32(merge), uint32(cont), uint32(LoopControlNone))
	f.Op(OpBranchConditional, 0, uint32(cond), uint32(bodyLabel), uint32(merge))
}

func (f *Function) loopBody(label, merge, cont ID, body func()) {
	f.loops = append(f.loops, loopFrame{merge: merge, cont: cont})
	f.arm(label, cont, body)
	f.loops = f.loops[:len(f.loops)-1]
}

// Break leaves the innermost loop.
func (f *Function) Break() {
	if len(f.loops) == 0 {
		f.m.failf("Break outside a loop")
		return
	}
	f.Branch(f.loops[len(f.loops)-1].merge)
}

// Continue jumps to the innermost loop's continue block (its step).
func (f *Function) Continue() {
	if len(f.loops) == 0 {
		f.m.failf("Continue outside a loop")
		return
	}
	f.Branch(f.loops[len(f.loops)-1].cont)
}
