package hlo

import (
	"errors"
	"fmt"
	"strings"
)

// Builder builds one computation, one instruction per method call, inferring every
// result shape with the op table's shape rules (inferShape, the rules InferShape and
// CheckShape expose).
//
// Errors are sticky: the first failing call records an error naming the builder, the
// op, its operands with their shapes and what was wrong; that call and every later
// one return nil, and Err, BuildComputation and Build return the error. So a chain of
// calls needs one check at the end, and a nil operand (from an earlier failure or a
// caller's bug) is an error, never a panic.
//
// Sub-computations (reducers, comparators, loop bodies, branches) come from their own
// Builder's BuildComputation and are passed to the ops that call them; Build gathers
// every computation the entry calls into the Module.
type Builder struct {
	name   string
	instrs []*Instruction
	params []*Instruction
	owned  map[*Instruction]bool
	names  map[string]bool
	nextID int
	err    error
	comp   *Computation // set by BuildComputation; the builder is then finished
}

// NewBuilder returns a builder for a computation (and module) with the given name.
func NewBuilder(name string) *Builder {
	return &Builder{name: name, owned: map[*Instruction]bool{}, names: map[string]bool{}}
}

// Name returns the computation's name.
func (b *Builder) Name() string { return b.name }

// Err returns the first error recorded, or nil.
func (b *Builder) Err() error { return b.err }

// opSpec describes one instruction to add.
type opSpec struct {
	op       Opcode
	operands []*Instruction
	attrs    Attributes
	called   []*Computation
	// result gives the declared result shape from the operand shapes, for the ops
	// whose result shape is declared (ResultIsDeclared); nil for the others.
	result func(operands []Shape) Shape
	name   string // requested name; empty for op.N
}

// emit checks the operands, infers the result shape and appends the instruction.
func (b *Builder) emit(s opSpec) *Instruction {
	if b.err != nil {
		return nil
	}
	shapes, err := b.operandShapes(s.operands)
	if err == nil {
		var declared *Shape
		if s.result != nil {
			d := s.result(shapes)
			declared = &d
		}
		var shape Shape
		if shape, err = inferByOp(&shapeArgs{s.op, shapes, &s.attrs, s.called, declared}); err == nil {
			return b.append(s, shape)
		}
	}
	b.err = fmt.Errorf("hlo builder %q: %v(%s): %w", b.name, s.op, describeOperands(s.operands), err)
	return nil
}

// operandShapes returns the operands' shapes, or an error for a nil operand, one from
// another builder, or a finished builder.
func (b *Builder) operandShapes(operands []*Instruction) ([]Shape, error) {
	if b.comp != nil {
		return nil, errors.New("the builder's computation is already built")
	}
	shapes := make([]Shape, len(operands))
	for i, x := range operands {
		if x == nil {
			return nil, fmt.Errorf("operand %d is nil", i)
		}
		if !b.owned[x] {
			return nil, fmt.Errorf("operand %d (%s) belongs to another builder", i, x.Name)
		}
		shapes[i] = x.Shape
	}
	return shapes, nil
}

func describeOperands(operands []*Instruction) string {
	parts := make([]string, len(operands))
	for i, x := range operands {
		if x == nil {
			parts[i] = "<nil>"
		} else {
			parts[i] = x.Name + ": " + x.Shape.String()
		}
	}
	return strings.Join(parts, ", ")
}

func (b *Builder) append(s opSpec, shape Shape) *Instruction {
	b.nextID++
	name := s.name
	if name == "" {
		name = fmt.Sprintf("%v.%d", s.op, b.nextID)
	}
	in := &Instruction{
		Name:     uniqueName(b.names, name),
		Op:       s.op,
		Shape:    shape,
		Operands: append([]*Instruction(nil), s.operands...),
		Attrs:    s.attrs,
		Called:   append([]*Computation(nil), s.called...),
		ID:       len(b.instrs),
	}
	b.instrs = append(b.instrs, in)
	b.owned[in] = true
	if s.op == OpParameter {
		b.params = append(b.params, in)
	}
	return in
}

