package hlo

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Checkpointed regions (jax.checkpoint, alias jax.remat) and named values
// (jax.ad_checkpoint.checkpoint_name), as two custom-calls so that they live in any
// module, print and parse, and cost nothing where no gradient is taken:
//
//   - custom-call "vkxla.checkpoint" calls its region (called_computations) on its
//     operands; backend_config holds the policy. Its expansion inlines the region.
//     autodiff differentiates it by recomputing, in the backward pass, the region's
//     values the policy does not save (docs/autodiff.md).
//   - custom-call "vkxla.checkpoint_name" is the identity on its operand, naming it
//     (backend_config {"name": …}) for the save_only_these_names policy.
const (
	CheckpointTarget     = "vkxla.checkpoint"
	CheckpointNameTarget = "vkxla.checkpoint_name"
)

// The policies' names, as backend_config spells them (JAX's names).
const (
	saveNothing      = "nothing_saveable"
	saveEverything   = "everything_saveable"
	saveDots         = "dots_saveable"
	saveDotsNoBatch  = "dots_with_no_batch_dims_saveable"
	saveNames        = "save_only_these_names"
	saveAllBut       = "save_any_names_but_these"
	saveBoth         = "save_from_both_policies"
	saveAndOffload   = "save_and_offload_only_these_names"
	offloadDots      = "offload_dot_with_no_batch_dims"
	policyNamesUsage = "nothing_saveable, everything_saveable, dots_saveable, dots_with_no_batch_dims_saveable, " +
		"save_only_these_names, save_any_names_but_these, save_from_both_policies, save_and_offload_only_these_names " +
		"or offload_dot_with_no_batch_dims"
)

// CheckpointPolicy is a checkpointed region's policy: which of the region's values
// the backward pass keeps from the forward pass. The others are recomputed from the
// kept ones and the region's arguments (always kept). The zero value saves nothing,
// as jax.checkpoint's default.
type CheckpointPolicy struct {
	save  string
	names []string // the names kept (save_only_these_names, save_and_offload…) or not kept (save_any_names_but_these)
	// offload names the values save_and_offload_only_these_names keeps in host
	// memory (Offloads).
	offload []string
	both    []CheckpointPolicy // save_from_both_policies: the two policies
}

// NothingSaveable keeps only the region's arguments
// (jax.checkpoint_policies.nothing_saveable).
func NothingSaveable() CheckpointPolicy { return CheckpointPolicy{save: saveNothing} }

// EverythingSaveable keeps every value of the region: the region costs what it
// would without checkpointing (jax.checkpoint_policies.everything_saveable).
func EverythingSaveable() CheckpointPolicy { return CheckpointPolicy{save: saveEverything} }

// DotsSaveable keeps the results of dots and convolutions and recomputes the rest
// (jax.checkpoint_policies.dots_saveable, alias checkpoint_dots).
func DotsSaveable() CheckpointPolicy { return CheckpointPolicy{save: saveDots} }

// DotsWithNoBatchDimsSaveable keeps the results of dots without batch dimensions
// (matrix products, not batched ones such as attention scores)
// (jax.checkpoint_policies.dots_with_no_batch_dims_saveable).
func DotsWithNoBatchDimsSaveable() CheckpointPolicy { return CheckpointPolicy{save: saveDotsNoBatch} }

// SaveOnlyTheseNames keeps the values named (by CheckpointName) with one of names
// (jax.checkpoint_policies.save_only_these_names).
func SaveOnlyTheseNames(names ...string) CheckpointPolicy {
	return CheckpointPolicy{save: saveNames, names: slices.Clone(names)}
}

// SaveAnyNamesButThese keeps every named value whose name is not one of names
// (jax.checkpoint_policies.save_any_names_but_these).
func SaveAnyNamesButThese(names ...string) CheckpointPolicy {
	return CheckpointPolicy{save: saveAllBut, names: slices.Clone(names)}
}

// SaveFromBothPolicies keeps what either policy keeps
// (jax.checkpoint_policies.save_from_both_policies).
func SaveFromBothPolicies(a, b CheckpointPolicy) CheckpointPolicy {
	return CheckpointPolicy{save: saveBoth, both: []CheckpointPolicy{a, b}}
}

