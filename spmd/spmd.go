// Package spmd partitions a sharded program: from the sharding annotations of
// its entry's instructions (hlo.Sharding, as XLA dumps write them or
// Builder.SetSharding sets them) it writes the one program every device of a
// num_partitions=n run executes on its own tiles, with partition-id for each
// device's offsets and the collectives the tiles need (docs/spmd.md).
//
// Each entry instruction is rewritten by one rule, in program order: the rule
// takes its operands' layouts, chooses the result's and emits the per-device
// instructions (elementwise.go, shape.go, reduce.go, dot.go). An instruction
// no rule knows gets its operands whole (all-gathered) and computes the whole
// result on every device, so any program partitions; an annotated instruction's
// result is then moved to its annotation, and the root to its own (replicated
// by default: every device returns the whole result).
package spmd

import (
	"fmt"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/passes"
)

// value is an instruction of the partitioned program and its layout (nil for a
// tuple or token: they are whole on every device).
type value struct {
	in  *hlo.Instruction
	lay *layout
}

type partitioner struct {
	n           int
	b           *hlo.Builder
	vals        map[*hlo.Instruction]value
	pid, zero   *hlo.Instruction
	offsets     map[string]*hlo.Instruction
	gathered    map[*hlo.Instruction]*hlo.Instruction // a tiled value's whole
	channel     int64
	collectives int
}

// Partition returns the per-device program of m for a run of devices
// partitions (one replica): its parameters are each device's tiles of m's
// annotated parameters (whole where unannotated or replicated), and every
// device returns the whole of m's result, or its tile where the root is
// annotated tiled. Only the entry computation is partitioned; the computations
// it calls run whole on every device. m is not modified.
func Partition(m *hlo.Module, devices int) (*hlo.Module, error) {
	if devices < 1 {
		return nil, fmt.Errorf("spmd: %d devices: %w", devices, vkxla.ErrInvalidArgument)
	}
	m = m.Clone()
	p := &partitioner{n: devices, b: hlo.NewBuilder(m.Entry.Name), vals: map[*hlo.Instruction]value{},
		offsets: map[string]*hlo.Instruction{}, gathered: map[*hlo.Instruction]*hlo.Instruction{}}
	for _, in := range m.Entry.Instructions {
		v, err := p.instruction(in)
		if err != nil {
			return nil, err
		}
		if err := p.b.Err(); err != nil {
			return nil, fmt.Errorf("spmd: %s: %w", in.Name, err)
		}
		p.vals[in] = v
	}
	root := m.Entry.Root
	out, err := p.toAnnotation(root, p.vals[root], root.Sharding, true)
	if err != nil {
		return nil, err
	}
	pm, err := p.b.Build(out.in)
	if err != nil {
		return nil, fmt.Errorf("spmd: building the partitioned program: %w", err)
	}
	pm.Name = m.Name
	// The rules leave whole values nothing uses (a broadcast built again into
	// tiles): drop them, so the printed program is the one that runs.
	if _, err := passes.DCE(pm, passes.Config{}); err != nil {
		return nil, fmt.Errorf("spmd: %w", err)
	}
	return pm, nil
}

// instruction partitions one instruction: its rule, then its annotation.
func (p *partitioner) instruction(in *hlo.Instruction) (value, error) {
	if in.Op == hlo.OpParameter {
		return p.parameter(in)
	}
	v, err := p.rule(in)
	if err != nil || in.Sharding == nil {
		return v, err
	}
	return p.toAnnotation(in, v, in.Sharding, false)
}

// rule dispatches to the instruction's rule.
func (p *partitioner) rule(in *hlo.Instruction) (value, error) {
	switch {
	case in.Op == hlo.OpDot:
		return p.dot(in)
	case in.Op == hlo.OpReduce:
		return p.reduce(in)
	case in.Op == hlo.OpBroadcast:
		return p.broadcast(in)
	case in.Op == hlo.OpTranspose:
		return p.transpose(in)
	case in.Op == hlo.OpReshape:
		return p.reshape(in)
	case in.Op == hlo.OpTuple:
		return p.tuple(in)
	case in.Info().Elementwise && in.Info().SideEffectFree:
		return p.elementwise(in)
	}
	return p.whole(in)
}

// parameter adds the device's tile of an entry parameter.
func (p *partitioner) parameter(in *hlo.Instruction) (value, error) {
	if !isArray(in.Shape) {
		if in.Sharding != nil && !allReplicated(in.Sharding) {
			return value{}, fmt.Errorf("spmd: parameter %s: sharding %v of the tuple %v: only replicated tuple parameters are partitioned: %w",
				in.Name, in.Sharding, in.Shape, hlo.ErrUnsupported)
		}
		return value{in: p.named(p.b.Parameter(in.Shape, in.Name), in)}, nil
	}
	l, err := fromSharding(in.Sharding, in.Shape, p.n, "parameter "+in.Name)
	if err != nil {
		return value{}, err
	}
	local, err := l.localShape(in.Shape, "parameter "+in.Name)
	if err != nil {
		return value{}, err
	}
	return value{in: p.named(p.b.Parameter(local, in.Name), in), lay: l}, nil
}