// uniqueName returns name, or name.N for the smallest N that is free, and marks it
// used.
func uniqueName(used map[string]bool, name string) string {
	candidate := name
	for n := 1; used[candidate]; n++ {
		candidate = fmt.Sprintf("%s.%d", name, n)
	}
	used[candidate] = true
	return candidate
}

// SetName renames an instruction of this builder (made unique within the builder,
// and module-wide by Build) and returns it, for readable dumps.
func (b *Builder) SetName(in *Instruction, name string) *Instruction {
	if b.err != nil || in == nil || !b.owned[in] || b.comp != nil {
		return in
	}
	delete(b.names, in.Name)
	in.Name = uniqueName(b.names, name)
	return in
}

// BuildComputation finishes the builder and returns its computation, with root as
// its result. Every instruction added is part of it (unused ones included, as in
// XLA's builder), in the order added, which is a topological order. Calling it again
// with the same root returns the same computation.
func (b *Builder) BuildComputation(root *Instruction) (*Computation, error) {
	if b.err != nil {
		return nil, b.err
	}
	if b.comp != nil {
		if b.comp.Root == root {
			return b.comp, nil
		}
		return nil, fmt.Errorf("hlo builder %q: already built with root %s", b.name, b.comp.Root.Name)
	}
	if root == nil || !b.owned[root] {
		b.err = fmt.Errorf("hlo builder %q: the root is nil or belongs to another builder", b.name)
		return nil, b.err
	}
	b.comp = &Computation{
		Name:         b.name,
		Params:       b.params,
		Instructions: b.instrs,
		Root:         root,
	}
	b.comp.Renumber()
	return b.comp, nil
}

// Build finishes the builder and returns a module whose entry computation is this
// builder's, with root as its result. The module holds copies of the entry and of
// every computation it calls, directly or not (callees before callers, the entry
// last), so a computation may be shared by several modules; instruction names are
// made unique module-wide (the entry's names win, others get a .N suffix) and
// computation names likewise. The module is verified before it is returned.
func (b *Builder) Build(root *Instruction) (*Module, error) {
	entry, err := b.BuildComputation(root)
	if err != nil {
		return nil, err
	}
	order, err := calleesFirst(entry)
	if err != nil {
		return nil, fmt.Errorf("hlo builder %q: %w", b.name, err)
	}
	m := &Module{Name: b.name, Computations: cloneComputations(order)}
	m.Entry = m.Computations[len(m.Computations)-1]
	uniquifyNames(m)
	if err := Verify(m); err != nil {
		return nil, fmt.Errorf("hlo builder %q: %w", b.name, err)
	}
	return m, nil
}

// calleesFirst lists root and every computation it calls, transitively, in post
// order (callees before callers, root last), each once; a cycle is an error.
func calleesFirst(root *Computation) ([]*Computation, error) {
	const (
		visiting = 1
		done     = 2
	)
	state := map[*Computation]int{}
	var order []*Computation
	var visit func(c *Computation) error
	visit = func(c *Computation) error {
		switch state[c] {
		case visiting:
			return fmt.Errorf("computation %q calls itself (recursion is not allowed)", c.Name)
		case done:
			return nil
		}
		state[c] = visiting
		for _, in := range c.Instructions {
			if in == nil {
				continue // Verify reports it
			}
			for _, callee := range in.Called {
				if callee == nil {
					return fmt.Errorf("instruction %s of computation %q calls a nil computation", in.Name, c.Name)
				}
				if err := visit(callee); err != nil {
					return err
				}
			}
		}
		state[c] = done
		order = append(order, c)
		return nil
	}
	return order, visit(root)
}

// cloneComputations deep-copies computations whose callees come earlier in the list,
// rewiring operands and called computations to the copies.
func cloneComputations(comps []*Computation) []*Computation {
	compMap := make(map[*Computation]*Computation, len(comps))
	out := make([]*Computation, len(comps))
	for i, c := range comps {
		out[i] = cloneComputation(c, compMap)
		compMap[c] = out[i]
	}
	return out
}

