package vkxla

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
)

// DeviceTensor is an array that lives in device memory (the runtime's tensor pool):
// an output of RunOnDevice that can feed the next run without a round trip through
// the host. Close frees it; a closed tensor is ErrClosed everywhere (its memory may
// already hold another tensor), and so is a tensor donated to a run.
type DeviceTensor struct {
	rt    *Runtime
	shape hlo.Shape
	alloc arena.Allocation
	mu    sync.Mutex
	freed bool // Close was called, or the tensor was donated
	// donatedTo names the module a run of which the tensor was donated to.
	donatedTo string
	// pins counts the calls reading the tensor now (ToHost, a run staging it);
	// when Close comes during one, the last of them frees the memory.
	pins int
}

// Shape returns the tensor's shape (the zero Shape for a nil or zero tensor).
func (t *DeviceTensor) Shape() hlo.Shape {
	if t == nil {
		return hlo.Shape{}
	}
	return t.shape
}

// valid rejects a nil or zero DeviceTensor (one not made by the runtime).
func (t *DeviceTensor) valid() error {
	if t == nil || t.rt == nil {
		return fmt.Errorf("vkxla: %w: nil or zero DeviceTensor (not made by Upload or RunOnDevice)", ErrInvalidArgument)
	}
	return nil
}

// pin keeps the tensor's memory until unpin, or fails with ErrClosed once the
// tensor is closed. The caller has entered the runtime.
func (t *DeviceTensor) pin() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.freed {
		return t.deadErr()
	}
	t.pins++
	return nil
}

// deadErr says why a freed tensor cannot be used; the caller holds t.mu.
func (t *DeviceTensor) deadErr() error {
	if t.donatedTo != "" {
		return fmt.Errorf("vkxla: device tensor %v was donated to a run of %s (%w)", t.shape, t.donatedTo, ErrClosed)
	}
	return fmt.Errorf("vkxla: device tensor %v is closed (%w)", t.shape, ErrClosed)
}

// donate hands the tensor's memory to a run of module: the tensor is dead from now
// on. A tensor another call is reading cannot be donated. The caller has entered
// the runtime.
func (t *DeviceTensor) donate(module string) (arena.Allocation, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.freed {
		return arena.Allocation{}, t.deadErr()
	}
	if t.pins > 0 {
		return arena.Allocation{}, fmt.Errorf("vkxla: %w: device tensor %v is being read by another call and cannot be donated", ErrInvalidArgument, t.shape)
	}
	t.freed, t.donatedTo = true, module
	return t.alloc, nil
}

// unpin ends a pin, freeing the memory when Close came meanwhile.
func (t *DeviceTensor) unpin() error {
	t.mu.Lock()
	t.pins--
	free := t.pins == 0 && t.freed
	t.mu.Unlock()
	if free {
		return t.rt.pool.Free(t.alloc)
	}
	return nil
}

// ToHost downloads the tensor into a new literal.
func (t *DeviceTensor) ToHost(ctx context.Context) (*hlo.Literal, error) {
	if err := t.valid(); err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, fmt.Errorf("vkxla: device tensor %v: ToHost: %w: nil context", t.shape, ErrInvalidArgument)
	}
	if err := t.rt.enter(); err != nil {
		return nil, fmt.Errorf("vkxla: device tensor %v: %w", t.shape, err)
	}
	defer t.rt.exit()
	if err := t.pin(); err != nil {
		return nil, err
	}
	lit := hlo.NewLiteral(t.shape)
	err := t.rt.pool.Download(ctx, t.alloc.Range, lit.Bytes())
	if err = errors.Join(err, t.unpin()); err != nil {
		return nil, fmt.Errorf("vkxla: device tensor %v: %w", t.shape, err)
	}
	return lit, nil
}

// Close frees the tensor's device memory (once the calls reading it now are done).
// A second Close does nothing; after the runtime's Close it does nothing either
// (that released the whole pool).
func (t *DeviceTensor) Close() error {
	if err := t.valid(); err != nil {
		return err
	}
	t.mu.Lock()
	if t.freed {
		t.mu.Unlock()
		return nil
	}
	t.freed = true
	pinned := t.pins > 0
	t.mu.Unlock()
	if pinned {
		return nil // the last unpin frees it
	}
	if t.rt.enter() != nil {
		return nil // the runtime's Close released the whole pool
	}
	defer t.rt.exit()
	return t.rt.pool.Free(t.alloc)
}

// Upload copies a host literal into a new device tensor.
func (rt *Runtime) Upload(ctx context.Context, lit *hlo.Literal) (*DeviceTensor, error) {
	if ctx == nil || lit == nil {
		return nil, fmt.Errorf("vkxla: Upload: %w: nil context or literal", ErrInvalidArgument)
	}
	if err := rt.enter(); err != nil {
		return nil, fmt.Errorf("vkxla: Upload: %w", err)
	}
	defer rt.exit()
	t, err := rt.newTensor(lit.Shape())
	if err != nil {
		return nil, fmt.Errorf("vkxla: Upload: %w", err)
	}
	if err := rt.pool.Upload(ctx, t.alloc.Range, lit.Bytes()); err != nil {
		return nil, errors.Join(fmt.Errorf("vkxla: Upload: %w", err), t.Close())
	}
	return t, nil
}

