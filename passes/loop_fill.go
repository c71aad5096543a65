package passes

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// SplitLoopFills gives each while loop its own copy of a fill (a broadcast of a
// constant) that its initial tuple shares with other readers, made just before
// the tuple. A differentiated scan starts its stacks from zeros, and CSE merges
// every stacking loop's zeros into one broadcast that lives from the first loop
// to the last: a stack-sized buffer held across the whole program. A fill of its
// own dies where the loop copies it into its state, so the memory model lets the
// state take the fill's memory over (heapsim: noteStateTakesInit) and the fill is
// the loop's first state buffer. A fill costs one cheap kernel; it runs after CSE,
// which would merge the copies again.
func SplitLoopFills(m *hlo.Module, _ Config) (bool, error) {
	names := moduleNames(m)
	return anyComputation(m, func(c *hlo.Computation) bool { return splitFills(c, names) }), nil
}

func splitFills(c *hlo.Computation, names *nameSet) bool {
	c.Renumber()
	users := c.Users()
	changed := false
	for i := 0; i < len(c.Instructions); i++ {
		w := c.Instructions[i]
		if w.Op != hlo.OpWhile || w.Operands[0].Op != hlo.OpTuple || !sharesFill(w.Operands[0], users) {
			continue
		}
		// The loop's own initial tuple (CSE may have merged two loops' tuples too),
		// holding fills of its own, all just before the loop.
		t := w.Operands[0]
		init := clone(t, names)
		var made []*hlo.Instruction
		for k, op := range init.Operands {
			if sharedFill(t, op, users) {
				init.Operands[k] = clone(op, names)
				made = append(made, init.Operands[k])
			}
		}
		w.Operands[0] = init
		c.Instructions = slices.Insert(c.Instructions, i, append(made, init)...)
		i += len(made) + 1
		changed = true
	}
	if changed {
		c.Renumber()
	}
	return changed
}

// sharesFill: a tuple holding a fill that something else reads too.
func sharesFill(t *hlo.Instruction, users [][]*hlo.Instruction) bool {
	return slices.ContainsFunc(t.Operands, func(op *hlo.Instruction) bool { return sharedFill(t, op, users) })
}

// sharedFill: op, an element of tuple t, is a fill that something besides t reads,
// or t is read by something besides one loop.
func sharedFill(t, op *hlo.Instruction, users [][]*hlo.Instruction) bool {
	return isFill(op) && (len(users[op.ID]) > 1 || len(users[t.ID]) > 1)
}

// clone is a copy of in, under a fresh name, reading the same operands.
func clone(in *hlo.Instruction, names *nameSet) *hlo.Instruction {
	return &hlo.Instruction{Name: names.fresh(in.Name), Op: in.Op, Shape: in.Shape.Clone(),
		Attrs: in.Attrs.Clone(), Operands: slices.Clone(in.Operands)}
}

// isFill: a broadcast of a scalar constant.
func isFill(in *hlo.Instruction) bool {
	return in.Op == hlo.OpBroadcast && in.Operands[0].Op == hlo.OpConstant && in.Operands[0].Shape.Rank() == 0
}