func cloneComputation(c *Computation, compMap map[*Computation]*Computation) *Computation {
	instMap := make(map[*Instruction]*Instruction, len(c.Instructions))
	nc := &Computation{Name: c.Name}
	for _, in := range c.Instructions {
		ni := &Instruction{Name: in.Name, Op: in.Op, Shape: in.Shape.Clone(), Attrs: cloneAttributes(in.Attrs), ID: in.ID, Sharding: in.Sharding.Clone()}
		for _, x := range in.Operands {
			ni.Operands = append(ni.Operands, instMap[x])
		}
		for _, callee := range in.Called {
			ni.Called = append(ni.Called, compMap[callee])
		}
		instMap[in] = ni
		nc.Instructions = append(nc.Instructions, ni)
	}
	for _, p := range c.Params {
		nc.Params = append(nc.Params, instMap[p])
	}
	nc.Root = instMap[c.Root]
	return nc
}

// cloneAttributes deep-copies the slices and dimension numbers (the literal is
// immutable by convention and shared).
func cloneAttributes(a Attributes) Attributes {
	c := a
	c.Dimensions = cloneInts(a.Dimensions)
	c.SliceSizes = cloneInts(a.SliceSizes)
	c.Slice = append([]SliceDim(nil), a.Slice...)
	c.Padding = append([]PadDim(nil), a.Padding...)
	c.Window = append([]WindowDim(nil), a.Window...)
	if a.Dot != nil {
		d := DotDims{cloneInts(a.Dot.LhsBatch), cloneInts(a.Dot.RhsBatch),
			cloneInts(a.Dot.LhsContracting), cloneInts(a.Dot.RhsContracting)}
		c.Dot = &d
	}
	if a.Layouts != nil {
		c.Layouts = &BitcastLayouts{Operand: cloneInts(a.Layouts.Operand), Result: cloneInts(a.Layouts.Result)}
	}
	if a.Conv != nil {
		d := *a.Conv
		d.InputSpatial, d.KernelSpatial, d.OutputSpatial = cloneInts(d.InputSpatial),
			cloneInts(d.KernelSpatial), cloneInts(d.OutputSpatial)
		c.Conv = &d
	}
	if a.Gather != nil {
		g := *a.Gather
		g.OffsetDims, g.CollapsedSliceDims, g.StartIndexMap = cloneInts(g.OffsetDims),
			cloneInts(g.CollapsedSliceDims), cloneInts(g.StartIndexMap)
		g.OperandBatchingDims, g.StartIndicesBatchingDims = cloneInts(g.OperandBatchingDims),
			cloneInts(g.StartIndicesBatchingDims)
		c.Gather = &g
	}
	if a.Scatter != nil {
		s := *a.Scatter
		s.UpdateWindowDims, s.InsertedWindowDims = cloneInts(s.UpdateWindowDims), cloneInts(s.InsertedWindowDims)
		s.ScatterDimsToOperandDims = cloneInts(s.ScatterDimsToOperandDims)
		s.InputBatchingDims, s.ScatterIndicesBatchingDims = cloneInts(s.InputBatchingDims),
			cloneInts(s.ScatterIndicesBatchingDims)
		c.Scatter = &s
	}
	c.ReplicaGroups = cloneIntLists(a.ReplicaGroups)
	c.SourceTargetPairs = cloneIntLists(a.SourceTargetPairs)
	c.CustomCall = a.CustomCall.clone()
	c.FftLength = cloneInts(a.FftLength)
	return c
}

func cloneIntLists(xs [][]int64) [][]int64 {
	if xs == nil {
		return nil
	}
	out := make([][]int64, len(xs))
	for i, x := range xs {
		out[i] = cloneInts(x)
	}
	return out
}

func cloneInts(s []int64) []int64 {
	if s == nil {
		return nil
	}
	return append([]int64{}, s...)
}

// uniquifyNames makes computation and instruction names unique module-wide, visiting
// the entry first so that its names (the ones users chose) stay as they are.
func uniquifyNames(m *Module) {
	compNames, instNames := map[string]bool{}, map[string]bool{}
	n := len(m.Computations)
	order := append([]*Computation{m.Computations[n-1]}, m.Computations[:n-1]...)
	for _, c := range order {
		c.Name = uniqueName(compNames, c.Name)
		for _, in := range c.Instructions {
			in.Name = uniqueName(instNames, in.Name)
		}
	}
}