// newTensor allocates a tensor in the pool; the caller has entered the runtime.
func (rt *Runtime) newTensor(s hlo.Shape) (*DeviceTensor, error) {
	if !s.IsArray() {
		return nil, fmt.Errorf("%w: device tensors are arrays, not %v", ErrInvalidArgument, s)
	}
	a, err := rt.pool.Alloc(max(s.ByteSize(), 4))
	if err != nil {
		return nil, fmt.Errorf("vkxla: device tensor %v: %w", s, err)
	}
	return &DeviceTensor{rt: rt, shape: s.Clone(), alloc: a}, nil
}

func unpinTensors(ts []*DeviceTensor) error {
	var errs []error
	for _, t := range ts {
		errs = append(errs, t.unpin())
	}
	return errors.Join(errs...)
}

// RunOnDevice runs like Run, but takes host literals or device tensors as inputs and
// leaves its outputs on the device. Device inputs are copied on the device, except
// for donated parameters (WithDonation, input_output_alias), whose tensors the run
// uses in place and kills, and borrowed ones (WithBorrowedInputs), read in place.
// An output written over a donated tensor's memory takes that memory over.
func (e *Executable) RunOnDevice(ctx context.Context, inputs ...any) ([]*DeviceTensor, error) {
	var outs []*DeviceTensor
	err := e.run(ctx, inputs, func(c *compiled, b *binding) error {
		var err error
		outs, err = c.copyOutputsToPool(ctx, b)
		return err
	})
	return outs, err
}

// inputShape returns the shape of a Run input, which is a literal or device tensor.
func inputShape(in any) (hlo.Shape, error) {
	switch x := in.(type) {
	case *hlo.Literal:
		if x == nil {
			return hlo.Shape{}, errors.New("nil literal")
		}
		return x.Shape(), nil
	case *DeviceTensor:
		if x == nil || x.rt == nil {
			return hlo.Shape{}, errors.New("nil or zero device tensor")
		}
		return x.shape, nil
	}
	return hlo.Shape{}, fmt.Errorf("an input must be *hlo.Literal or *vkxla.DeviceTensor, not %T", in)
}

// stageInputs writes every input of a parameter in the executable's memory (its
// arena, or its host buffers for a host-resident parameter) into its ranges:
// literals by upload, device tensors by a copy. Parameters in the caller's
// memory (slots) were bound already.
func (c *compiled) stageInputs(ctx context.Context, inputs []any) error {
	var copies []poolCopy
	for i, in := range inputs {
		if c.paramSlots[i] != nil {
			continue
		}
		switch x := in.(type) {
		case *hlo.Literal:
			if err := c.uploadLiteral(ctx, c.params[i], x); err != nil {
				return fmt.Errorf("input %d: %w", i, err)
			}
		case *DeviceTensor:
			_, dst := c.ownRange(c.params[i].Leaves[0])
			copies = append(copies, poolCopy{src: x.alloc.Range, dst: dst, size: x.shape.ByteSize()})
		}
	}
	return c.rt.copyPool(ctx, copies)
}

// uploadLiteral writes a (possibly tuple) literal into a value's leaves.
func (c *compiled) uploadLiteral(ctx context.Context, v plan.Value, lit *hlo.Literal) error {
	leaves := lit.Leaves()
	for j, leaf := range leaves {
		a, r := c.ownRange(v.Leaves[j])
		if err := a.Upload(ctx, r, leaf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// copyOutputsToPool makes every output leaf a device tensor: one written over a
// donated tensor's memory takes it over, the others are copied into new tensors.
func (c *compiled) copyOutputsToPool(ctx context.Context, b *binding) ([]*DeviceTensor, error) {
	shapes := c.root.Shape.Leaves()
	outs := make([]*DeviceTensor, 0, len(shapes))
	var copies []poolCopy
	for i, s := range shapes {
		t, cp, err := c.outputTensor(b, i, s)
		if err != nil {
			return nil, errors.Join(err, closeTensors(outs))
		}
		outs = append(outs, t)
		if cp != nil {
			copies = append(copies, *cp)
		}
	}
	if err := c.rt.copyPool(ctx, copies); err != nil {
		return nil, errors.Join(err, closeTensors(outs))
	}
	return outs, nil
}

func closeTensors(ts []*DeviceTensor) error {
	var errs []error
	for _, t := range ts {
		errs = append(errs, t.Close())
	}
	return errors.Join(errs...)
}

// poolCopy is one device copy between a pool tensor and an executable's range.
type poolCopy struct {
	src, dst arena.Range
	size     int64
}

// copyPool records and submits the copies in one command buffer.
func (rt *Runtime) copyPool(ctx context.Context, copies []poolCopy) (err error) {
	var n int
	for _, pc := range copies {
		if pc.size > 0 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	cb, err := rt.dev.NewCommandBuffer()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cb.Close()) }()
	if err := cb.Begin(); err != nil {
		return err
	}
	for _, pc := range copies {
		src, dst := pc.src, pc.dst
		if pc.size == 0 {
			continue
		}
		if err := cb.Copy(src.Buffer(), src.Offset(), dst.Buffer(), dst.Offset(), pc.size); err != nil {
			return err
		}
	}
	if err := cb.End(); err != nil {
		return err
	}
	return rt.dev.Submit(ctx, cb)
}