// SaveAndOffloadOnlyTheseNames is jax.checkpoint_policies.save_and_offload_only_these_names
// (offload_src="device", offload_dst="pinned_host"): it keeps the values named
// with one of save on the device and those named with one of offload in host
// memory: the forward pass moves them to the host (MoveToHost) where they are
// made, the backward pass moves them back (MoveToDevice) when it needs them, so
// they hold no device memory in between. With offload empty it is
// SaveOnlyTheseNames(save...).
func SaveAndOffloadOnlyTheseNames(save, offload []string) CheckpointPolicy {
	return CheckpointPolicy{save: saveAndOffload, names: slices.Clone(save), offload: slices.Clone(offload)}
}

// OffloadDotWithNoBatchDims keeps the results of dots without batch dimensions
// (the products with weight matrices) in host memory and recomputes the rest
// (jax.checkpoint_policies.offload_dot_with_no_batch_dims, offload_src="device",
// offload_dst="pinned_host"): DotsWithNoBatchDimsSaveable's values, moved to
// the host where they are made and back when the backward pass reads them.
func OffloadDotWithNoBatchDims() CheckpointPolicy { return CheckpointPolicy{save: offloadDots} }

func (p CheckpointPolicy) kind() string {
	if p.save == "" {
		return saveNothing
	}
	return p.save
}

// String is the policy as JAX names it, with its names.
func (p CheckpointPolicy) String() string {
	switch p.kind() {
	case saveNames, saveAllBut:
		return fmt.Sprintf("%s%q", p.kind(), p.names)
	case saveAndOffload:
		return fmt.Sprintf("%s(save=%q, offload=%q)", saveAndOffload, p.names, p.offload)
	case saveBoth:
		return fmt.Sprintf("%s(%v, %v)", saveBoth, p.both[0], p.both[1])
	}
	return p.kind()
}

// Saveable reports whether the policy keeps the value of in, an instruction of a
// checkpointed region: any value under EverythingSaveable, a dot or convolution
// under DotsSaveable, a dot with no batch dimensions under
// DotsWithNoBatchDimsSaveable and OffloadDotWithNoBatchDims, a CheckpointName by its name under the name
// policies, what either keeps under SaveFromBothPolicies.
func (p CheckpointPolicy) Saveable(in *Instruction) bool {
	name, named := CheckpointNameOf(in)
	switch p.kind() {
	case saveEverything:
		return in.Op != OpParameter
	case saveDots:
		return in.Op == OpDot || in.Op == OpConvolution
	case saveDotsNoBatch, offloadDots:
		return dotWithNoBatchDims(in)
	case saveNames:
		return named && slices.Contains(p.names, name)
	case saveAllBut:
		return named && !slices.Contains(p.names, name)
	case saveAndOffload:
		return named && (slices.Contains(p.names, name) || slices.Contains(p.offload, name))
	case saveBoth:
		return p.both[0].Saveable(in) || p.both[1].Saveable(in)
	}
	return false
}

// Offloads reports whether the policy keeps the value of in in host memory: a
// CheckpointName named with one of save_and_offload_only_these_names' offload
// names (and not one of its save names, which stay on the device); a dot
// without batch dimensions under offload_dot_with_no_batch_dims; under
// SaveFromBothPolicies, a value one policy offloads and the other does not keep
// on the device.
func (p CheckpointPolicy) Offloads(in *Instruction) bool {
	name, named := CheckpointNameOf(in)
	switch p.kind() {
	case saveAndOffload:
		return named && slices.Contains(p.offload, name) && !slices.Contains(p.names, name)
	case offloadDots:
		return dotWithNoBatchDims(in)
	case saveBoth:
		a, b := p.both[0], p.both[1]
		return (a.Offloads(in) || b.Offloads(in)) && !(a.Saveable(in) && !a.Offloads(in)) && !(b.Saveable(in) && !b.Offloads(in))
	}
	return false
}

// dotWithNoBatchDims reports whether in is a dot without batch dimensions.
func dotWithNoBatchDims(in *Instruction) bool {
	return in.Op == OpDot && in.Attrs.Dot != nil && len(in.Attrs.Dot.LhsBatch) == 0 && len(in.Attrs.Dot.RhsBatch) == 0
}

