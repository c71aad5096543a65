package vkxla

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
	"github.com/vkxla/vkxla/spirv/codegen"
	"github.com/vkxla/vkxla/targets"
)

// CompileOption configures Compile.
type CompileOption func(*compileConfig)

type compileConfig struct {
	noCache  bool
	profile  bool
	disabled []string // passes to skip
	budget   int64    // device memory budget in bytes; 0: none
	// donate and borrow are parameters in the caller's memory (donate.go).
	donate, borrow []int
	// splitBindings: tensors larger than one binding are split across bindings
	// even where the device has buffer device addresses.
	splitBindings bool
	// devices is how many devices run the program together (WithDevices,
	// CompileReplicated); 0: one. replicated: CompileReplicated compiles.
	devices    int
	replicated bool
	// partitions lays CompileReplicated's devices out (WithPartitions).
	partitions int
}

// key is the part of the options that changes the compiled result.
func (c compileConfig) key() string {
	return fmt.Sprintf("profile=%v disabled=%q budget=%d donate=%v borrow=%v split=%v devices=%d",
		c.profile, c.disabled, c.budget, c.donate, c.borrow, c.splitBindings, c.devices)
}

// WithSplitBindings makes kernels reach tensors larger than one storage-buffer
// binding (maxStorageBufferRange) through several bindings, each covering a piece,
// even on a device with buffer device addresses, where they would otherwise read
// the tensor through its address. It is the path taken on devices without
// bufferDeviceAddress; the option lets tests run it everywhere (docs/limits.md).
func WithSplitBindings() CompileOption { return func(c *compileConfig) { c.splitBindings = true } }

// target is the planner's target for device d under these options.
func (c compileConfig) target(d targets.Device) plan.Target {
	if c.splitBindings {
		d.BufferDeviceAddress = false
	}
	return d.Plan()
}