func allReplicated(s *hlo.Sharding) bool {
	if s.Kind == hlo.ShardTuple {
		for _, e := range s.Elems {
			if !allReplicated(e) {
				return false
			}
		}
		return true
	}
	return s.Kind == hlo.ShardReplicated || s.Kind == hlo.ShardMaximal || s.IsReplicated()
}

// toAnnotation moves v to the layout its annotation s names (replicated where s
// is nil and required: the root). Tuples take their elements' shardings.
func (p *partitioner) toAnnotation(in *hlo.Instruction, v value, s *hlo.Sharding, required bool) (value, error) {
	if v.lay == nil {
		if in.Op == hlo.OpTuple || s == nil || allReplicated(s) {
			return v, nil // a tuple's elements were moved by the tuple rule
		}
		return value{}, fmt.Errorf("spmd: %s: sharding %v of the %v: %w", in.Name, s, in.Shape, hlo.ErrUnsupported)
	}
	if s == nil && !required {
		return v, nil
	}
	want, err := fromSharding(s, in.Shape, p.n, in.Name)
	if err != nil {
		return value{}, err
	}
	x, err := p.reshard(v, in.Shape, want, in.Name)
	if err != nil {
		return value{}, err
	}
	return value{in: x, lay: want}, nil
}

// operand is the partitioned value of in's operand i.
func (p *partitioner) operand(in *hlo.Instruction, i int) value {
	return p.vals[in.Operands[i]]
}

// wholeOperand is in's operand i whole on every device.
func (p *partitioner) wholeOperand(in *hlo.Instruction, i int) *hlo.Instruction {
	v := p.operand(in, i)
	if v.lay == nil || v.lay.isReplicated() {
		return v.in
	}
	return p.gather(v)
}

// whole computes in whole on every device from whole operands: the rule of
// every instruction the others do not know.
func (p *partitioner) whole(in *hlo.Instruction) (value, error) {
	ops := make([]*hlo.Instruction, len(in.Operands))
	for i := range ops {
		ops[i] = p.wholeOperand(in, i)
	}
	return p.emit(in, ops, in.Shape, nil)
}

// emit adds in over the partitioned operands with the result shape local (in's
// attributes and called computations kept) and gives it layout l (nil:
// replicated, or none for a tuple).
func (p *partitioner) emit(in *hlo.Instruction, ops []*hlo.Instruction, local hlo.Shape, l *layout) (value, error) {
	proto := *in
	proto.Shape = local
	x := p.named(p.b.Reemit(&proto, ops), in)
	if err := p.b.Err(); err != nil {
		return value{}, fmt.Errorf("spmd: %s: %w", in.Name, err)
	}
	if !x.Shape.Equal(local) {
		return value{}, fmt.Errorf("spmd: %s: the per-device %v is %v, not %v: %w", in.Name, in.Op, x.Shape, local, hlo.ErrUnsupported)
	}
	if l == nil && isArray(in.Shape) {
		l = replicated(in.Shape.Rank(), p.n)
	}
	return value{in: x, lay: l}, nil
}

func (p *partitioner) named(x, like *hlo.Instruction) *hlo.Instruction {
	return p.b.SetName(x, like.Name)
}

// tuple gathers its elements to their annotations (replicated by default).
func (p *partitioner) tuple(in *hlo.Instruction) (value, error) {
	ops := make([]*hlo.Instruction, len(in.Operands))
	for i, o := range in.Operands {
		var s *hlo.Sharding
		if in.Sharding != nil && in.Sharding.Kind == hlo.ShardTuple && i < len(in.Sharding.Elems) {
			s = in.Sharding.Elems[i]
		}
		v, err := p.toAnnotation(o, p.vals[o], s, true)
		if err != nil {
			return value{}, err
		}
		ops[i] = v.in
	}
	return p.emit(in, ops, hlo.MakeTuple(shapes(ops)...), nil)
}

func shapes(xs []*hlo.Instruction) []hlo.Shape {
	out := make([]hlo.Shape, len(xs))
	for i, x := range xs {
		out[i] = x.Shape
	}
	return out
}

// isArray reports whether s is an array (not a tuple or token): the values
// that have layouts.
func isArray(s hlo.Shape) bool { return !s.IsTuple() && s.DType != hlo.Token }
