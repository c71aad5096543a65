package vkxla

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/collective"
	"github.com/vkxla/vkxla/plan"
)

var bg = context.Background()

// compiled is the device state of one compiled module, shared by every Executable
// handle that the cache hands out; it is released when the last reference goes.
type compiled struct {
	rt        *Runtime
	module    *hlo.Module
	optimized *hlo.Module // after the passes: what the kernels compute
	params    []plan.Value
	root      plan.Value
	main      *plan.Block
	stats     MemoryStats
	livePeak  []LiveBuffer
	arena     *arena.Arena
	host      *arena.Arena // offloaded values' host memory; nil: none
	rec       *recorder
	// slots are the parameter leaves in the caller's memory (donate.go): slotOf
	// maps each plan range to its slot or -1, paramSlots each parameter's leaves
	// to theirs (nil for a parameter in the arena).
	slots      []plan.Slot
	slotOf     []int
	paramSlots [][]int
	rngEnd     plan.Value // the run's final RNG state, when it draws (rng_state.go)

	mu   sync.Mutex   // serialises Runs: they share the arena's buffers
	refs int          // guarded by rt.cache.mu
	ran  []ranSegment // the last Run's timed segments, in execution order
	dead bool
	// recordings are the command buffers recorded per binding of the slots, most
	// recently used last; cur and bound are the running Run's recorder and binding.
	recordings []recording
	cur        *recorder
	bound      *binding
	// devices is how many devices run the program together; dev is the running
	// Run's place among them (replicas.go), nil outside CompileReplicated's runs.
	devices int
	dev     *collective.Device
}

// handle returns a new caller reference (the caller already counted it).
func (c *compiled) handle() *Executable { return &Executable{c: c} }

// release frees the device state.
func (c *compiled) release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return nil
	}
	c.dead = true
	c.rt.untrack(c)
	var errs []error
	errs = append(errs, c.closeRecordings())
	if c.rec != nil {
		errs = append(errs, c.rec.close())
	}
	if c.arena != nil {
		errs = append(errs, c.arena.Close())
	}
	if c.host != nil {
		errs = append(errs, c.host.Close())
	}
	return errors.Join(errs...)
}

// Executable is a compiled module ready to run. Runs from many goroutines are safe;
// they take turns on the executable's device buffers.
type Executable struct {
	c      *compiled
	mu     sync.Mutex
	closed bool
	rng    rngStream // guarded by c.mu (rng_state.go)
}

// Module returns a copy of the module the executable was compiled from (after
// hlo.Verify, before the passes); editing it changes nothing about the executable.
func (e *Executable) Module() *hlo.Module { return e.c.module.Clone() }

// OptimizedModule returns a copy of the module after the pass pipeline: every
// entry instruction is one kernel (a fusion, a dot, …) or a control step, as XLA's
// compiled text (jax's .compile().as_text()) shows what runs.
func (e *Executable) OptimizedModule() *hlo.Module { return e.c.optimized.Clone() }

// MemoryStats returns the device memory the executable holds, known at compile time.
func (e *Executable) MemoryStats() MemoryStats { return e.c.stats }

// LiveAtPeak lists the buffers live where the executable's live bytes peak (the
// moment of MemoryStats().LowerBoundBytes), largest first: what to shrink, fuse,
// reorder or rematerialise to lower the peak.
func (e *Executable) LiveAtPeak() []LiveBuffer { return slices.Clone(e.c.livePeak) }

