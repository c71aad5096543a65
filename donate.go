package vkxla

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
)

// Donation and borrowed inputs (docs/runtime.md, "Donation").
//
// The plan's slots are parameter leaves that live in the caller's memory, not in
// the executable's arena: donated parameters (WithDonation, and every parameter the
// module's input_output_alias names) and borrowed ones (WithBorrowedInputs). A run
// binds each slot to memory of the tensor pool: a donated DeviceTensor's own
// memory (the tensor is dead from then on), a borrowed DeviceTensor's (pinned for
// the run, never written), or a pool buffer the run uploads a host literal into.
// An output the plan writes over a donated slot takes that memory over; the other
// donated memory is freed after the run.
//
// Descriptor sets are written when command buffers are recorded, so the command
// buffers are recorded per binding (the slots' buffers and offsets) and kept in a
// small cache: a decode loop that donates the same memory every step (each step's
// output cache is the next step's input) replays its recording; new memory costs
// one recording of the executable's command buffers.

// maxRecordings bounds the recordings an executable keeps, one per binding.
const maxRecordings = 4

// WithDonation donates the entry parameters numbered params (jax.jit's
// donate_argnums): RunOnDevice uses a DeviceTensor passed for one of them in place
// instead of copying it, the tensor is dead afterwards (ErrClosed, "donated"), and
// an output of the parameter's shape is written over its memory where the plan
// allows (the module's input_output_alias first, then the first unaliased output of
// that shape). The executable's arena holds no memory for donated parameters.
// Every parameter input_output_alias names is donated without this option.
func WithDonation(params ...int) CompileOption {
	return func(c *compileConfig) { c.donate = sortedSet(append(c.donate, params...)) }
}

// WithBorrowedInputs reads the entry parameters numbered params from the caller's
// DeviceTensors in place (weights kept on the device) instead of copying them into
// the executable's arena, which then holds no memory for them. Nothing writes a
// borrowed tensor; it stays the caller's.
func WithBorrowedInputs(params ...int) CompileOption {
	return func(c *compileConfig) { c.borrow = sortedSet(append(c.borrow, params...)) }
}

