package autodiff

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vkxla/vkxla/hlo"
)

// TestTableCoverage fails when an opcode has no row in the VJP table, or a row with
// not exactly one of: a rule, an expansion, a zero-derivative reason, leaf, or a
// not-differentiable reason.
func TestTableCoverage(t *testing.T) {
	for _, op := range hlo.AllOpcodes() {
		r, ok := table[op]
		if !assert.True(t, ok, "%v has no row in the VJP table", op) {
			continue
		}
		set := 0
		for _, has := range []bool{r.vjp != nil, r.expand != nil, r.zero != "", r.leaf, r.notDifferentiable != ""} {
			if has {
				set++
			}
		}
		assert.Equal(t, 1, set, "%v's row must have exactly one of vjp, expand, zero, leaf, notDifferentiable", op)
		if r.leaf {
			assert.Equal(t, hlo.KindLeaf, op.Info().Kind, "%v is marked leaf", op)
		}
	}
}

// TestTableIsHonest pins the rows that claim no derivative: only bitcast-convert is
// not differentiable; a zero row is either an op whose result is never floating
// point or one of the piecewise-constant float ops (which the elementwise FD test
// checks have zero derivative).
func TestTableIsHonest(t *testing.T) {
	piecewise := map[hlo.Opcode]bool{hlo.OpSign: true, hlo.OpFloor: true, hlo.OpCeil: true, hlo.OpRoundNearestEven: true,
		hlo.OpRoundNearestAfz: true}
	for _, op := range hlo.AllOpcodes() {
		r := table[op]
		if r.notDifferentiable != "" {
			assert.Equal(t, hlo.OpBitcastConvert, op, "%v claims to be not differentiable", op)
		}
		if r.zero == "" {
			continue
		}
		if piecewise[op] {
			assert.Equal(t, zeroPiecewise, r.zero, "%v", op)
			continue
		}
		assert.Equal(t, zeroNonFloat, r.zero, "%v", op)
		assert.True(t, neverFloat(op), "%v claims a result that is never floating point", op)
	}
}

// neverFloat reports the ops whose result type cannot be floating point: compare
// and is-finite give pred; the integer-only and integer-or-pred elementwise ops.
func neverFloat(op hlo.Opcode) bool {
	switch op {
	case hlo.OpCompare, hlo.OpIsFinite, hlo.OpReplicaID, hlo.OpPartitionID, hlo.OpGetDimensionSize, hlo.OpMulHi, hlo.OpAfterAll,
		hlo.OpRngGetAndUpdateState:
		return true
	case hlo.OpRngBitGenerator: // a u64 state and bits of hlo.RngOutputTypes
		return !slices.ContainsFunc(hlo.RngOutputTypes, hlo.DType.IsFloat)
	}
	info := op.Info()
	if info.Kind != hlo.KindUnary && info.Kind != hlo.KindBinary {
		return false
	}
	for _, dt := range []hlo.DType{hlo.F16, hlo.BF16, hlo.F32, hlo.F64} {
		if info.Types.Allows(dt) {
			return false
		}
	}
	return true
}

// TestEveryRuleHasAnFDCase fails when an opcode with a rule or an expansion (or a
// piecewise-constant zero row) appears in none of the finite-difference cases.
func TestEveryRuleHasAnFDCase(t *testing.T) {
	lists := [][]fdCase{elementwiseCases(t), movementCases(t), gatherScatterCases(t), scatterReplaceCases(t),
		reduceCases(t), dotCases(t), convolutionCases(t), reduceWindowCases(t), sortCases(t), controlFlowCases(t), expandedCases(t), complexCases(t)}
	seen := map[hlo.Opcode]bool{}
	for _, cases := range lists {
		for _, c := range cases {
			for _, comp := range buildModule(t, c).Computations {
				for _, in := range comp.Instructions {
					seen[in.Op] = true
				}
			}
		}
	}
	for _, op := range hlo.AllOpcodes() {
		r := table[op]
		if r.vjp != nil || r.expand != nil || r.zero == zeroPiecewise {
			assert.True(t, seen[op], "%v has a rule but no finite-difference case", op)
		}
	}
}
