package codegen

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
	"github.com/vkxla/vkxla/spirv/tools"
)

// cb builds a computation instruction by instruction, with shapes from hlo's shape
// rules (so tests need neither the builder nor the parser).
type cb struct {
	t testing.TB
	c *hlo.Computation
}

func newCB(t testing.TB, name string) *cb {
	return &cb{t: t, c: &hlo.Computation{Name: name}}
}

func (b *cb) push(in *hlo.Instruction) *hlo.Instruction {
	in.ID = len(b.c.Instructions)
	if in.Name == "" {
		in.Name = fmt.Sprintf("%v.%d", in.Op, in.ID)
	}
	b.c.Instructions = append(b.c.Instructions, in)
	return in
}

func (b *cb) param(s hlo.Shape) *hlo.Instruction {
	in := b.push(&hlo.Instruction{Op: hlo.OpParameter, Shape: s,
		Attrs: hlo.Attributes{ParameterNumber: int64(len(b.c.Params))}})
	b.c.Params = append(b.c.Params, in)
	return in
}

// op adds an instruction whose shape is inferred.
func (b *cb) op(op hlo.Opcode, attrs hlo.Attributes, called []*hlo.Computation, operands ...*hlo.Instruction) *hlo.Instruction {
	b.t.Helper()
	s, err := hlo.InferShape(op, shapesOf(operands), &attrs, called)
	require.NoError(b.t, err)
	return b.push(&hlo.Instruction{Op: op, Shape: s, Operands: operands, Attrs: attrs, Called: called})
}

// declared adds an instruction with a declared shape (broadcast, reshape, convert, …).
func (b *cb) declared(op hlo.Opcode, s hlo.Shape, attrs hlo.Attributes, operands ...*hlo.Instruction) *hlo.Instruction {
	b.t.Helper()
	require.NoError(b.t, hlo.CheckShape(op, shapesOf(operands), &attrs, nil, s))
	return b.push(&hlo.Instruction{Op: op, Shape: s, Operands: operands, Attrs: attrs})
}

func (b *cb) simple(op hlo.Opcode, operands ...*hlo.Instruction) *hlo.Instruction {
	b.t.Helper()
	return b.op(op, hlo.Attributes{}, nil, operands...)
}

func (b *cb) constant(l *hlo.Literal) *hlo.Instruction {
	return b.push(&hlo.Instruction{Op: hlo.OpConstant, Shape: l.Shape(), Attrs: hlo.Attributes{Literal: l}})
}

func (b *cb) build(root *hlo.Instruction) *hlo.Computation {
	b.c.Root = root
	return b.c
}

func shapesOf(xs []*hlo.Instruction) []hlo.Shape {
	s := make([]hlo.Shape, len(xs))
	for i, x := range xs {
		s[i] = x.Shape
	}
	return s
}

// scalarComp is (a, b) -> op(a, b) on dt scalars, a reducer or combiner.
func scalarComp(t testing.TB, op hlo.Opcode, dt hlo.DType) *hlo.Computation {
	b := newCB(t, fmt.Sprintf("%v_%v", op, dt))
	x, y := b.param(hlo.Scalar(dt)), b.param(hlo.Scalar(dt))
	return b.build(b.simple(op, x, y))
}

// compareComp is (a, b) -> compare(a, b, dir) on dt scalars.
func compareComp(t testing.TB, dir hlo.ComparisonDirection, dt hlo.DType) *hlo.Computation {
	b := newCB(t, fmt.Sprintf("cmp_%v_%v", dir, dt))
	x, y := b.param(hlo.Scalar(dt)), b.param(hlo.Scalar(dt))
	return b.build(b.op(hlo.OpCompare, hlo.Attributes{Direction: dir}, nil, x, y))
}

// lowerOK lowers c for the lavapipe target and validates every kernel.
func lowerOK(t testing.TB, c *hlo.Computation) *Program {
	t.Helper()
	return lowerFor(t, c, LavapipeTarget())
}

func lowerFor(t testing.TB, c *hlo.Computation, target Target) *Program {
	t.Helper()
	p, err := Lower(c, target)
	require.NoError(t, err)
	validate(t, p)
	return p
}

func validate(t testing.TB, p *Program) {
	t.Helper()
	for _, d := range p.Dispatches {
		words, err := spirv.Words(d.Kernel.SPIRV)
		require.NoError(t, err)
		if err := tools.Validate(words, tools.Vulkan1_1); err != nil {
			text, _ := tools.Disassemble(words)
			t.Fatalf("%s: kernel %s does not validate: %v\n%s", p.Name, d.Kernel.Name, err, text)
		}
		checkLayout(t, d)
		require.NotZero(t, d.Groups[0])
	}
}

// s is shorthand for a shape.
func s(dt hlo.DType, dims ...int64) hlo.Shape { return hlo.MakeShape(dt, dims...) }

// checkLayout: the kernel's layout gives every argument its bindings or its address
// slot, and every binding 0..Bindings-1 is used exactly once (the address table's
// included).
func checkLayout(t testing.TB, d Dispatch) {
	t.Helper()
	k := d.Kernel
	require.Len(t, k.Layout, len(d.Args), "kernel %s: one layout entry per argument", k.Name)
	used := make([]int, k.Bindings)
	slots := map[int]bool{}
	for _, b := range k.Layout {
		switch b.Path {
		case PathAddress:
			require.False(t, slots[b.Slot], "kernel %s: slot %d used twice", k.Name, b.Slot)
			slots[b.Slot] = true
		default:
			require.Positive(t, b.Pieces)
			for p := range b.Pieces {
				used[b.Binding+p]++
			}
		}
	}
	if len(slots) > 0 {
		require.GreaterOrEqual(t, k.AddressTable, 0, "kernel %s has addressed arguments and no table", k.Name)
		used[k.AddressTable]++
		for i := range len(slots) {
			require.True(t, slots[i], "kernel %s: slots are 0..%d", k.Name, len(slots)-1)
		}
	} else {
		require.Equal(t, -1, k.AddressTable)
	}
	for i, n := range used {
		require.Equal(t, 1, n, "kernel %s: binding %d used %d times", k.Name, i, n)
	}
}