// policyConfig is the policy's backend_config.
type policyConfig struct {
	Policy   string         `json:"policy"`
	Names    []string       `json:"names,omitempty"`
	Offload  []string       `json:"offload,omitempty"`
	Policies []policyConfig `json:"policies,omitempty"`
}

func (p CheckpointPolicy) toConfig() policyConfig {
	c := policyConfig{Policy: p.kind(), Names: p.names, Offload: p.offload}
	for _, q := range p.both {
		c.Policies = append(c.Policies, q.toConfig())
	}
	return c
}

func (p CheckpointPolicy) config() string {
	text, _ := json.Marshal(p.toConfig()) // strings and lists only: cannot fail
	return string(text)
}

// CheckpointPolicyOf reads the policy of a "vkxla.checkpoint" custom-call, or says
// what is wrong with its backend_config.
func CheckpointPolicyOf(call *Instruction) (CheckpointPolicy, error) {
	if !IsCustomCallTo(call, CheckpointTarget) {
		return CheckpointPolicy{}, fmt.Errorf("%s is not a custom-call to %q", call.Name, CheckpointTarget)
	}
	var cfg policyConfig
	if err := json.Unmarshal([]byte(call.Attrs.CustomCall.BackendConfig), &cfg); err != nil {
		return CheckpointPolicy{}, fmt.Errorf("checkpoint %s: backend_config: %w", call.Name, err)
	}
	p, err := cfg.policy()
	if err != nil {
		return CheckpointPolicy{}, fmt.Errorf("checkpoint %s: %w", call.Name, err)
	}
	return p, nil
}

// policy checks a configuration and makes it a policy.
func (c policyConfig) policy() (CheckpointPolicy, error) {
	p := CheckpointPolicy{save: c.Policy, names: c.Names, offload: c.Offload}
	switch c.Policy {
	case saveNothing, saveEverything, saveDots, saveDotsNoBatch, offloadDots:
		return p, nil
	case saveNames, saveAllBut:
		if c.Names == nil {
			return CheckpointPolicy{}, fmt.Errorf("policy %s needs \"names\", a list of strings", c.Policy)
		}
		return p, nil
	case saveAndOffload:
		if c.Names == nil && c.Offload == nil {
			return CheckpointPolicy{}, fmt.Errorf("policy %s needs \"names\" or \"offload\", lists of strings", c.Policy)
		}
		return p, nil
	case saveBoth:
		if len(c.Policies) != 2 {
			return CheckpointPolicy{}, fmt.Errorf("policy %s needs \"policies\", two policies, got %d", c.Policy, len(c.Policies))
		}
		for i, q := range c.Policies {
			sub, err := q.policy()
			if err != nil {
				return CheckpointPolicy{}, fmt.Errorf("%s policy %d: %w", saveBoth, i, err)
			}
			p.both = append(p.both, sub)
		}
		return p, nil
	}
	return CheckpointPolicy{}, fmt.Errorf("unknown policy %s (want %s)", c.Policy, policyNamesUsage)
}

// CheckpointNameOf returns the name a "vkxla.checkpoint_name" custom-call gives its
// operand; ok is false for any other instruction or a call without a name.
func CheckpointNameOf(in *Instruction) (name string, ok bool) {
	if !IsCustomCallTo(in, CheckpointNameTarget) {
		return "", false
	}
	cfg, err := in.Attrs.CustomCall.BackendConfigMap()
	if err != nil {
		return "", false
	}
	name, ok = cfg["name"].(string)
	return name, ok && name != ""
}

// IsCustomCallTo reports whether in is a custom-call of the given target.
func IsCustomCallTo(in *Instruction, target string) bool {
	return in != nil && in.Op == OpCustomCall && in.Attrs.CustomCall != nil && in.Attrs.CustomCall.Target == target
}

