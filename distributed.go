package vkxla

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/collective"
)

// ProcessGroup is the processes of a run across processes (and machines): every
// process calls AllGather the same number of times, in the same order, and each
// call returns every process's bytes, by rank. mpi.World (package
// github.com/vkxla/vkxla/mpi: MPI_COMM_WORLD under mpirun) is one.
type ProcessGroup interface {
	Rank() int
	Size() int
	AllGather(ctx context.Context, b []byte) ([][]byte, error)
}

// Distributed is this process's device of an SPMD program run by a group of
// processes, one device each: the process of rank d runs device d of
// pg.Size() devices (replicas × partitions, WithPartitions). Its collectives are
// host steps as in Replicated, the devices' values exchanged through the
// ProcessGroup; what each device computes from them is the same code, so a run
// gives the bits a Replicated run on as many devices gives (docs/replicas.md).
type Distributed struct {
	exe  *Executable
	pg   ProcessGroup
	topo collective.Topology
	mu   sync.Mutex // one Run at a time
}

// CompileDistributed compiles m for this process's device of a run by every
// process of pg; every process must call it (it exchanges the plans' collective
// sequences, so that processes whose modules or options differ fail here, with
// an error wrapping ErrMismatch on every process, rather than at a collective
// later). The executable is compiled as Compile does, never cached.
func CompileDistributed(ctx context.Context, m *hlo.Module, rt *Runtime, pg ProcessGroup, opts ...CompileOption) (*Distributed, error) {
	if pg == nil {
		return nil, fmt.Errorf("vkxla: CompileDistributed: %w: nil process group", ErrInvalidArgument)
	}
	var cfg compileConfig
	for _, o := range opts {
		o(&cfg)
	}
	topo, err := processTopology(pg, cfg.partitions)
	if err != nil {
		return nil, fmt.Errorf("vkxla: CompileDistributed: %w", err)
	}
	opts = append(opts[:len(opts):len(opts)], func(c *compileConfig) {
		c.devices, c.noCache, c.replicated = topo.Devices(), true, true
	})
	var exe *Executable
	if rt == nil {
		err = fmt.Errorf("%w: nil runtime", ErrInvalidArgument)
	} else {
		exe, err = rt.Compile(ctx, m, opts...)
	}
	var seq []string
	if err == nil {
		seq, err = collectiveSequence(exe.c.main, map[string]*hlo.Instruction{}, nil)
	}
	// Every process takes part in the comparison, also one that failed to
	// compile, so that none waits for it.
	if cerr := compareSequences(ctx, pg, topo, seq, err); cerr != nil || err != nil {
		if exe != nil {
			err = errors.Join(err, exe.Close())
		}
		return nil, fmt.Errorf("vkxla: CompileDistributed %s: %s: %w", m.Name, topo.Name(pg.Rank()), errors.Join(err, cerr))
	}
	return &Distributed{exe: exe, pg: pg, topo: topo}, nil
}

// processTopology lays the processes out in partitions.
func processTopology(pg ProcessGroup, partitions int) (collective.Topology, error) {
	n := pg.Size()
	if partitions == 0 {
		partitions = 1
	}
	if n < 1 || partitions < 1 || n%partitions != 0 || pg.Rank() < 0 || pg.Rank() >= n {
		return collective.Topology{}, fmt.Errorf("%w: %d processes (rank %d) do not make replicas of %d partitions", ErrInvalidArgument, n, pg.Rank(), partitions)
	}
	return collective.Topology{Replicas: n / partitions, Partitions: partitions}, nil
}

// compareSequences exchanges every process's collective sequence (or its compile
// error) and compares them with this process's: the processes must meet at the
// same collectives in the same order.
func compareSequences(ctx context.Context, pg ProcessGroup, topo collective.Topology, seq []string, compileErr error) error {
	mine := fmt.Sprintf("ok %d×%d\n%s", topo.Replicas, topo.Partitions, strings.Join(seq, "\n"))
	if compileErr != nil {
		mine = "failed\n" + compileErr.Error()
	}
	all, err := pg.AllGather(context.WithoutCancel(ctx), []byte(mine))
	if err != nil {
		return fmt.Errorf("exchanging the plans' collectives: %w", err)
	}
	var errs []error
	for d, b := range all {
		theirs := string(b)
		switch {
		case d == pg.Rank() || compileErr != nil:
		case strings.HasPrefix(theirs, "failed\n"):
			errs = append(errs, fmt.Errorf("%w: %s failed to compile: %s", ErrMismatch, topo.Name(d), strings.TrimPrefix(theirs, "failed\n")))
		case theirs != mine:
			errs = append(errs, fmt.Errorf("%w: %s", ErrMismatch, sequenceDiff(topo.Name(d), theirs, mine)))
		}
	}
	return errors.Join(errs...)
}

