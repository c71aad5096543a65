package peer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/vkxla/vkxla/bench"
	"github.com/vkxla/vkxla/hlo"
)

// Runner runs a module translated for a GoMLX backend as a bench.Runner, so that
// bench.Measure interleaves it with vkxla's runs. One Run does what
// vkxla's Executable.Run does: copy the host inputs into backend buffers,
// execute, copy the outputs back to host literals (Outputs).
type Runner struct {
	name    string
	backend backends.Backend
	exec    backends.Executable
	inputs  []*hlo.Literal
	shapes  []hlo.Shape // of the output leaves
	// Outputs are the last run's outputs.
	Outputs []*hlo.Literal
}

// NewRunner translates m for backend (Translate) and runs it once on inputs.
func NewRunner(name string, backend backends.Backend, m *hlo.Module, inputs []*hlo.Literal) (*Runner, error) {
	exec, err := Translate(backend, m)
	if err != nil {
		return nil, err
	}
	r := &Runner{name: name, backend: backend, exec: exec, inputs: inputs, shapes: leafShapes(m.Entry.Root.Shape)}
	if _, err := r.Run(context.Background()); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", name, err), r.Close())
	}
	return r, nil
}

func leafShapes(s hlo.Shape) []hlo.Shape {
	if !s.IsTuple() {
		return []hlo.Shape{s}
	}
	var out []hlo.Shape
	for _, e := range s.Elems {
		out = append(out, leafShapes(e)...)
	}
	return out
}

// Name is the runner's name.
func (r *Runner) Name() string { return r.name }

// PeakBytes is 0: the backend does not report its memory.
func (r *Runner) PeakBytes() int64 { return 0 }

// Close frees the executable.
func (r *Runner) Close() error {
	r.exec.Finalize()
	return nil
}

// Run executes once; the sample's wall time covers the input and output copies.
func (r *Runner) Run(ctx context.Context) (bench.Sample, error) {
	if err := ctx.Err(); err != nil {
		return bench.Sample{}, err
	}
	start := time.Now()
	outs, err := r.execute()
	if err != nil {
		return bench.Sample{}, err
	}
	r.Outputs = outs
	return bench.Sample{Wall: time.Since(start)}, nil
}

func (r *Runner) execute() (outs []*hlo.Literal, err error) {
	bufs := make([]backends.Buffer, len(r.inputs))
	defer func() {
		for _, b := range bufs {
			if b != nil {
				err = errors.Join(err, r.backend.BufferFinalize(b))
			}
		}
	}()
	for i, lit := range r.inputs {
		if bufs[i], err = ToBuffer(r.backend, lit); err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
	}
	res, err := r.exec.Execute(bufs, nil, 0)
	if err != nil {
		return nil, err
	}
	if len(res) != len(r.shapes) {
		return nil, fmt.Errorf("%d outputs, the module has %d", len(res), len(r.shapes))
	}
	for i, b := range res {
		lit, err := ToLiteral(r.backend, b, r.shapes[i])
		err = errors.Join(err, r.backend.BufferFinalize(b))
		if err != nil {
			return nil, fmt.Errorf("output %d: %w", i, err)
		}
		outs = append(outs, lit)
	}
	return outs, nil
}

// WallOnly is a runner whose samples keep only their wall time: a vkxla
// executable's Run compared with the peer's by the same clock.
type WallOnly struct{ bench.Runner }

// Run runs once and drops the GPU time.
func (w WallOnly) Run(ctx context.Context) (bench.Sample, error) {
	s, err := w.Runner.Run(ctx)
	s.GPU = 0
	return s, err
}

// BackendConfig is the simplego configuration the peer runs with: ops one after
// another (each op still spreads over the cores). simplego v0.26.0's default
// runs independent ops in parallel tasks of the same workers pool that a large
// dot then waits on for workers, and with 2 cores that deadlocked (the BERT
// backward module hung in sync.Cond.Wait in workersPool.WaitToStart, called from
// execDotGeneralSmall inside executeParallel).
const BackendConfig = "ops_sequential"

// NewBackend is GoMLX's simplego backend configured as BackendConfig.
func NewBackend() (backends.Backend, error) { return simplego.New(BackendConfig) }