// WithDevices plans the program for a run on n devices together (replicas ×
// partitions): its collectives stay in it, as host steps between the kernels
// (docs/replicas.md). PlanFor then states what each device's executable would
// hold; CompileReplicated sets it to its runtimes' count itself; Compile refuses
// n > 1, since one device cannot run such a program alone.
func WithDevices(n int) CompileOption { return func(c *compileConfig) { c.devices = n } }

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
	if err := checkGPUTypes(m); err != nil {
		return nil, fmt.Errorf("vkxla: Compile %s: %w", m.Name, err)
	}
	if cfg.budget < 0 {
		return nil, fmt.Errorf("vkxla: Compile %s: %w: memory budget %d bytes is negative", m.Name, ErrInvalidArgument, cfg.budget)
	}
	if err := cfg.checkParamOptions(m); err != nil {
		return nil, fmt.Errorf("vkxla: Compile %s: %w", m.Name, err)
	}
	if err := cfg.checkDevices(); err != nil {
		return nil, fmt.Errorf("vkxla: Compile %s: %w", m.Name, err)
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

// checkDevices: Compile makes a program for several devices only for
// CompileReplicated.
func (c compileConfig) checkDevices() error {
	if c.devices < 0 || c.devices > 1 && !c.replicated {
		return fmt.Errorf("%w: WithDevices(%d): compile a program for several devices with CompileReplicated", ErrInvalidArgument, c.devices)
	}
	return nil
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
	stop := func() error { return rt.stageErr(ctx) }
	p, err := planModule(m, cfg.target(deviceTarget(rt.dev.Caps())), cfg, rt.newDumper(m.Name), rt.validateSPIRV, stop)
	if err != nil {
		return nil, err
	}
	if err := rt.checkPlanFits(p); err != nil {
		return nil, err
	}
	if err := rt.stageErr(ctx); err != nil {
		return nil, err
	}
	c := &compiled{rt: rt, module: m, optimized: p.Module, params: p.Params, root: p.Root, main: p.Main, stats: p.Stats,
		livePeak: p.LiveAtPeak, refs: 1, devices: max(cfg.devices, 1)}
	c.slotsOf(p)
	if err := c.splitRngRoot(); err != nil {
		return nil, err
	}
	if err := c.build(ctx, p, cfg.profile); err != nil {
		return nil, errors.Join(err, c.release())
	}
	// Close waits for this compile, so the runtime is still open unless Close began
	// meanwhile; then the executable goes at once.
	if err := rt.track(c); err != nil {
		return nil, errors.Join(err, c.release())
	}
	return c, nil
}

// planModule is Compile's device-free half: the passes and the plan for t, each
// kernel's SPIR-V validated when asked, every stage dumped when d is on. stop is
// asked between stages.
func planModule(m *hlo.Module, t plan.Target, cfg compileConfig, d *dumper, validate bool, stop func() error) (*plan.Plan, error) {
	d.write("00-input.hlo", func() string { return hlo.Print(m) })
	p, err := plan.Build(m, t, planOptions(cfg, d, stop))
	if err != nil {
		return nil, err
	}
	d.write("05-kernels.hlo", p.Lowered)
	d.writeKernels(p.Kernels())
	if validate {
		if err := validateKernels(p.Kernels()); err != nil {
			return nil, err
		}
	}
	d.write("10-plan.txt", p.String)
	d.write("11-memory.svg", func() string { return string(p.SVG()) })
	return p, d.err()
}

// PlanFor plans m for a device described as data (package targets: a built-in
// profile, or what `vulkaninfo --json` prints for a device), without a device:
// what Compile with these options would allocate and run on it — the module after
// the passes, the kernels (each validated by SPIRV-Tools), every buffer's offset,
// size and lifetime, MemoryStats — ahead of time, as XLA's memory_analysis(). With
// dumpDir set it writes what VKXLA_DUMP writes, under dumpDir/<module>.
// WithProfiling and WithoutCache change nothing here.
func PlanFor(ctx context.Context, m *hlo.Module, t targets.Device, dumpDir string, opts ...CompileOption) (*plan.Plan, error) {
	if ctx == nil {
		return nil, fmt.Errorf("vkxla: PlanFor: %w: nil context", ErrInvalidArgument)
	}
	if m == nil {
		return nil, fmt.Errorf("vkxla: PlanFor: %w: nil module", ErrInvalidArgument)
	}
	var cfg compileConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := hlo.Verify(m); err != nil {
		return nil, fmt.Errorf("vkxla: PlanFor %s: %w", m.Name, err)
	}
	if err := checkGPUTypes(m); err != nil {
		return nil, fmt.Errorf("vkxla: PlanFor %s: %w", m.Name, err)
	}
	if cfg.budget < 0 {
		return nil, fmt.Errorf("vkxla: PlanFor %s: %w: memory budget %d bytes is negative", m.Name, ErrInvalidArgument, cfg.budget)
	}
	if err := cfg.checkParamOptions(m); err != nil {
		return nil, fmt.Errorf("vkxla: PlanFor %s: %w", m.Name, err)
	}
	if cfg.devices < 0 {
		return nil, fmt.Errorf("vkxla: PlanFor %s: %w: WithDevices(%d)", m.Name, ErrInvalidArgument, cfg.devices)
	}
	var d *dumper
	if dumpDir != "" {
		if err := checkDumpDir(dumpDir); err != nil {
			return nil, fmt.Errorf("vkxla: PlanFor %s: %w", m.Name, err)
		}
		d = &dumper{dir: filepath.Join(dumpDir, dumpName(m.Name))}
	}
	p, err := planModule(m.Clone(), cfg.target(t), cfg, d, true, ctx.Err)
	if err != nil {
		return nil, fmt.Errorf("vkxla: PlanFor %s: %w", m.Name, err)
	}
	return p, nil
}

// planOptions are cfg's planning options; the planner stops between stages when
// stop says so (ctx ended, the runtime closing), and dumps the module after every
// pass that changed it.
func planOptions(cfg compileConfig, d *dumper, stop func() error) plan.Options {
	o := plan.Options{Disabled: cfg.disabled, MemoryBudget: cfg.budget, KeepLowered: d.on(), Stop: stop, Donate: cfg.donate, Borrow: cfg.borrow,
		Devices: cfg.devices}
	if d.on() {
		o.AfterPass = func(i int, name string, m *hlo.Module) {
			d.write(fmt.Sprintf("01-%02d-%s.hlo", i, name), func() string { return hlo.Print(m) })
		}
	}
	return o
}

// build places the plan, uploads constants, creates kernels and records segments,
// stopping before the recording when the compile is cancelled or the runtime closes.
func (c *compiled) build(ctx context.Context, p *plan.Plan, timed bool) error {
	a, err := arena.NewPlanned(c.rt.dev, p.Arena(), arena.Options{})
	if err != nil {
		return err
	}
	c.arena = a
	if len(p.HostBlockSizes()) > 0 {
		if c.host, err = arena.NewPlanned(c.rt.dev, p.HostArena(), arena.Options{Host: true}); err != nil {
			return fmt.Errorf("host memory for offloaded values: %w", err)
		}
	}
	for _, cu := range p.Constants() {
		if err := a.Upload(ctx, a.PlanRange(cu.Range), cu.Literal.Bytes()); err != nil {
			return fmt.Errorf("constant upload: %w", err)
		}
	}
	c.rec = &recorder{dev: c.rt.dev, arena: a, host: c.host, onHost: p.OnHost, timed: timed, tableBytes: &c.rt.tableBytes, segments: map[*plan.Block][]segment{}}
	if err := c.rec.createKernels(p.Kernels()); err != nil {
		return err
	}
	if err := c.rt.stageErr(ctx); err != nil {
		return err
	}
	if len(c.slots) > 0 {
		return nil // recorded per binding of the slots, at the first Run (donate.go)
	}
	return c.rec.recordBlock(c.main, false)
}

// checkGPUTypes refuses, before any pass runs, a low-precision element type that
// code generation does not lower at all (none at present: a type added to hlo before
// codegen knows it); the IR, the text form and cpuref handle them all, and a pass
// meeting one could misjudge it. The uses codegen does not lower of the types it
// knows (a reduce of f8 values, …) fail later, also with ErrUnsupported.
func checkGPUTypes(m *hlo.Module) error {
	refused := func(dt hlo.DType) bool { return dt.IsLowPrecision() && !codegen.LowersLowPrecision(dt) }
	if in, dt := hlo.FirstDTypeUse(m, refused); in != nil {
		return fmt.Errorf("%w: %s (%v) has %v elements; GPU code generation does not handle the "+
			"low-precision types yet (cpuref evaluates them)", ErrUnsupported, in.Name, in.Op, dt)
	}
	return nil
}
