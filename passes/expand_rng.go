package passes

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// ExpandRng lowers rng as XLA's RngExpander does: a state from
// rng-get-and-update-state, Philox bits through rng-bit-generator, and the bits
// made uniform or normal values (hlo.Decompose; docs/ir.md).
func ExpandRng(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpRng), hlo.Decompose)
}

// ThreadRngState makes the RNG state an input: the entry computation gains a last
// parameter, the run's u64[2] state, and each rng-get-and-update-state becomes
// that state advanced by the deltas of the ones before it, in instruction order
// (cpuref's evaluation order, which takes the same offsets). The runtime feeds the
// parameter from the executable handle and advances the handle's state by
// hlo.EntryRngStateDelta per run. The state is threaded through the entry
// computation only: one inside a while body, a branch or a called computation is
// ErrUnsupported.
func ThreadRngState(m *hlo.Module, _ Config) (bool, error) {
	get := isOp(hlo.OpRngGetAndUpdateState)
	for _, c := range m.Computations {
		if i := slices.IndexFunc(c.Instructions, get); i >= 0 && c != m.Entry {
			return false, fmt.Errorf("%w: %s in computation %s: the RNG state is threaded through the entry computation only, not into while bodies, conditional branches or called computations",
				hlo.ErrUnsupported, c.Instructions[i].Name, c.Name)
		}
	}
	e := m.Entry
	if !slices.ContainsFunc(e.Instructions, get) {
		return false, nil
	}
	names := moduleNames(m)
	state := &hlo.Instruction{Name: names.fresh("rng-state"), Op: hlo.OpParameter, Shape: hlo.RngStateShape.Clone(),
		Attrs: hlo.Attributes{ParameterNumber: int64(len(e.Params))}}
	e.Params = append(e.Params, state)
	e.Instructions = slices.Insert(e.Instructions, 0, state)
	var offset uint64
	_, err := replaceInOrder(e, func(in *hlo.Instruction) ([]*hlo.Instruction, *hlo.Instruction, error) {
		if !get(in) {
			return nil, nil, nil
		}
		body, err := hlo.RngStateAt(offset)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		offset += uint64(in.Attrs.RngDelta)
		inlined, root := inline(body, in.Name, []*hlo.Instruction{state}, nil, names)
		return inlined, root, nil
	})
	e.Renumber()
	return true, err
}
