package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// expandedRows covers the ops an expander pass rewrites before code generation
// (custom-calls, batch norm, single-replica collectives): the forward replay puts
// hlo.Decompose's computation in their place, the same ops the expander splices
// in, and the tape differentiates those by their own rules. So a custom-call is
// differentiable exactly when its registered decomposition is, batch norm's
// gradient is the derivative of its formulas (batch-norm-grad's too, for grad of
// grad), and a collective on one replica passes its cotangent through (or drops it
// where the forward gives zeros). rng's draw is a + u·(b − a) or a + b·z for
// draws u and z that do not depend on a and b (the reparameterisation gradient).
func expandedRows() map[hlo.Opcode]row {
	rows := map[hlo.Opcode]row{}
	for _, op := range hlo.AllOpcodes() {
		if op.Info().ExpandedBy != "" {
			rows[op] = row{expand: expandDecomposed}
		}
	}
	// A checkpointed region is replayed and recomputed in the backward pass.
	rows[hlo.OpCustomCall] = row{expand: expandCustomCall}
	// Its decomposition works on the bits; as JAX, the cotangent is rounded alike.
	rows[hlo.OpReducePrecision] = arrayVJP(func(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
		return []*hlo.Instruction{e.b.ReducePrecision(ct, n.orig.Attrs.ExponentBits, n.orig.Attrs.MantissaBits)}, nil
	})
	for _, op := range []hlo.Opcode{hlo.OpRngBitGenerator, hlo.OpRngGetAndUpdateState, hlo.OpReplicaID, hlo.OpPartitionID,
		hlo.OpGetDimensionSize, hlo.OpMulHi, hlo.OpAfterAll} {
		rows[op] = row{zero: zeroNonFloat} // random bits and their state, replica and partition ids, sizes, mulhi's integers, tokens
	}
	return rows
}

// expandCustomCall replays a checkpointed region by its policy, any other target
// by its decomposition.
func expandCustomCall(e *engine, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error) {
	if hlo.IsCustomCallTo(in, hlo.CheckpointTarget) {
		return expandCheckpoint(e, in, ops)
	}
	return expandDecomposed(e, in, ops)
}

// expandDecomposed replays the instruction's decomposition in its place.
func expandDecomposed(e *engine, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error) {
	c, err := hlo.Decompose(in)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotDifferentiable, err)
	}
	return e.replay(c, ops)
}
