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
	saveNothing = "nothing_saveable"
	saveDots    = "dots_saveable"
	saveNames   = "save_only_these_names"
)

// CheckpointPolicy is a checkpointed region's policy: which of the region's values
// the backward pass keeps from the forward pass. The others are recomputed from the
// kept ones and the region's arguments (always kept). The zero value saves nothing,
// as jax.checkpoint's default.
type CheckpointPolicy struct {
	save  string
	names []string
}

// NothingSaveable keeps only the region's arguments
// (jax.checkpoint_policies.nothing_saveable).
func NothingSaveable() CheckpointPolicy { return CheckpointPolicy{save: saveNothing} }

// DotsSaveable keeps the results of dots and convolutions and recomputes the rest
// (jax.checkpoint_policies.dots_saveable, alias checkpoint_dots).
func DotsSaveable() CheckpointPolicy { return CheckpointPolicy{save: saveDots} }

// SaveOnlyTheseNames keeps the values named (by CheckpointName) with one of names
// (jax.checkpoint_policies.save_only_these_names).
func SaveOnlyTheseNames(names ...string) CheckpointPolicy {
	return CheckpointPolicy{save: saveNames, names: slices.Clone(names)}
}

func (p CheckpointPolicy) kind() string {
	if p.save == "" {
		return saveNothing
	}
	return p.save
}

// String is the policy as JAX names it, with its names.
func (p CheckpointPolicy) String() string {
	if p.kind() == saveNames {
		return fmt.Sprintf("%s%q", saveNames, p.names)
	}
	return p.kind()
}

// Saveable reports whether the policy keeps the value of in, an instruction of a
// checkpointed region: a dot or convolution under DotsSaveable, a CheckpointName
// with one of the names under SaveOnlyTheseNames.
func (p CheckpointPolicy) Saveable(in *Instruction) bool {
	switch p.kind() {
	case saveDots:
		return in.Op == OpDot || in.Op == OpConvolution
	case saveNames:
		name, ok := CheckpointNameOf(in)
		return ok && slices.Contains(p.names, name)
	}
	return false
}

// policyConfig is the policy's backend_config.
type policyConfig struct {
	Policy string   `json:"policy"`
	Names  []string `json:"names,omitempty"`
}

func (p CheckpointPolicy) config() string {
	text, _ := json.Marshal(policyConfig{Policy: p.kind(), Names: p.names}) // strings only: cannot fail
	return string(text)
}

// CheckpointPolicyOf reads the policy of a "vkxla.checkpoint" custom-call, or says
// what is wrong with its backend_config.
func CheckpointPolicyOf(call *Instruction) (CheckpointPolicy, error) {
	if !IsCustomCallTo(call, CheckpointTarget) {
		return CheckpointPolicy{}, fmt.Errorf("%s is not a custom-call to %q", call.Name, CheckpointTarget)
	}
	cfg, err := call.Attrs.CustomCall.BackendConfigMap()
	if err != nil {
		return CheckpointPolicy{}, fmt.Errorf("checkpoint %s: backend_config: %w", call.Name, err)
	}
	p := CheckpointPolicy{}
	p.save, _ = cfg["policy"].(string)
	switch p.save {
	case saveNothing, saveDots:
		return p, nil
	case saveNames:
		list, ok := cfg["names"].([]any)
		for _, n := range list {
			s, isString := n.(string)
			ok = ok && isString
			p.names = append(p.names, s)
		}
		if !ok {
			return CheckpointPolicy{}, fmt.Errorf("checkpoint %s: policy %s needs \"names\", a list of strings, got %v",
				call.Name, saveNames, cfg["names"])
		}
		return p, nil
	}
	return CheckpointPolicy{}, fmt.Errorf("checkpoint %s: unknown policy %v (want %s, %s or %s)",
		call.Name, cfg["policy"], saveNothing, saveDots, saveNames)
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
	if p.kind() != saveNothing && p.kind() != saveDots && p.kind() != saveNames {
		return nil, fmt.Errorf("checkpoint: unknown policy %q", p.save)
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
