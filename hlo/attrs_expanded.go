package hlo

import (
	"errors"
	"fmt"
)

// The attributes of the ops an expander pass rewrites before code generation
// (batch norm, rng-bit-generator, custom-call, the collectives).

// ErrUnsupported is wrapped by errors for valid HLO that vkxla does not run: a
// collective over more than one replica, say. The error names the instruction.
var ErrUnsupported = errors.New("unsupported")

// RngAlgorithm is rng-bit-generator's algorithm=.
type RngAlgorithm uint8

// The algorithms. RngDefault is implementation-defined; vkxla runs it as Philox,
// as XLA's CPU and GPU backends do.
const (
	RngDefault RngAlgorithm = iota
	RngThreeFry
	RngPhilox
)

var rngAlgorithmNames = [...]string{"rng_default", "rng_three_fry", "rng_philox"}

func (a RngAlgorithm) String() string {
	if int(a) < len(rngAlgorithmNames) {
		return rngAlgorithmNames[a]
	}
	return fmt.Sprintf("rngalgorithm(%d)", uint8(a))
}

// ParseRngAlgorithm maps rng_default, rng_three_fry and rng_philox to an algorithm,
// in any case (as XLA's parser does: RNG_PHILOX is rng_philox).
func ParseRngAlgorithm(s string) (RngAlgorithm, error) {
	if i := matchEnum(rngAlgorithmNames[:], s, true); i >= 0 {
		return RngAlgorithm(i), nil
	}
	return 0, fmt.Errorf("unknown rng algorithm %q (want rng_default, rng_three_fry or rng_philox)", s)
}

// Effective is the algorithm vkxla runs: RngDefault is Philox.
func (a RngAlgorithm) Effective() RngAlgorithm {
	if a == RngDefault {
		return RngPhilox
	}
	return a
}

// CustomCallAttrs are a custom-call's attributes, as XLA prints them.
type CustomCallAttrs struct {
	// Target is custom_call_target, the key of the custom-call registry.
	Target string
	// APIVersion is api_version as XLA names it (API_VERSION_ORIGINAL when
	// absent). It says how XLA calls a C function; vkxla's registry calls every
	// target its one way, so every version (API_VERSION_UNSPECIFIED, which
	// PyTorch/XLA prints, included) runs the same.
	APIVersion string
	// BackendConfig is backend_config: the string's contents, or, when Braced, the
	// whole {…} text (JSON, or an MLIR attribute dictionary for typed-FFI calls).
	// BackendConfigMap reads either form.
	BackendConfig string
	Braced        bool
	// OperandLayoutConstraints is operand_layout_constraints, one shape per operand.
	OperandLayoutConstraints []Shape
	// OutputToOperandAliasing is output_to_operand_aliasing.
	OutputToOperandAliasing []OutputOperandAlias
	// HasSideEffect is custom_call_has_side_effect: such a call is never merged
	// with another or removed when unused.
	HasSideEffect bool
	// Schedule is schedule= (SCHEDULE_NONE when absent).
	Schedule string
}

// OutputOperandAlias is one entry {output index}: (operand, {operand index}).
type OutputOperandAlias struct {
	Output       []int64
	Operand      int64
	OperandIndex []int64
}

func (c *CustomCallAttrs) clone() *CustomCallAttrs {
	if c == nil {
		return nil
	}
	d := *c
	d.OperandLayoutConstraints = nil
	for _, s := range c.OperandLayoutConstraints {
		d.OperandLayoutConstraints = append(d.OperandLayoutConstraints, s.Clone())
	}
	d.OutputToOperandAliasing = nil
	for _, a := range c.OutputToOperandAliasing {
		d.OutputToOperandAliasing = append(d.OutputToOperandAliasing,
			OutputOperandAlias{cloneInts(a.Output), a.Operand, cloneInts(a.OperandIndex)})
	}
	return &d
}

// SideEffectFree reports whether the instruction may be removed when unused and
// merged with an identical one: the op table's column, refined for a custom-call by
// custom_call_has_side_effect.
func (in *Instruction) SideEffectFree() bool {
	if in.Op == OpCustomCall {
		return in.Attrs.CustomCall != nil && !in.Attrs.CustomCall.HasSideEffect
	}
	return in.Info().SideEffectFree
}

// SingleReplica checks that a collective's replica groups name only replica 0, the
// one device vkxla runs on: {} (all replicas, which is one), {{0}}, or the iota
// form [1,1]<=[1]. Anything else wraps ErrUnsupported.
func SingleReplica(groups [][]int64) error {
	for _, g := range groups {
		if len(g) != 1 || g[0] != 0 {
			return fmt.Errorf("%w: replica_groups %s span more than one replica; vkxla runs on one device",
				ErrUnsupported, replicaGroupsText(groups))
		}
	}
	return nil
}

// PermuteTargetsReplica reports whether collective-permute's pairs send replica 0's
// value to replica 0; pairs naming another replica wrap ErrUnsupported.
func PermuteTargetsReplica(pairs [][]int64) (bool, error) {
	targeted := false
	for _, p := range pairs {
		if len(p) != 2 || p[0] != 0 || p[1] != 0 {
			return false, fmt.Errorf("%w: source_target_pairs %s name a replica other than 0; vkxla runs on one device",
				ErrUnsupported, replicaGroupsText(pairs))
		}
		targeted = true
	}
	return targeted, nil
}