// Close releases this reference; the device state goes when no reference and no
// cache entry holds it. A second Close does nothing, nor does a Close after the
// runtime's (that released every executable).
func (e *Executable) Close() error {
	if err := e.valid(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	// The release uses the device, so it counts as a call in flight: the runtime's
	// Close waits for it, and once Close has begun it releases every executable itself.
	if e.c.rt.enter() != nil {
		return nil
	}
	defer e.c.rt.exit()
	return e.c.rt.cache.unref(e.c)
}

// valid rejects a nil or zero Executable (one not made by Compile).
func (e *Executable) valid() error {
	if e == nil || e.c == nil {
		return fmt.Errorf("vkxla: %w: nil or zero Executable (not made by Compile)", ErrInvalidArgument)
	}
	return nil
}

func (e *Executable) checkOpen() error {
	if err := e.valid(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("vkxla: executable %s is closed (%w)", e.c.module.Name, ErrClosed)
	}
	return nil
}

// Run uploads the inputs, runs the executable and returns its outputs: one literal
// per array leaf of the entry's root (a tuple root is flattened).
func (e *Executable) Run(ctx context.Context, inputs ...*hlo.Literal) ([]*hlo.Literal, error) {
	args := make([]any, len(inputs))
	for i, in := range inputs {
		args[i] = in
	}
	var outs []*hlo.Literal
	err := e.run(ctx, args, func(c *compiled, _ *binding) error {
		var err error
		outs, err = c.downloadOutputs(ctx)
		return err
	})
	return outs, err
}

// run checks the arguments, binds and stages them, executes, and hands over to
// collect while the executable's buffers are still held.
func (e *Executable) run(ctx context.Context, inputs []any, collect func(*compiled, *binding) error) error {
	return e.runOn(ctx, nil, inputs, collect)
}

// runOn is run as one device of a multi-device run (dev; nil: a one-device run).
func (e *Executable) runOn(ctx context.Context, dev *collective.Device, inputs []any, collect func(*compiled, *binding) error) (err error) {
	if err := e.checkOpen(); err != nil {
		return err
	}
	c := e.c
	name := c.module.Name
	if ctx == nil {
		return fmt.Errorf("vkxla: Run %s: %w: nil context", name, ErrInvalidArgument)
	}
	if c.devices > 1 && dev == nil {
		return fmt.Errorf("vkxla: Run %s: %w: compiled for %d devices: run it with Replicated.Run or Distributed.Run", name, ErrInvalidArgument, c.devices)
	}
	if err := c.checkInputs(inputs); err != nil {
		return fmt.Errorf("vkxla: Run %s: %w", name, err)
	}
	if err := c.rt.enter(); err != nil {
		return fmt.Errorf("vkxla: Run %s: %w", name, err)
	}
	defer c.rt.exit()
	b, err := c.bind(ctx, inputs)
	if err != nil {
		return fmt.Errorf("vkxla: Run %s: %w", name, err)
	}
	defer func() {
		if rerr := b.release(c.rt); rerr != nil {
			err = errors.Join(err, fmt.Errorf("vkxla: Run %s: %w", name, rerr))
		}
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return fmt.Errorf("vkxla: Run %s: the runtime is closed (%w)", name, ErrClosed)
	}
	err = c.stageInputs(ctx, inputs)
	if err == nil {
		err = e.stageRngState(ctx)
	}
	// The tensors' bytes are in the parameter ranges now (or the run failed): a
	// Close waiting for them may free them.
	if err = errors.Join(err, b.unstage()); err != nil {
		return fmt.Errorf("vkxla: Run %s: %w", name, err)
	}
	c.ran = c.ran[:0]
	if c.cur, err = c.recordingFor(b); err != nil {
		return fmt.Errorf("vkxla: Run %s: %w", name, err)
	}
	c.bound, c.dev = b, dev
	defer func() { c.cur, c.bound, c.dev = nil, nil, nil }()
	if err := c.execBlock(ctx, c.main); err != nil {
		return fmt.Errorf("vkxla: Run %s: %w", name, err)
	}
	if err := e.keepRngState(ctx); err != nil {
		return fmt.Errorf("vkxla: Run %s: %w", name, err)
	}
	if err := collect(c, b); err != nil {
		return fmt.Errorf("vkxla: Run %s: %w", name, err)
	}
	return nil
}

// checkInputs compares the inputs with the entry parameters.
func (c *compiled) checkInputs(inputs []any) error {
	params := c.module.Entry.Params
	if len(inputs) != len(params) {
		return fmt.Errorf("%w: %d inputs given, the entry computation %s takes %d", ErrInvalidArgument, len(inputs), c.module.Entry.Name, len(params))
	}
	for i, in := range inputs {
		got, err := inputShape(in)
		if err != nil {
			return fmt.Errorf("%w: input %d (parameter %s): %v", ErrInvalidArgument, i, params[i].Name, err)
		}
		if want := params[i].Shape; !got.Equal(want) {
			return fmt.Errorf("%w: input %d (parameter %s): expected %v, got %v", ErrInvalidArgument, i, params[i].Name, want, got)
		}
	}
	return nil
}

// execBlock runs a block's segments in order.
func (c *compiled) execBlock(ctx context.Context, b *plan.Block) error {
	segs := c.cur.segments[b]
	for i := range segs {
		seg := &segs[i]
		if err := ctx.Err(); err != nil {
			return err
		}
		if seg.control != nil {
			if err := c.execControl(ctx, seg.control); err != nil {
				return err
			}
			continue
		}
		if err := c.rt.dev.Submit(ctx, seg.cb); err != nil {
			return err
		}
		if err := c.noteRan(seg); err != nil {
			return err
		}
	}
	return nil
}

func (c *compiled) execControl(ctx context.Context, st *plan.Step) error {
	switch st.Kind {
	case plan.StepWhile:
		return c.execWhile(ctx, st)
	case plan.StepCollective:
		return c.execCollective(ctx, st)
	}
	i, err := c.readInt(ctx, st.Index, st.IndexType)
	if err != nil {
		return fmt.Errorf("%s: %w", st.Name, err)
	}
	return c.execBlock(ctx, st.Branches[branchIndex(i, st.IndexType, len(st.Branches))])
}

// branchIndex maps a conditional's selector to a branch as XLA does: a pred picks
// branch 0 when true and 1 when false; an out-of-range index picks the last branch.
func branchIndex(v int64, dt hlo.DType, n int) int {
	if dt == hlo.Pred {
		if v != 0 {
			return 0
		}
		return 1
	}
	if v < 0 || v >= int64(n) {
		return n - 1
	}
	return int(v)
}

func (c *compiled) execWhile(ctx context.Context, st *plan.Step) error {
	for {
		if err := c.execBlock(ctx, st.Cond); err != nil {
			return err
		}
		p, err := c.readInt(ctx, st.Pred, hlo.Pred)
		if err != nil {
			return fmt.Errorf("%s: %w", st.Name, err)
		}
		if p == 0 {
			return nil
		}
		if err := c.execBlock(ctx, st.Body); err != nil {
			return err
		}
	}
}

// readInt downloads a scalar pred or integer.
func (c *compiled) readInt(ctx context.Context, rng int, dt hlo.DType) (int64, error) {
	lit := hlo.NewLiteral(hlo.Scalar(dt))
	if err := c.download(ctx, rng, lit.Bytes()); err != nil {
		return 0, err
	}
	return lit.Int64(0), nil
}

// downloadOutputs reads every output leaf into a new literal.
func (c *compiled) downloadOutputs(ctx context.Context) ([]*hlo.Literal, error) {
	shapes := c.root.Shape.Leaves()
	outs := make([]*hlo.Literal, len(shapes))
	for i, s := range shapes {
		outs[i] = hlo.NewLiteral(s)
		if s.ByteSize() == 0 {
			continue
		}
		if err := c.download(ctx, c.root.Leaves[i], outs[i].Bytes()); err != nil {
			return nil, fmt.Errorf("output %d: %w", i, err)
		}
	}
	return outs, nil
}
