package vkxla

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/passes"
)

// CompileOption configures Compile.
type CompileOption func(*compileConfig)

type compileConfig struct {
	noCache  bool
	profile  bool
	disabled []string // passes to skip
	budget   int64    // device memory budget in bytes; 0: none
}

// key is the part of the options that changes the compiled result.
func (c compileConfig) key() string {
	return fmt.Sprintf("profile=%v disabled=%q budget=%d", c.profile, c.disabled, c.budget)
}

// WithMemoryBudget makes Compile meet a device memory budget: the executable's
// MemoryStats().PeakBytes will be at most bytes. Values that would stay live across
// the peak are recomputed before their next use instead (rematerialisation, JAX's
// checkpointing); when that cannot bring the plan within the budget, Compile fails
// with ErrOverBudget, saying what the plan needs.
func WithMemoryBudget(bytes int64) CompileOption { return func(c *compileConfig) { c.budget = bytes } }

// WithoutPasses skips the named passes of the optimisation pipeline (see
// passes.Names), as XLA's xla_disable_hlo_passes does: WithoutPasses("fusion")
// compiles one kernel per instruction. An unknown name fails Compile.
func WithoutPasses(names ...string) CompileOption {
	return func(c *compileConfig) {
		c.disabled = append(c.disabled, names...)
		slices.Sort(c.disabled)
		c.disabled = slices.Compact(c.disabled)
	}
}

// WithoutCache compiles afresh and leaves the cache alone.
func WithoutCache() CompileOption { return func(c *compileConfig) { c.noCache = true } }

// WithProfiling records a GPU timestamp around every dispatch, read by Profile. It
// is on by default where the device has timestamps; WithProfiling(false) saves the
// queries.
func WithProfiling(on bool) CompileOption { return func(c *compileConfig) { c.profile = on } }

// Compile verifies m, generates its kernels, plans its memory and records its
// command buffers. A structurally identical module compiled with the same options
// returns the cached executable (each returned Executable must be closed); modules
// that differ only in computation and instruction names are identical. Compile
// works on its own copy of m: editing m afterwards changes nothing. Cancelling ctx
// stops a compile between its stages (after the passes, after each kernel, before
// recording) with ctx's error; closing the runtime stops it there with ErrClosed.
// A plan that does not fit in what is left of the device's memory fails with
// device.ErrOutOfDeviceMemory before anything is allocated.
func (rt *Runtime) Compile(ctx context.Context, m *hlo.Module, opts ...CompileOption) (*Executable, error) {
	if ctx == nil {
		return nil, fmt.Errorf("vkxla: Compile: %w: nil context", ErrInvalidArgument)
	}
	if m == nil {
		return nil, fmt.Errorf("vkxla: Compile: %w: nil module", ErrInvalidArgument)
	}
	if err := rt.enter(); err != nil {
		return nil, fmt.Errorf("vkxla: Compile %s: %w", m.Name, err)
	}
	defer rt.exit()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("vkxla: Compile %s: %w", m.Name, err)
	}
	cfg := compileConfig{profile: rt.dev.Caps().TimestampsSupported}
	for _, o := range opts {
		o(&cfg)
	}
	if err := hlo.Verify(m); err != nil {
		return nil, fmt.Errorf("vkxla: Compile %s: %w", m.Name, err)
	}
	if cfg.budget < 0 {
		return nil, fmt.Errorf("vkxla: Compile %s: %w: memory budget %d bytes is negative", m.Name, ErrInvalidArgument, cfg.budget)
	}
	if cfg.noCache {
		c, err := rt.compile(ctx, m.Clone(), cfg)
		if err != nil {
			return nil, err
		}
		return c.handle(), nil
	}
	key := fingerprint(hlo.Fingerprint(m), cfg.key())
	return rt.cache.getOrCompile(key, func() (*compiled, error) { return rt.compile(ctx, m.Clone(), cfg) })
}

// stageErr is what stops a compile between stages: ctx's end or the runtime's Close.
func (rt *Runtime) stageErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return rt.checkOpen()
}

// compile does the work behind Compile on m, the executable's own copy.
func (rt *Runtime) compile(ctx context.Context, m *hlo.Module, cfg compileConfig) (*compiled, error) {
	c, err := rt.compileModule(ctx, m, cfg)
	if err != nil {
		return nil, fmt.Errorf("vkxla: Compile %s: %w", m.Name, err)
	}
	return c, nil
}

func (rt *Runtime) compileModule(ctx context.Context, m *hlo.Module, cfg compileConfig) (*compiled, error) {
	d := rt.newDumper(m.Name)
	d.write("00-input.hlo", func() string { return hlo.Print(m) })
	lw, err := rt.lowerWithinBudget(ctx, m, cfg, d)
	if err != nil {
		return nil, err
	}
	l := lw.l
	d.write("05-kernels.hlo", l.lowered.String)
	d.writeKernels(l.kernels)
	if rt.validateSPIRV {
		if err := validateKernels(l.kernels); err != nil {
			return nil, err
		}
	}
	d.write("10-plan.txt", func() string { return planText(l) })
	if err := d.err(); err != nil {
		return nil, err
	}
	if err := rt.checkPlanFits(l); err != nil {
		return nil, err
	}
	if err := rt.stageErr(ctx); err != nil {
		return nil, err
	}
	c := &compiled{rt: rt, module: m, optimized: lw.optimized, params: lw.params, root: lw.root, main: lw.main, stats: lw.stats,
		livePeak: livePeak(l), refs: 1}
	if err := c.build(ctx, l, cfg.profile); err != nil {
		return nil, errors.Join(err, c.release())
	}
	// Close waits for this compile, so the runtime is still open unless Close began
	// meanwhile; then the executable goes at once.
	if err := rt.track(c); err != nil {
		return nil, errors.Join(err, c.release())
	}
	return c, nil
}

