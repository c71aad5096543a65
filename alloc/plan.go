package alloc

import (
	"errors"
	"fmt"
)

// A Plan is the compiler's buffer assignment: every buffer of an executable gets a
// fixed (block, offset, size) before anything runs. Buffers whose lifetimes do not
// overlap may share addresses — the compiler decides that; the arena only checks
// that each range is placeable and bindable, and honours the offsets exactly.
//
// Most plans use one block. A plan larger than the device's maxMemoryAllocationSize
// spreads over several blocks, each a separate device allocation.
type Plan struct {
	Ranges []PlanRange
}

// PlanRange is one buffer of a plan.
type PlanRange struct {
	Name   string // for error messages (an HLO instruction name, say); may be empty
	Block  int    // which memory block; 0 in a single-block plan
	Offset int64  // bytes from the start of the block; a multiple of Limits.Alignment
	Size   int64  // bytes; 0 is allowed and needs no binding
	// Split says the code generator binds this buffer as several bindings (see
	// Limits.Bindings); Addressed that kernels reach it through its device address
	// (a buffer-device-address pointer), not a binding. Without either a buffer
	// must fit in one binding. The planner sets them by codegen.Target.Path, the
	// rule the kernels follow.
	Split     bool
	Addressed bool
}

// Span is the range's bytes within its block.
func (r PlanRange) Span() Span { return Span{Offset: r.Offset, Size: r.Size} }

func (r PlanRange) String() string {
	if r.Name != "" {
		return fmt.Sprintf("%q block %d %v", r.Name, r.Block, r.Span())
	}
	return fmt.Sprintf("block %d %v", r.Block, r.Span())
}

// PlanError says which range of a plan is wrong and why. It wraps one of the
// package's sentinel errors (ErrMisaligned, ErrBindingTooLarge, ...).
type PlanError struct {
	Index int
	Range PlanRange
	Err   error
}

func (e *PlanError) Error() string {
	return fmt.Sprintf("arena: plan range %d (%v): %v", e.Index, e.Range, e.Err)
}

func (e *PlanError) Unwrap() error { return e.Err }

// Validate checks every range against the limits and returns all problems found,
// joined, each a *PlanError naming its range.
func (p *Plan) Validate(l Limits) error {
	if err := l.Validate(); err != nil {
		return err
	}
	var errs []error
	for i, r := range p.Ranges {
		if err := l.checkPlanRange(r); err != nil {
			errs = append(errs, &PlanError{Index: i, Range: r, Err: err})
		}
	}
	return errors.Join(errs...)
}

// checkPlanRange is checkBindable plus the two plan-only rules: a valid block
// index, and one binding unless the range is marked Split or Addressed.
func (l Limits) checkPlanRange(r PlanRange) error {
	if r.Block < 0 {
		return fmt.Errorf("%w: negative block index", ErrInvalid)
	}
	if err := l.checkBindable(r.Span()); err != nil {
		return err
	}
	switch {
	case r.Split && r.Addressed:
		return fmt.Errorf("%w: a range is split across bindings or addressed, not both", ErrInvalid)
	case r.Addressed:
		return nil // no binding: any size within a block
	case r.Split:
		_, err := l.Bindings(r.Span(), 1)
		return err
	}
	if r.Size > l.MaxBindingRange {
		return fmt.Errorf("%w: size %d exceeds %d and the range is not marked Split or Addressed",
			ErrBindingTooLarge, r.Size, l.MaxBindingRange)
	}
	return nil
}

// BlockSizes returns the bytes each block needs: the largest end of its ranges.
// Blocks no range uses have size 0.
func (p *Plan) BlockSizes() []int64 {
	var sizes []int64
	for _, r := range p.Ranges {
		if r.Block < 0 { // invalid; Validate reports it
			continue
		}
		for len(sizes) <= r.Block {
			sizes = append(sizes, 0)
		}
		sizes[r.Block] = max(sizes[r.Block], r.End())
	}
	return sizes
}

// End is the first byte after the range in its block.
func (r PlanRange) End() int64 { return r.Offset + r.Size }

// TotalBytes is the device memory the plan needs: the sum of its block sizes.
// It is the figure vkxla states before running an executable.
func (p *Plan) TotalBytes() int64 {
	var n int64
	for _, s := range p.BlockSizes() {
		n += s
	}
	return n
}