func sortedSet(xs []int) []int {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// checkParamOptions rejects donated or borrowed parameter numbers the entry does
// not have, and a parameter both donated and borrowed.
func (c compileConfig) checkParamOptions(m *hlo.Module) error {
	n := len(m.Entry.Params)
	for _, p := range append(slices.Clone(c.donate), c.borrow...) {
		if p < 0 || p >= n {
			return fmt.Errorf("%w: parameter %d is donated or borrowed, but the entry %s takes %d", ErrInvalidArgument, p, m.Entry.Name, n)
		}
	}
	for _, p := range c.borrow {
		if slices.Contains(c.donate, p) {
			return fmt.Errorf("%w: parameter %d is both donated and borrowed", ErrInvalidArgument, p)
		}
	}
	for _, a := range m.InputOutputAlias {
		if slices.Contains(c.borrow, int(a.Param)) {
			return fmt.Errorf("%w: parameter %d is borrowed, but input_output_alias %v writes over it", ErrInvalidArgument, a.Param, a)
		}
	}
	return nil
}

// slotsOf records the plan's slots on the executable: each parameter leaf's slot
// and each range's.
func (c *compiled) slotsOf(p *plan.Plan) {
	c.slots = p.Slots()
	c.slotOf = make([]int, len(p.Arena().Ranges))
	for r := range c.slotOf {
		c.slotOf[r] = p.SlotOf(r)
	}
	c.paramSlots = make([][]int, len(c.params))
	for s, sl := range c.slots {
		if c.paramSlots[sl.Param] == nil {
			c.paramSlots[sl.Param] = make([]int, len(c.params[sl.Param].Leaves))
		}
		c.paramSlots[sl.Param][sl.Leaf] = s
	}
}

// binding is one run's memory for the plan's slots and the device tensors the run
// holds.
type binding struct {
	ranges []arena.Range       // per slot
	owned  []*arena.Allocation // per slot: memory the run owns (donated or uploaded), else nil
	staged []*DeviceTensor     // pinned until their bytes are copied into the arena
	lent   []*DeviceTensor     // borrowed: pinned for the whole run
}

// bind takes the run's device tensors: it pins those that are staged or borrowed,
// uploads host literals of slot parameters into pool memory the run owns, and
// last takes the memory of donated tensors (they die there), so that a bad input
// kills no donated tensor. On error it gives back what it took; a donated tensor
// already taken stays dead (its memory is freed).
func (c *compiled) bind(ctx context.Context, inputs []any) (*binding, error) {
	b := &binding{ranges: make([]arena.Range, len(c.slots)), owned: make([]*arena.Allocation, len(c.slots))}
	if err := c.checkDonatedOnce(inputs); err != nil {
		return nil, err
	}
	for _, donated := range []bool{false, true} {
		for i, in := range inputs {
			if c.donatesTensor(i, in) != donated {
				continue
			}
			if err := c.bindInput(ctx, b, i, in); err != nil {
				return nil, errors.Join(fmt.Errorf("input %d: %w", i, err), b.release(c.rt))
			}
		}
	}
	return b, nil
}

// donatesTensor reports a device tensor given for a donated parameter.
func (c *compiled) donatesTensor(i int, in any) bool {
	_, ok := in.(*DeviceTensor)
	return ok && c.paramSlots[i] != nil && c.slots[c.paramSlots[i][0]].Donated
}

func (c *compiled) bindInput(ctx context.Context, b *binding, i int, in any) error {
	slots := c.paramSlots[i]
	switch x := in.(type) {
	case *DeviceTensor:
		if x.rt != c.rt {
			return fmt.Errorf("%w: a tensor of another runtime", ErrInvalidArgument)
		}
		if slots == nil {
			if err := x.pin(); err != nil {
				return err
			}
			b.staged = append(b.staged, x)
			return nil
		}
		return c.bindTensor(b, slots[0], x)
	case *hlo.Literal:
		for k, leaf := range x.Leaves() {
			if slots != nil {
				if err := c.uploadSlot(ctx, b, slots[k], leaf); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// bindTensor binds a device tensor to slot s: donated (its memory moves to the
// run) or borrowed (pinned).
func (c *compiled) bindTensor(b *binding, s int, t *DeviceTensor) error {
	if !c.slots[s].Donated {
		if err := t.pin(); err != nil {
			return err
		}
		b.lent = append(b.lent, t)
		b.ranges[s] = t.alloc.Range
		return nil
	}
	a, err := t.donate(c.module.Name)
	if err != nil {
		return err
	}
	b.owned[s], b.ranges[s] = &a, a.Range
	return nil
}

// uploadSlot copies a host literal into new pool memory for slot s.
func (c *compiled) uploadSlot(ctx context.Context, b *binding, s int, lit *hlo.Literal) error {
	a, err := c.rt.pool.Alloc(max(lit.Shape().ByteSize(), 4))
	if err != nil {
		return err
	}
	b.owned[s], b.ranges[s] = &a, a.Range
	if lit.Shape().ByteSize() == 0 {
		return nil
	}
	return c.rt.pool.Upload(ctx, a.Range, lit.Bytes())
}

// checkDonatedOnce rejects a call that passes a tensor for a donated parameter and
// passes the same tensor again: the run would read memory it writes over.
func (c *compiled) checkDonatedOnce(inputs []any) error {
	for i, in := range inputs {
		if !c.donatesTensor(i, in) {
			continue
		}
		t := in.(*DeviceTensor)
		for j, other := range inputs {
			if j != i && other == in {
				return fmt.Errorf("%w: input %d donates device tensor %v, and input %d passes it again", ErrInvalidArgument, i, t.shape, j)
			}
		}
	}
	return nil
}

// unstage unpins the tensors whose bytes are in the arena now.
func (b *binding) unstage() error {
	err := unpinTensors(b.staged)
	b.staged = nil
	return err
}

// release ends the run's hold: it unpins tensors and frees the memory the run
// owns that no output took over.
func (b *binding) release(rt *Runtime) error {
	errs := []error{b.unstage(), unpinTensors(b.lent)}
	b.lent = nil
	for s, a := range b.owned {
		if a != nil {
			errs = append(errs, rt.pool.Free(*a))
			b.owned[s] = nil
		}
	}
	return errors.Join(errs...)
}

// take hands slot s's memory to an output tensor; false when the run does not own
// it (borrowed) or an output already took it.
func (b *binding) take(s int) (arena.Allocation, bool) {
	a := b.owned[s]
	if a == nil {
		return arena.Allocation{}, false
	}
	b.owned[s] = nil
	return *a, true
}

// key identifies a binding's memory: the buffer, offset and size of every slot.
type bindingKey string

func (b *binding) key() bindingKey {
	var sb []byte
	for _, r := range b.ranges {
		sb = fmt.Appendf(sb, "%p/%d/%d;", r.Buffer(), r.Offset(), r.Size())
	}
	return bindingKey(sb)
}

// recording is the executable's command buffers recorded for one binding; its
// recorder keeps the bound ranges (and so their buffers) alive while cached.
type recording struct {
	key bindingKey
	rec *recorder
}

// recordingFor returns the recorder to run with b: the one recorded at compile
// time when the plan has no slots, else the cached recording for b's memory,
// recording it (and evicting the oldest) when missing. The caller holds c.mu.
func (c *compiled) recordingFor(b *binding) (*recorder, error) {
	if len(c.slots) == 0 {
		return c.rec, nil
	}
	k := b.key()
	for i, r := range c.recordings {
		if r.key == k {
			c.recordings = append(append(c.recordings[:i:i], c.recordings[i+1:]...), r) // most recent last
			return r.rec, nil
		}
	}
	rec := &recorder{dev: c.rt.dev, arena: c.arena, host: c.host, onHost: c.rec.onHost, kernels: c.rec.kernels, timed: c.rec.timed, tableBytes: c.rec.tableBytes,
		segments: map[*plan.Block][]segment{}, bound: &slotBinding{pool: c.rt.pool, slotOf: c.slotOf, ranges: slices.Clone(b.ranges)}}
	if err := rec.recordBlock(c.main, false); err != nil {
		return nil, errors.Join(err, rec.closeRecording())
	}
	var err error
	if len(c.recordings) == maxRecordings {
		err = c.recordings[0].rec.closeRecording()
		c.recordings = c.recordings[1:]
	}
	c.recordings = append(c.recordings, recording{key: k, rec: rec})
	return rec, err
}

// closeRecordings frees every cached recording's command buffers.
func (c *compiled) closeRecordings() error {
	var errs []error
	for _, r := range c.recordings {
		errs = append(errs, r.rec.closeRecording())
	}
	c.recordings = nil
	return errors.Join(errs...)
}

// slotBinding maps plan ranges in the caller's memory to the run's memory.
type slotBinding struct {
	pool   *arena.Arena // the runtime's tensor pool, which holds ranges
	slotOf []int
	ranges []arena.Range
}

// placedRange is where plan range i lives in this recording, with the arena that
// holds it (its binding limits split it): the memory bound to its slot, in the
// runtime's pool, the executable's host memory, or its arena.
func (r *recorder) placedRange(i int) (*arena.Arena, arena.Range) {
	if r.bound != nil && r.bound.slotOf[i] >= 0 {
		return r.bound.pool, r.bound.ranges[r.bound.slotOf[i]]
	}
	if r.host != nil && r.onHost(i) {
		return r.host, r.host.PlanRange(i)
	}
	return r.arena, r.arena.PlanRange(i)
}

// bufferRange is plan range i as one binding.
func (r *recorder) bufferRange(i int) device.BufferRange {
	_, rng := r.placedRange(i)
	return rng.BufferRange()
}

// closeRecording frees the command buffers and address tables of a recording (its
// kernels are the executable's, freed with it).
func (r *recorder) closeRecording() error {
	var errs []error
	for _, cb := range r.cbs {
		errs = append(errs, cb.Close())
	}
	for _, b := range r.tables {
		r.tableBytes.Add(-b.Size())
		errs = append(errs, b.Close())
	}
	r.cbs, r.tables = nil, nil
	return errors.Join(errs...)
}

// deviceRange is where plan range i lives in this run: the arena it belongs to and
// its range there.
func (c *compiled) deviceRange(b *binding, i int) (*arena.Arena, arena.Range) {
	if b != nil && c.slotOf[i] >= 0 {
		return c.rt.pool, b.ranges[c.slotOf[i]]
	}
	return c.ownRange(i)
}

// ownRange is where plan range i lives in the executable's own memory: its host
// buffers (a host-resident input or output, an offloaded value) or its arena.
func (c *compiled) ownRange(i int) (*arena.Arena, arena.Range) {
	if c.host != nil && c.rec.onHost(i) {
		return c.host, c.host.PlanRange(i)
	}
	return c.arena, c.arena.PlanRange(i)
}

// download reads plan range i into dst.
func (c *compiled) download(ctx context.Context, i int, dst []byte) error {
	a, r := c.deviceRange(c.bound, i)
	return a.Download(ctx, r, dst)
}

// outputTensor makes output leaf i a device tensor: it takes over the donated
// memory the plan wrote it over, or is copied out of its range.
func (c *compiled) outputTensor(b *binding, i int, s hlo.Shape) (*DeviceTensor, *poolCopy, error) {
	r := c.root.Leaves[i]
	if slot := c.slotOf[r]; slot >= 0 {
		if a, ok := b.take(slot); ok {
			return &DeviceTensor{rt: c.rt, shape: s.Clone(), alloc: a}, nil, nil
		}
	}
	t, err := c.rt.newTensor(s)
	if err != nil {
		return nil, nil, err
	}
	_, src := c.deviceRange(b, r)
	return t, &poolCopy{src: src, dst: t.alloc.Range, size: s.ByteSize()}, nil
}
