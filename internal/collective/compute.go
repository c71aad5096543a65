package collective

import (
	"context"
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// BinaryFunc is a reduction computation applied to one pair of element bits.
type BinaryFunc func(a, b uint64) (uint64, error)

// Reducer compiles a to_apply computation into a BinaryFunc.
type Reducer func(c *hlo.Computation) (BinaryFunc, error)

// Exchanger is how a device meets its group at a collective: it gives its values at
// the site's next execution and receives every member's, by position in the group.
// The in-process Rendezvous's Member is one; WorldMember, which exchanges bytes with
// other processes (MPI), is another. Both leave the results to Device.Eval, so
// every transport computes the same bits.
type Exchanger interface {
	Exchange(ctx context.Context, site any, label string, group []int, v []*hlo.Literal) ([][]*hlo.Literal, error)
}

// Device is what a collective needs of the device that evaluates it: its place in
// the topology, its handle on the run's exchange (nil on a one-device run) and
// how to apply reduction computations.
type Device struct {
	Topology Topology
	ID       int
	Member   Exchanger
	Reduce   Reducer
	// Site keys a collective's meetings; nil: the instruction itself (the
	// devices share one module). Devices with their own copies of a module key
	// by something the copies share.
	Site func(*hlo.Instruction) any
}

func (dev Device) site(in *hlo.Instruction) any {
	if dev.Site != nil {
		return dev.Site(in)
	}
	return in
}

// OneDevice is the device of a one-device run.
func OneDevice(reduce Reducer) Device {
	return Device{Topology: Topology{1, 1}, Reduce: reduce}
}

// Eval computes collective instruction in's result on this device from its
// operands' values, meeting its group's other members: all-reduce(-start),
// all-gather(-start), reduce-scatter, all-to-all, collective-broadcast,
// collective-permute(-start), replica-id and partition-id. (The -done forms need
// no meeting: they take their -start's result, which the caller has.)
// Reductions fold the members' values in group order, so every member computes
// the same bits.
func (dev Device) Eval(ctx context.Context, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	switch in.Op {
	case hlo.OpReplicaID:
		return u32(dev.Topology.Replica(dev.ID)), nil
	case hlo.OpPartitionID:
		return u32(dev.Topology.Partition(dev.ID)), nil
	case hlo.OpCollectivePermute, hlo.OpCollectivePermuteStart:
		return dev.permute(ctx, in, ops)
	}
	groups, err := Groups(in, dev.Topology)
	if err != nil {
		return nil, err
	}
	group, pos, ok := GroupOf(groups, dev.ID)
	if !ok {
		return nil, fmt.Errorf("%w: %v %%%s: %s is in no group", ErrInvalidGroups, in.Op, in.Name, dev.Topology.Name(dev.ID))
	}
	vals, err := dev.exchange(ctx, in, group, ops)
	if err != nil {
		return nil, err
	}
	return dev.combine(in, vals, pos)
}

// exchange meets the group at in; without an Exchanger (a one-device run) only a
// group of one meets.
func (dev Device) exchange(ctx context.Context, in *hlo.Instruction, group []int, ops []*hlo.Literal) ([][]*hlo.Literal, error) {
	label := fmt.Sprintf("%v %%%s", in.Op, in.Name)
	if dev.Member == nil {
		if len(group) == 1 {
			return [][]*hlo.Literal{ops}, nil
		}
		return nil, fmt.Errorf("%s: a group of %d devices on a one-device run", label, len(group))
	}
	return dev.Member.Exchange(ctx, dev.site(in), label, group, ops)
}

func u32(v int) *hlo.Literal { return hlo.ScalarLiteral(uint32(v)) }

// combine is the member at pos's result from every member's operands.
func (dev Device) combine(in *hlo.Instruction, vals [][]*hlo.Literal, pos int) (*hlo.Literal, error) {
	switch in.Op {
	case hlo.OpAllReduce, hlo.OpAllReduceStart:
		return perOperand(in, vals, func(k int) (*hlo.Literal, error) { return dev.reduce(in, vals, k) })
	case hlo.OpAllGather, hlo.OpAllGatherStart:
		res, err := perOperand(in, vals, func(k int) (*hlo.Literal, error) { return gather(in, vals, k) })
		if err != nil || in.Op == hlo.OpAllGather {
			return res, err
		}
		return hlo.TupleLiteral(oneOrTuple(vals[pos]), res), nil
	case hlo.OpReduceScatter:
		return perOperand(in, vals, func(k int) (*hlo.Literal, error) {
			sum, err := dev.reduce(in, vals, k)
			if err != nil {
				return nil, err
			}
			return chunk(in, sum, len(vals), pos)
		})
	case hlo.OpAllToAll:
		return allToAll(in, vals, pos)
	case hlo.OpCollectiveBroadcast:
		return oneOrTuple(vals[0]), nil // the group's first member's
	}
	return nil, fmt.Errorf("%v %%%s is not a collective vkxla evaluates", in.Op, in.Name)
}

// perOperand makes one result per operand: the array for one, a tuple for several.
func perOperand(in *hlo.Instruction, vals [][]*hlo.Literal, f func(k int) (*hlo.Literal, error)) (*hlo.Literal, error) {
	res := make([]*hlo.Literal, len(vals[0]))
	for k := range res {
		r, err := f(k)
		if err != nil {
			return nil, fmt.Errorf("%v %%%s: operand %d: %w", in.Op, in.Name, k, err)
		}
		res[k] = r
	}
	return oneOrTuple(res), nil
}

func oneOrTuple(xs []*hlo.Literal) *hlo.Literal {
	if len(xs) == 1 {
		return xs[0].Clone()
	}
	return hlo.TupleLiteral(xs...).Clone()
}

// reduce folds operand k of every member with to_apply, in group order.
func (dev Device) reduce(in *hlo.Instruction, vals [][]*hlo.Literal, k int) (*hlo.Literal, error) {
	if len(in.Called) == 0 || in.Called[0] == nil {
		return nil, fmt.Errorf("missing to_apply")
	}
	if dev.Reduce == nil {
		return nil, fmt.Errorf("no reducer for to_apply %q", in.Called[0].Name)
	}
	f, err := dev.Reduce(in.Called[0])
	if err != nil {
		return nil, fmt.Errorf("to_apply: %w", err)
	}
	out := vals[0][k].Clone()
	for _, v := range vals[1:] {
		for i := range out.NumElements() {
			x, err := f(out.Bits(i), v[k].Bits(i))
			if err != nil {
				return nil, err
			}
			out.SetBits(i, x)
		}
	}
	return out, nil
}

// split views a shape as [outer, n, inner] around dimension d.
func split(s hlo.Shape, d int64) (outer, n, inner int) {
	outer, inner = 1, 1
	for i, x := range s.Dims {
		switch {
		case int64(i) < d:
			outer *= int(x)
		case int64(i) > d:
			inner *= int(x)
		}
	}
	return outer, int(s.Dims[d]), inner
}

// gatherDim is the collective's one dimension, checked against the operand.
func gatherDim(in *hlo.Instruction, x *hlo.Literal) (int64, error) {
	if len(in.Attrs.Dimensions) != 1 {
		return 0, fmt.Errorf("dimensions=%v: want one dimension", in.Attrs.Dimensions)
	}
	d := in.Attrs.Dimensions[0]
	if d < 0 || d >= int64(x.Shape().Rank()) {
		return 0, fmt.Errorf("dimension %d is out of range for %v", d, x.Shape())
	}
	return d, nil
}

// concat joins parts along dimension d; want is the result shape the instruction
// declares (inference assumed a group size that may not be this run's).
func concat(parts []*hlo.Literal, d int64, want hlo.Shape) (*hlo.Literal, error) {
	s := parts[0].Shape().Clone()
	s.Dims[d] *= int64(len(parts))
	if !s.Equal(want) {
		return nil, fmt.Errorf("%d members' %v along dimension %d make %v, the instruction declares %v (replica_groups={} assumes one device: name the groups)",
			len(parts), parts[0].Shape(), d, s, want)
	}
	out := hlo.NewLiteral(s)
	outer, n, inner := split(parts[0].Shape(), d)
	for j, p := range parts {
		for o := range outer {
			for i := range n * inner {
				out.SetBits((o*len(parts)+j)*n*inner+i, p.Bits(o*n*inner+i))
			}
		}
	}
	return out, nil
}

// chunk is the pos-th of g equal slices of x along the collective's dimension.
func chunk(in *hlo.Instruction, x *hlo.Literal, g, pos int) (*hlo.Literal, error) {
	d, err := gatherDim(in, x)
	if err != nil {
		return nil, err
	}
	outer, n, inner := split(x.Shape(), d)
	if n%g != 0 {
		return nil, fmt.Errorf("dimension %d of %v does not split into %d members", d, x.Shape(), g)
	}
	s := x.Shape().Clone()
	s.Dims[d] /= int64(g)
	out, m := hlo.NewLiteral(s), n/g
	for o := range outer {
		for i := range m * inner {
			out.SetBits(o*m*inner+i, x.Bits((o*n+pos*m)*inner+i))
		}
	}
	return out, nil
}

func gather(in *hlo.Instruction, vals [][]*hlo.Literal, k int) (*hlo.Literal, error) {
	d, err := gatherDim(in, vals[0][k])
	if err != nil {
		return nil, err
	}
	parts := make([]*hlo.Literal, len(vals))
	for j, v := range vals {
		parts[j] = v[k]
	}
	want := in.Shape
	if in.Op == hlo.OpAllGatherStart && want.IsTuple() {
		want = want.Elems[1]
	}
	if want.IsTuple() {
		want = want.Elems[k]
	}
	return concat(parts, d, want)
}

// allToAll: with dimensions={d}, member j's chunk pos along d, joined in member
// order; in the tuple form (one operand per member), member j's operand pos.
func allToAll(in *hlo.Instruction, vals [][]*hlo.Literal, pos int) (*hlo.Literal, error) {
	g := len(vals)
	if g == 1 {
		return oneOrTuple(vals[0]), nil // one member keeps what it has, in either form
	}
	if len(in.Attrs.Dimensions) == 0 {
		if len(vals[0]) != g {
			return nil, fmt.Errorf("%v %%%s: the tuple form takes one operand per member: %d operands, groups of %d",
				in.Op, in.Name, len(vals[0]), g)
		}
		res := make([]*hlo.Literal, g)
		for j, v := range vals {
			res[j] = v[pos]
		}
		return oneOrTuple(res), nil
	}
	if len(vals[0]) != 1 {
		return nil, fmt.Errorf("%v %%%s: dimensions={d} takes one operand, got %d", in.Op, in.Name, len(vals[0]))
	}
	parts := make([]*hlo.Literal, g)
	for j, v := range vals {
		c, err := chunk(in, v[0], g, pos)
		if err != nil {
			return nil, fmt.Errorf("%v %%%s: %w", in.Op, in.Name, err)
		}
		parts[j] = c
	}
	d := in.Attrs.Dimensions[0]
	out, err := concat(parts, d, in.Shape)
	if err != nil {
		return nil, fmt.Errorf("%v %%%s: %w", in.Op, in.Name, err)
	}
	return out, nil
}

// permute: the device receives the value of the source paired with it, or zeros.
// The -start form is (operand, result), with the u32[] contexts of XLA's older
// form when declared.
func (dev Device) permute(ctx context.Context, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	groups, _, err := PermuteGroups(in, dev.Topology)
	if err != nil {
		return nil, err
	}
	group, pos, _ := GroupOf(groups, dev.ID)
	vals, err := dev.exchange(ctx, in, group, ops)
	if err != nil {
		return nil, err
	}
	y := hlo.NewLiteral(ops[0].Shape()) // zeros
	for _, p := range in.Attrs.SourceTargetPairs {
		if p[1] == int64(pos) {
			y = vals[p[0]][0].Clone()
		}
	}
	if in.Op == hlo.OpCollectivePermute {
		return y, nil
	}
	elems := []*hlo.Literal{ops[0].Clone(), y}
	for len(elems) < len(in.Shape.Elems) {
		elems = append(elems, hlo.NewLiteral(hlo.Scalar(hlo.U32)))
	}
	return hlo.TupleLiteral(elems...), nil
}