// sequenceDiff says where another device's sequence first differs from this one's.
func sequenceDiff(who, theirs, mine string) string {
	t, m := strings.Split(theirs, "\n"), strings.Split(mine, "\n")
	if t[0] != m[0] {
		return fmt.Sprintf("%s runs on %s devices (replicas×partitions), this process on %s", who,
			strings.TrimPrefix(t[0], "ok "), strings.TrimPrefix(m[0], "ok "))
	}
	t, m = t[1:], m[1:]
	for i := range max(len(t), len(m)) {
		at := func(xs []string) string {
			if i < len(xs) && xs[i] != "" {
				return xs[i]
			}
			return "none"
		}
		if at(t) != at(m) {
			return fmt.Sprintf("the plans' collectives differ (the processes' modules or options differ): collective %d is %s on %s, %s on this process",
				i+1, at(t), who, at(m))
		}
	}
	return "the plans differ"
}

// Device is this process's device id (its rank); Devices the number of devices;
// Replicas and Partitions their layout.
func (r *Distributed) Device() int     { return r.pg.Rank() }
func (r *Distributed) Devices() int    { return r.topo.Devices() }
func (r *Distributed) Replicas() int   { return r.topo.Replicas }
func (r *Distributed) Partitions() int { return r.topo.Partitions }

// Executable is this process's executable, nil after Close; it runs only
// through Run.
func (r *Distributed) Executable() *Executable {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exe
}

// MemoryStats is this device's memory, known at compile time (every device runs
// the same plan).
func (r *Distributed) MemoryStats() MemoryStats {
	if exe := r.Executable(); exe != nil {
		return exe.MemoryStats()
	}
	return MemoryStats{}
}

// Run runs this process's device on its inputs, meeting the other processes at
// every collective, and returns its outputs (one literal per array leaf of the
// root). Every process must call Run (as many times, each with its own inputs).
// A device that fails — or a run whose devices cannot meet — fails every
// process's Run: the error names this device's own failure, or wraps ErrMismatch
// saying where each device was. A context that ends is noticed before a
// collective; one whose exchange has begun waits for it.
func (r *Distributed) Run(ctx context.Context, inputs ...*hlo.Literal) ([]*hlo.Literal, error) {
	if r == nil {
		return nil, fmt.Errorf("vkxla: Distributed.Run: %w: nil Distributed", ErrInvalidArgument)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	member, err := collective.NewWorldMember(r.pg, r.topo)
	if err != nil {
		return nil, fmt.Errorf("vkxla: Distributed.Run: %w: %w", ErrInvalidArgument, err)
	}
	var outs []*hlo.Literal
	switch {
	case ctx == nil:
		err = fmt.Errorf("%w: nil context", ErrInvalidArgument)
		ctx = context.Background() // for the last round, which the others wait for
	case r.exe == nil:
		err = fmt.Errorf("the Distributed is closed (%w)", ErrClosed)
	default:
		dev := &collective.Device{Topology: r.topo, ID: r.pg.Rank(), Member: member, Reduce: hostReducer, Site: siteOf}
		outs, err = r.exe.runDevice(ctx, dev, inputs)
	}
	ferr := member.Finish(ctx, err)
	if err == nil {
		err = ferr
	}
	if err != nil {
		if errors.Is(err, collective.ErrInvalidGroups) {
			err = fmt.Errorf("%w: %w", ErrInvalidArgument, err)
		}
		return nil, fmt.Errorf("vkxla: Distributed.Run: %s: %w", r.topo.Name(r.pg.Rank()), err)
	}
	return outs, nil
}

// Close closes this process's executable (the process group stays the caller's).
func (r *Distributed) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.exe != nil {
		err = r.exe.Close()
	}
	r.exe = nil
	return err
}
