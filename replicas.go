package vkxla

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/collective"
	"github.com/vkxla/vkxla/plan"
)

// Replicated is one SPMD program compiled for several devices, one executable per
// device, each with its own arena, kernels and command buffers. Run runs them
// together: each device runs its recorded segments and, at a collective, waits for
// its work so far, reads the operands back, meets its group on the host, computes
// the result there (with cpuref's numerics) and writes it back before going on
// (docs/replicas.md).
type Replicated struct {
	exes []*Executable
	topo collective.Topology
	mu   sync.Mutex // one Run at a time: the devices' executables take part together
}

// WithPartitions makes CompileReplicated's devices replicas × partitions of them
// (device d is replica d/partitions, partition d%partitions, XLA's global id);
// the default is one partition. Other compiles ignore it.
func WithPartitions(n int) CompileOption { return func(c *compileConfig) { c.partitions = n } }

// CompileReplicated compiles m for a run on every runtime's device together:
// runtime d's device is device d. The runtimes must be distinct and on distinct
// devices (several runtimes may open the same physical device: each is its own
// logical device). Each executable is compiled as Compile does, except that it is
// never cached (it belongs to this Replicated alone), and states its own device
// memory: MemoryStats(d).
func CompileReplicated(ctx context.Context, m *hlo.Module, runtimes []*Runtime, opts ...CompileOption) (*Replicated, error) {
	var cfg compileConfig
	for _, o := range opts {
		o(&cfg)
	}
	topo, err := replicaTopology(runtimes, cfg.partitions)
	if err != nil {
		return nil, fmt.Errorf("vkxla: CompileReplicated: %w", err)
	}
	r := &Replicated{topo: topo}
	// Each device's executable is its own, never the cache's: two Replicated
	// sharing one would each hold a device's lock that the other waits for,
	// where no rendezvous can see it.
	opts = append(opts[:len(opts):len(opts)], func(c *compileConfig) {
		c.devices, c.noCache, c.replicated = topo.Devices(), true, true
	})
	for d, rt := range runtimes {
		exe, err := rt.Compile(ctx, m, opts...)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("vkxla: CompileReplicated: device %d: %w", d, err), r.Close())
		}
		r.exes = append(r.exes, exe)
	}
	if err := r.checkSameCollectives(); err != nil {
		return nil, errors.Join(fmt.Errorf("vkxla: CompileReplicated %s: %w", m.Name, err), r.Close())
	}
	return r, nil
}

// checkSameCollectives makes sure the devices will meet: every device's plan has
// the same collectives in the same order (devices with different facts could fuse
// or schedule differently), and no two collectives share the name their meetings
// are keyed by.
func (r *Replicated) checkSameCollectives() error {
	var first []string
	for d, exe := range r.exes {
		seq, err := collectiveSequence(exe.c.main, map[string]*hlo.Instruction{}, nil)
		if err != nil {
			return fmt.Errorf("device %d: %w", d, err)
		}
		if d == 0 {
			first = seq
		} else if !slices.Equal(seq, first) {
			return fmt.Errorf("%w: device %d's plan has collectives %v, device 0's %v (devices whose facts differ planned differently)",
				ErrUnsupported, d, seq, first)
		}
	}
	return nil
}

// collectiveSequence appends b's collective steps, depth first, to seq; names maps
// each name seen to its instruction.
func collectiveSequence(b *plan.Block, names map[string]*hlo.Instruction, seq []string) ([]string, error) {
	for i := range b.Steps {
		st := &b.Steps[i]
		if st.Kind == plan.StepCollective {
			if prev, ok := names[st.Instr.Name]; ok && prev != st.Instr {
				return nil, fmt.Errorf("%w: two collectives are named %s", ErrUnsupported, st.Instr.Name)
			}
			names[st.Instr.Name] = st.Instr
			seq = append(seq, fmt.Sprintf("%v %s %v", st.Instr.Op, st.Instr.Name, st.Instr.Shape))
		}
		for _, sub := range append([]*plan.Block{st.Cond, st.Body}, st.Branches...) {
			if sub == nil {
				continue
			}
			var err error
			if seq, err = collectiveSequence(sub, names, seq); err != nil {
				return nil, err
			}
		}
	}
	return seq, nil
}

// replicaTopology checks the runtimes and lays them out in partitions.
func replicaTopology(runtimes []*Runtime, partitions int) (collective.Topology, error) {
	n := len(runtimes)
	if partitions == 0 {
		partitions = 1
	}
	if n == 0 || partitions < 1 || n%partitions != 0 {
		return collective.Topology{}, fmt.Errorf("%w: %d runtimes do not make replicas of %d partitions", ErrInvalidArgument, n, partitions)
	}
	seen := map[any]int{}
	for d, rt := range runtimes {
		if rt == nil || rt.dev == nil {
			return collective.Topology{}, fmt.Errorf("%w: runtime %d is nil", ErrInvalidArgument, d)
		}
		for _, key := range []any{rt, rt.dev} {
			if prev, ok := seen[key]; ok {
				// One executable per device: two devices sharing one would wait for
				// each other at its lock, where no rendezvous can see them.
				return collective.Topology{}, fmt.Errorf("%w: runtimes %d and %d are the same runtime or device", ErrInvalidArgument, prev, d)
			}
			seen[key] = d
		}
	}
	return collective.Topology{Replicas: n / partitions, Partitions: partitions}, nil
}

// Devices is the number of devices; Replicas and Partitions their layout.
func (r *Replicated) Devices() int    { return r.topo.Devices() }
func (r *Replicated) Replicas() int   { return r.topo.Replicas }
func (r *Replicated) Partitions() int { return r.topo.Partitions }