// lowered is a module lowered to blocks over a placed plan.
type lowered struct {
	l         *lowering
	optimized *hlo.Module // the module after the passes: what the kernels compute
	params    []value
	main      *block
	root      value
	stats     MemoryStats
}

// budgetAttempts bounds the optimise-and-lower rounds under a memory budget.
const budgetAttempts = 4

// lowerWithinBudget optimises and lowers m. Under a memory budget the remat pass
// aims at the budget in its own memory model; when the real plan (in-place outputs,
// alignment, resident constants) still exceeds it, the pass aims lower by the
// excess and the module is lowered again, a few times at most.
func (rt *Runtime) lowerWithinBudget(ctx context.Context, m *hlo.Module, cfg compileConfig, d *dumper) (*lowered, error) {
	aim := cfg.budget
	for attempt := 1; ; attempt++ {
		lw, err := rt.lowerModule(ctx, m, cfg, aim, d)
		if err != nil {
			return nil, err
		}
		st := lw.stats
		if cfg.budget <= 0 || st.PeakBytes <= cfg.budget {
			return lw, nil
		}
		aim -= st.PeakBytes - cfg.budget
		if attempt == budgetAttempts || aim <= 0 {
			return nil, fmt.Errorf("%w: the plan needs %d bytes of device memory, over the budget of %d bytes, after rematerialisation (%v); largest live at the peak: %s",
				ErrOverBudget, st.PeakBytes, cfg.budget, st, largest(livePeak(lw.l), 4))
		}
	}
}

// lowerModule runs the passes (remat aiming at aim bytes) and lowers the result.
func (rt *Runtime) lowerModule(ctx context.Context, m *hlo.Module, cfg compileConfig, aim int64, d *dumper) (*lowered, error) {
	opt, err := rt.optimize(m, cfg, aim, d)
	if err != nil {
		return nil, err
	}
	if err := rt.stageErr(ctx); err != nil {
		return nil, err
	}
	l := &lowering{target: rt.target, limits: arena.LimitsFromCaps(rt.dev.Caps()), kernels: newKernelSet(), dumping: d.on(),
		stop: func() error { return rt.stageErr(ctx) }}
	params := make([]value, len(opt.Entry.Params))
	for i, p := range opt.Entry.Params {
		params[i] = l.newValue(p.Name, p.Shape, rangeParam)
	}
	main, root, err := l.lowerComputation(opt.Entry, params)
	if err != nil {
		return nil, err
	}
	root = l.ownOutputs(main, opt.Entry.Root.Name, root)
	tl := l.buildTimeline(main, root)
	l.shareInPlace(tl)
	l.place(tl)
	l.dropSelfCopies(main)
	return &lowered{l: l, optimized: opt, params: params, main: main, root: root, stats: memoryStats(l)}, nil
}

// optimize runs the pass pipeline on a copy of m (m stays as it was: under a
// budget it is optimised again), dumping the module after every pass that changed it.
func (rt *Runtime) optimize(m *hlo.Module, cfg compileConfig, aim int64, d *dumper) (*hlo.Module, error) {
	opt := m.Clone()
	pc := passes.Config{Disabled: cfg.disabled, MaxFusionParams: maxFusionParams(rt.dev.Caps()), MemoryBudget: aim}
	if d.on() {
		pc.AfterPass = func(i int, name string, m *hlo.Module) {
			d.write(fmt.Sprintf("01-%02d-%s.hlo", i, name), func() string { return hlo.Print(m) })
		}
	}
	if err := passes.Run(opt, pc); err != nil {
		return nil, err
	}
	return opt, nil
}

// maxFusionParams leaves room among the device's storage-buffer bindings for a
// kernel's outputs and scratch buffers, and keeps fused kernels to a size whose
// compile time stays small.
func maxFusionParams(c device.Caps) int {
	return min(c.MaxStorageBuffersPerStage-4, 64)
}

// ownOutputs makes sure no output leaf is a parameter or constant range (an entry
// that returns its parameter, say), so outputs never alias inputs the caller
// writes on the next Run; such leaves are copied into output ranges.
func (l *lowering) ownOutputs(b *block, name string, root value) value {
	out := value{shape: root.shape}
	for _, r := range root.leaves {
		if l.kinds[r] == rangeParam || l.kinds[r] == rangeConstant {
			dst := l.newRange(name+".out", l.plan.Ranges[r].Size, rangeOutput)
			b.steps = append(b.steps, step{kind: stepCopy, name: name, src: r, dst: dst})
			r = dst
		}
		l.kinds[r] = rangeOutput
		out.leaves = append(out.leaves, r)
	}
	return out
}

// build places the plan, uploads constants, creates kernels and records segments,
// stopping before the recording when the compile is cancelled or the runtime closes.
func (c *compiled) build(ctx context.Context, l *lowering, timed bool) error {
	a, err := arena.NewPlanned(c.rt.dev, &l.plan, arena.Options{})
	if err != nil {
		return err
	}
	c.arena = a
	for _, cu := range l.constants {
		if err := a.Upload(ctx, a.PlanRange(cu.rng), cu.lit.Bytes()); err != nil {
			return fmt.Errorf("constant upload: %w", err)
		}
	}
	c.rec = &recorder{dev: c.rt.dev, arena: a, timed: timed}
	if err := c.rec.createKernels(l.kernels); err != nil {
		return err
	}
	if err := c.rt.stageErr(ctx); err != nil {
		return err
	}
	return c.rec.recordBlock(c.main, false)
}
