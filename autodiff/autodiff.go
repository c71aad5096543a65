// Package autodiff builds reverse-mode derivatives of HLO computations: what
// jax.vjp, jax.grad and jax.value_and_grad give a JAX user, as new HLO modules that
// the normal pipeline compiles.
//
// The transformation replays the forward computation into a new builder (inlining
// calls and fusions, turning while loops into stacking loops), records
// the instructions that depend on a differentiated parameter (the tape), then walks
// the tape backwards applying one VJP rule per opcode (rules.go holds the table, a
// row per opcode) and summing the cotangents that reach each value. docs/autodiff.md
// describes the design.
package autodiff

import (
	"errors"
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// ErrNotDifferentiable is wrapped by the error for a non-differentiable op (or an
// unsupported form of one) on the path from a differentiated parameter to an output.
var ErrNotDifferentiable = errors.New("not differentiable")

// ErrInvalidArgument is wrapped by the errors for bad arguments: a nil module, a
// parameter number out of range, a Grad of a non-scalar function.
var ErrInvalidArgument = errors.New("invalid argument")

// ErrUnknownTripCount is wrapped by the error for a while loop on the differentiated
// path whose trip count is not known at compile time and Options.MaxTripCount is 0.
var ErrUnknownTripCount = errors.New("while loop trip count is not known at compile time")

// Options tune the transformation; the zero value (or a nil pointer) is the default.
type Options struct {
	// MaxTripCount, when positive (at most 65536), lets a while loop whose trip
	// count is data dependent be differentiated: the forward loop stops after at
	// most MaxTripCount iterations, keeping each iteration's state for the backward
	// loop. If the condition still holds then, the loop's floating-point results are
	// NaN (never a silently truncated value).
	MaxTripCount int64
	// LoopCheckpoint, when set, differentiates each while loop with a known trip
	// count n in segments (every-k checkpointing, loop_segments.go): the forward
	// loop keeps every k-th state, and the backward pass recomputes one segment's
	// k states at a time. Memory holds n/k + k states instead of n.
	LoopCheckpoint *LoopCheckpoint

	// segments are the loop bodies segmentation built (not segmented again).
	segments map[*hlo.Computation]bool
}

func (o *Options) maxTripCount() int64 {
	if o == nil {
		return 0
	}
	return o.MaxTripCount
}

// VJP returns a module computing the function's value and its vector-Jacobian
// product with respect to the parameters numbered in wrt. Its entry takes the
// original parameters followed by one cotangent per floating-point array leaf of the
// original result (in leaf order, depth first; integer and pred leaves take none) and
// returns a flat tuple: the result's array leaves, then one gradient per wrt entry
// (shaped like that parameter; zero for an integer or pred parameter).
func VJP(m *hlo.Module, wrt []int, opts *Options) (*hlo.Module, error) {
	return transform(m, wrt, opts, modeVJP, nil)
}

// Grad returns a module computing the gradient of a function with a floating-point
// scalar result with respect to the parameters numbered in wrt: it takes the
// original parameters and returns the gradient (an array) for one wrt entry, or a
// tuple of gradients, one per entry, for several.
func Grad(m *hlo.Module, wrt []int, opts *Options) (*hlo.Module, error) {
	return transform(m, wrt, opts, modeGrad, nil)
}

// ValueAndGrad is Grad whose module returns the tuple (value, gradients…).
func ValueAndGrad(m *hlo.Module, wrt []int, opts *Options) (*hlo.Module, error) {
	return transform(m, wrt, opts, modeValueAndGrad, nil)
}

type mode int

const (
	modeVJP mode = iota
	modeGrad
	modeValueAndGrad
)

// transform builds the derivative; residuals, when not nil, collects what the
// forward pass keeps for the backward pass (SavedResiduals).
func transform(m *hlo.Module, wrt []int, opts *Options, md mode, residuals *residualLog) (*hlo.Module, error) {
	if err := checkArgs(m, wrt, md); err != nil {
		return nil, err
	}
	if opts != nil && opts.LoopCheckpoint != nil && opts.LoopCheckpoint.Every < 0 {
		return nil, fmt.Errorf("autodiff: LoopCheckpoint.Every is %d; want a segment length, or 0 for the square root of each loop's trip count: %w",
			opts.LoopCheckpoint.Every, ErrInvalidArgument)
	}
	entry := m.Entry
	e := newEngine(hlo.NewBuilder(m.Name+".vjp"), opts.withSegments())
	e.residuals = residuals
	params := make([]*hlo.Instruction, len(entry.Params))
	for i, p := range entry.Params {
		params[i] = e.b.Parameter(p.Shape, p.Name)
	}
	for _, i := range wrt {
		e.markActive(params[i])
	}
	out, err := e.replay(entry, params)
	if err != nil {
		return nil, err
	}
	seed, err := e.seed(out, md)
	if err != nil {
		return nil, err
	}
	if err := e.backprop(out, seed); err != nil {
		return nil, err
	}
	grads := make([]*hlo.Instruction, len(wrt))
	for k, i := range wrt {
		grads[k] = e.materialize(e.cts[params[i]], params[i].Shape)
	}
	root := e.result(out, grads, md)
	if err := e.b.Err(); err != nil {
		return nil, fmt.Errorf("autodiff: %w", err)
	}
	mod, err := e.b.Build(root)
	if err != nil {
		return nil, fmt.Errorf("autodiff: building the derivative of %q: %w", m.Name, err)
	}
	return mod, nil
}

func checkArgs(m *hlo.Module, wrt []int, md mode) error {
	if m == nil || m.Entry == nil {
		return fmt.Errorf("autodiff: nil module or module without entry: %w", ErrInvalidArgument)
	}
	if err := hlo.Verify(m); err != nil {
		return fmt.Errorf("autodiff: %w: %w", ErrInvalidArgument, err)
	}
	if len(wrt) == 0 {
		return fmt.Errorf("autodiff: %q: no parameter to differentiate with respect to: %w", m.Name, ErrInvalidArgument)
	}
	seen := map[int]bool{}
	for _, i := range wrt {
		if i < 0 || i >= len(m.Entry.Params) {
			return fmt.Errorf("autodiff: %q: parameter %d out of range (the entry has %d): %w",
				m.Name, i, len(m.Entry.Params), ErrInvalidArgument)
		}
		if seen[i] {
			return fmt.Errorf("autodiff: %q: parameter %d named twice: %w", m.Name, i, ErrInvalidArgument)
		}
		seen[i] = true
		if !m.Entry.Params[i].Shape.IsArray() {
			return fmt.Errorf("autodiff: %q: parameter %d has tuple shape %v (differentiate array parameters): %w",
				m.Name, i, m.Entry.Params[i].Shape, ErrInvalidArgument)
		}
	}
	root := m.Entry.Root.Shape
	if md != modeVJP && !(root.IsScalar() && root.DType.IsFloat()) {
		return fmt.Errorf("autodiff: %q: Grad needs a floating-point scalar result, the function returns %v: %w",
			m.Name, root, ErrInvalidArgument)
	}
	return nil
}

// seed returns the cotangent of the result: 1 for Grad, new parameters for VJP.
func (e *engine) seed(out *hlo.Instruction, md mode) (*cot, error) {
	if md != modeVJP {
		return &cot{arr: e.b.ScalarConstant(out.Shape.DType, 1)}, nil
	}
	n := 0
	var build func(s hlo.Shape, x *hlo.Instruction) *cot
	build = func(s hlo.Shape, x *hlo.Instruction) *cot {
		if s.IsTuple() {
			c := &cot{elems: make([]*cot, len(s.Elems))}
			for i, es := range s.Elems {
				c.elems[i] = build(es, nil)
			}
			return c
		}
		if !differentiable(s.DType) {
			return nil
		}
		n++
		return &cot{arr: e.b.Parameter(s, fmt.Sprintf("ct.%d", n-1))}
	}
	return build(out.Shape, out), e.b.Err()
}

// result assembles the module's root for the mode.
func (e *engine) result(out *hlo.Instruction, grads []*hlo.Instruction, md mode) *hlo.Instruction {
	switch md {
	case modeGrad:
		if len(grads) == 1 {
			return grads[0]
		}
		return e.b.Tuple(grads...)
	case modeValueAndGrad:
		return e.b.Tuple(append([]*hlo.Instruction{out}, grads...)...)
	}
	return e.b.Tuple(append(e.leaves(out), grads...)...)
}

// leaves returns the array leaves of a value, depth first.
func (e *engine) leaves(x *hlo.Instruction) []*hlo.Instruction {
	if !x.Shape.IsTuple() {
		return []*hlo.Instruction{x}
	}
	var out []*hlo.Instruction
	for i := range x.Shape.Elems {
		out = append(out, e.leaves(e.b.GetTupleElement(x, int64(i)))...)
	}
	return out
}