// Checkpoint adds a checkpointed region (jax.checkpoint): body, built in a builder
// of its own over parameters shaped like args, applied to args. The result is
// body's (an array or a tuple). Outside a gradient the region is its body; in one
// (autodiff), the values of the region that p does not save are recomputed in the
// backward pass. Regions nest: body may call Checkpoint on its builder.
func (b *Builder) Checkpoint(p CheckpointPolicy, body func(b *Builder, args []*Instruction) *Instruction, args ...*Instruction) *Instruction {
	shapes, err := b.operandShapes(args)
	if err != nil {
		return b.fail(OpCustomCall, args, fmt.Errorf("checkpoint: %w", err))
	}
	comp, err := checkpointBody(b.name+".checkpoint", p, body, shapes)
	if err != nil {
		return b.fail(OpCustomCall, args, err)
	}
	return b.CustomCall(CheckpointTarget, args, comp.Root.Shape, &CustomCallAttrs{BackendConfig: p.config(), Braced: true}, comp)
}

// checkpointBody builds a region's computation from the Go function.
func checkpointBody(name string, p CheckpointPolicy, body func(b *Builder, args []*Instruction) *Instruction, shapes []Shape) (*Computation, error) {
	if body == nil {
		return nil, fmt.Errorf("checkpoint: nil body function")
	}
	if _, err := p.toConfig().policy(); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	sb := NewBuilder(name)
	params := make([]*Instruction, len(shapes))
	for i, s := range shapes {
		params[i] = sb.Parameter(s, fmt.Sprintf("arg%d", i))
	}
	root := body(sb, params)
	if err := sb.Err(); err != nil {
		return nil, fmt.Errorf("checkpoint body: %w", err)
	}
	comp, err := sb.BuildComputation(root)
	if err != nil {
		return nil, fmt.Errorf("checkpoint body: %w", err)
	}
	return comp, nil
}

// CheckpointName names x (jax.ad_checkpoint.checkpoint_name): the identity, whose
// value a SaveOnlyTheseNames policy with this name keeps.
func (b *Builder) CheckpointName(x *Instruction, name string) *Instruction {
	if name == "" {
		return b.fail(OpCustomCall, ins(x), fmt.Errorf("checkpoint name: empty name"))
	}
	if x == nil {
		return b.fail(OpCustomCall, ins(x), fmt.Errorf("checkpoint name %q: nil operand", name))
	}
	cfg, _ := json.Marshal(map[string]string{"name": name}) // a string: cannot fail
	return b.CustomCall(CheckpointNameTarget, ins(x), x.Shape, &CustomCallAttrs{BackendConfig: string(cfg), Braced: true})
}

func init() {
	mustRegister(CustomCallTarget{Name: CheckpointTarget, Expand: expandCheckpoint,
		Summary: "a checkpointed region (jax.checkpoint): its called computation on the operands"})
	mustRegister(CustomCallTarget{Name: CheckpointNameTarget, Expand: expandCheckpointName,
		Summary: "a named value (jax.ad_checkpoint.checkpoint_name): the identity"})
}

// expandCheckpoint inlines the region: outside a gradient it is its body.
func expandCheckpoint(b *Builder, call *Instruction, operands []*Instruction) (*Instruction, error) {
	if _, err := CheckpointPolicyOf(call); err != nil {
		return nil, err
	}
	if len(call.Called) != 1 {
		return nil, fmt.Errorf("a checkpoint calls one computation (its region), got %d", len(call.Called))
	}
	body := call.Called[0]
	if len(body.Params) != len(operands) {
		return nil, fmt.Errorf("checkpoint region %s takes %d parameters, the call has %d operands",
			body.Name, len(body.Params), len(operands))
	}
	for i, p := range body.Params {
		if !p.Shape.Equal(operands[i].Shape) {
			return nil, fmt.Errorf("checkpoint region %s: parameter %d is %v, operand %d is %v",
				body.Name, i, p.Shape, i, operands[i].Shape)
		}
	}
	return b.Inline(body, operands), b.Err()
}

func expandCheckpointName(b *Builder, call *Instruction, operands []*Instruction) (*Instruction, error) {
	if _, ok := CheckpointNameOf(call); !ok {
		return nil, fmt.Errorf("checkpoint name %s: backend_config needs {\"name\": \"…\"}, got %q",
			call.Name, call.Attrs.CustomCall.BackendConfig)
	}
	return expandIdentity(b, call, operands)
}
