package spmd

import (
	"fmt"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// Shard splits a whole array into each of devices devices' tiles under sharding
// s (nil or replicated: every device gets the whole array): the inputs a
// partitioned program's parameter takes on each device.
func Shard(lit *hlo.Literal, s *hlo.Sharding, devices int) ([]*hlo.Literal, error) {
	shape := lit.Shape()
	if !isArray(shape) {
		if s != nil && !allReplicated(s) {
			return nil, fmt.Errorf("spmd: Shard of the %v under %v: %w", shape, s, hlo.ErrUnsupported)
		}
		return repeat(lit, devices), nil
	}
	l, err := fromSharding(s, shape, devices, "Shard")
	if err != nil {
		return nil, err
	}
	if l.isReplicated() {
		return repeat(lit, devices), nil
	}
	local, err := l.localShape(shape, "Shard")
	if err != nil {
		return nil, err
	}
	out := make([]*hlo.Literal, devices)
	for d := range out {
		t := hlo.NewLiteral(local)
		for i := range t.NumElements() {
			idx := unflatten(int64(i), local.Dims)
			for k := range idx {
				idx[k] += l.coord[d][k] * local.Dims[k]
			}
			t.SetBits(i, lit.Bits(int(flatten(idx, shape.Dims))))
		}
		out[d] = t
	}
	return out, nil
}

func repeat(lit *hlo.Literal, n int) []*hlo.Literal {
	out := make([]*hlo.Literal, n)
	for i := range out {
		out[i] = lit
	}
	return out
}

// ShardInputs splits the whole inputs of m's entry into each device's inputs of
// Partition(m, devices), by the parameters' shardings: inputs[d] is device d's
// argument list, as cpuref.EvalReplicas and vkxla.Replicated.Run take them.
func ShardInputs(m *hlo.Module, devices int, inputs []*hlo.Literal) ([][]*hlo.Literal, error) {
	params := m.Entry.Params
	if len(inputs) != len(params) {
		return nil, fmt.Errorf("spmd: %d inputs for the %d parameters of %s: %w", len(inputs), len(params), m.Name, vkxla.ErrInvalidArgument)
	}
	out := make([][]*hlo.Literal, devices)
	for i, p := range params {
		tiles, err := Shard(inputs[i], p.Sharding, devices)
		if err != nil {
			return nil, fmt.Errorf("spmd: parameter %s: %w", p.Name, err)
		}
		for d := range out {
			out[d] = append(out[d], tiles[d])
		}
	}
	return out, nil
}