// Executable is device d's executable (its plan, optimized module, profile), nil
// for a d out of range or after Close. It runs only through Run; closing it is
// Close's job.
func (r *Replicated) Executable(d int) *Executable {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d < 0 || d >= len(r.exes) {
		return nil
	}
	return r.exes[d]
}

// MemoryStats is device d's memory, known at compile time: every device runs the
// same plan, so each holds as much. A d out of range (or a closed Replicated)
// has none.
func (r *Replicated) MemoryStats(d int) MemoryStats {
	if exe := r.Executable(d); exe != nil {
		return exe.MemoryStats()
	}
	return MemoryStats{}
}

// Run runs the program on every device at once: inputs[d] are device d's inputs,
// and it returns each device's outputs (one literal per array leaf of the root).
// A device that fails stops the others at their next collective; the error names
// the first device that failed for a reason of its own, or wraps ErrMismatch when
// the devices' programs could not meet.
func (r *Replicated) Run(ctx context.Context, inputs [][]*hlo.Literal) ([][]*hlo.Literal, error) {
	if r == nil {
		return nil, fmt.Errorf("vkxla: Replicated.Run: %w: nil Replicated", ErrInvalidArgument)
	}
	if ctx == nil {
		return nil, fmt.Errorf("vkxla: Replicated.Run: %w: nil context", ErrInvalidArgument)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.exes) == 0 {
		return nil, fmt.Errorf("vkxla: Replicated.Run: the Replicated is closed (%w)", ErrClosed)
	}
	if len(inputs) != len(r.exes) {
		return nil, fmt.Errorf("vkxla: Replicated.Run: %w: %d input lists for %d devices", ErrInvalidArgument, len(inputs), len(r.exes))
	}
	meet := collective.NewRendezvous(r.topo)
	outs, errs := make([][]*hlo.Literal, len(r.exes)), make([]error, len(r.exes))
	var wg sync.WaitGroup
	for d, exe := range r.exes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			member := meet.Member(d)
			defer member.Finish()
			dev := &collective.Device{Topology: r.topo, ID: d, Member: member, Reduce: hostReducer, Site: siteOf}
			outs[d], errs[d] = exe.runDevice(ctx, dev, inputs[d])
		}()
	}
	wg.Wait()
	if err := firstDeviceError(r.topo, errs); err != nil {
		return nil, err
	}
	return outs, nil
}

// runDevice runs the executable as one device of a Replicated run.
func (e *Executable) runDevice(ctx context.Context, dev *collective.Device, inputs []*hlo.Literal) ([]*hlo.Literal, error) {
	args := make([]any, len(inputs))
	for i, in := range inputs {
		args[i] = in
	}
	var outs []*hlo.Literal
	err := e.runOn(ctx, dev, args, func(c *compiled, _ *binding) error {
		var err error
		outs, err = c.downloadOutputs(ctx)
		return err
	})
	return outs, err
}

// hostReducer applies a collective's to_apply on the host, as cpuref defines it.
func hostReducer(c *hlo.Computation) (collective.BinaryFunc, error) { return cpuref.Reducer(c) }

// siteOf keys a collective's meetings by its name: each device's executable has
// its own copy of the module, the same after the same passes, and names are
// unique in a module.
func siteOf(in *hlo.Instruction) any { return in.Name }

// firstDeviceError reports a device's own failure before the mismatch errors it
// caused in the others.
func firstDeviceError(topo collective.Topology, errs []error) error {
	pick := -1
	for d, err := range errs {
		if err != nil && (pick < 0 || errors.Is(errs[pick], ErrMismatch) && !errors.Is(err, ErrMismatch)) {
			pick = d
		}
	}
	if pick < 0 {
		return nil
	}
	err := errs[pick]
	if errors.Is(err, collective.ErrInvalidGroups) {
		err = fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	return fmt.Errorf("vkxla: Replicated.Run: %s: %w", topo.Name(pick), err)
}

// Close closes every device's executable.
func (r *Replicated) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, exe := range r.exes {
		errs = append(errs, exe.Close())
	}
	r.exes = nil
	return errors.Join(errs...)
}

// execCollective is a host step: the segments before it have run (Submit waits
// for them), so its operands are in memory; it reads them, meets the other
// devices, and writes its result where this run placed it (the arena, a bound
// slot, or host memory: the recorder's placedRange).
func (c *compiled) execCollective(ctx context.Context, st *plan.Step) error {
	if c.dev == nil {
		return fmt.Errorf("%s: a collective outside a Replicated run", st.Name)
	}
	in := st.Instr
	ops := make([]*hlo.Literal, len(st.Args))
	for k, r := range st.Args {
		ops[k] = hlo.NewLiteral(in.Operands[k].Shape)
		if len(ops[k].Bytes()) == 0 {
			continue
		}
		a, rng := c.cur.placedRange(r)
		if err := a.Download(ctx, rng, ops[k].Bytes()); err != nil {
			return fmt.Errorf("%s: operand %d: %w", st.Name, k, err)
		}
	}
	out, err := c.dev.Eval(ctx, in, ops)
	if err != nil {
		return err
	}
	for i, leaf := range out.Leaves() {
		if len(leaf.Bytes()) == 0 {
			continue
		}
		a, rng := c.cur.placedRange(st.Outs[i])
		if err := a.Upload(ctx, rng, leaf.Bytes()); err != nil {
			return fmt.Errorf("%s: result %d: %w", st.Name, i, err)
		}
	}
	return nil
}
