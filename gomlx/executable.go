package gomlx

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// Executable is a compiled GoMLX computation: a vkxla executable per donation
// pattern GoMLX asks for (donated parameters run in place, vkxla.WithDonation;
// the others are read in place, vkxla.WithBorrowedInputs), each compiled at its
// first Execute through the runtime's compile cache.
type Executable struct {
	backend *Backend
	module  *hlo.Module
	names   []string
	inputs  []shapes.Shape
	outputs []shapes.Shape
	mu      sync.Mutex
	byMask  map[string]*vkxla.Executable
	closed  bool
}

var _ backends.Executable = (*Executable)(nil)

func newExecutable(b *Builder, m *hlo.Module, outs []*Node) (*Executable, error) {
	e := &Executable{backend: b.backend, module: m, names: slices.Clone(b.names), byMask: map[string]*vkxla.Executable{}}
	for _, p := range b.params {
		e.inputs = append(e.inputs, p.shape)
	}
	for _, o := range outs {
		e.outputs = append(e.outputs, o.shape)
	}
	// The module is verified (hlo.Builder.Build); vkxla compiles it at the first
	// Execute of each donation pattern: GoMLX donates the inputs it made itself,
	// so compiling the undonated variant here would often compile for nothing.
	b.backend.mu.Lock()
	b.backend.compiled = e
	b.backend.mu.Unlock()
	return e, nil
}

// Module is the HLO module the computation built.
func (e *Executable) Module() *hlo.Module { return e.module }

// VKXLA is the vkxla executable that runs the computation with no donated inputs
// (its MemoryStats, LiveAtPeak, Profile).
func (e *Executable) VKXLA() (*vkxla.Executable, error) {
	return e.executable(make([]bool, len(e.inputs)))
}

// executable returns the vkxla executable for a donation mask, compiling it once.
func (e *Executable) executable(donate []bool) (*vkxla.Executable, error) {
	var donated, borrowed []int
	var key strings.Builder
	for i := range e.inputs {
		if i < len(donate) && donate[i] {
			donated = append(donated, i)
			key.WriteString(strconv.Itoa(i) + ",")
		} else {
			borrowed = append(borrowed, i)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("vkxla backend: executable %s: finalized: %w", e.module.Name, vkxla.ErrClosed)
	}
	if x, ok := e.byMask[key.String()]; ok {
		return x, nil
	}
	opts := []vkxla.CompileOption{vkxla.WithDonation(donated...), vkxla.WithBorrowedInputs(borrowed...)}
	if without := e.backend.config.Without; len(without) > 0 {
		opts = append(opts, vkxla.WithoutPasses(without...))
	}
	if budget := e.backend.config.Budget; budget > 0 {
		opts = append(opts, vkxla.WithMemoryBudget(budget))
	}
	x, err := e.backend.rt.Compile(context.Background(), e.module, opts...)
	if err != nil {
		return nil, fmt.Errorf("vkxla backend: %w", err)
	}
	e.byMask[key.String()] = x
	return x, nil
}

// Finalize releases the vkxla executables (cached ones stay in the runtime's
// cache until evicted).
func (e *Executable) Finalize() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	for _, x := range e.byMask {
		// Finalize returns nothing: a cached executable's Close drops a reference,
		// and after the runtime's Close it is ErrClosed.
		_ = x.Close()
	}
}

// Inputs returns the parameters' names and shapes.
func (e *Executable) Inputs() ([]string, []shapes.Shape) {
	return slices.Clone(e.names), slices.Clone(e.inputs)
}

// Outputs returns the outputs' shapes.
func (e *Executable) Outputs() []shapes.Shape { return slices.Clone(e.outputs) }

// Execute runs the computation on device buffers; donated buffers are dead
// afterwards (their memory may hold an output).
func (e *Executable) Execute(inputs []backends.Buffer, donate []bool, dev backends.DeviceNum) ([]backends.Buffer, error) {
	if err := e.backend.checkDevice(dev); err != nil {
		return nil, err
	}
	if len(inputs) != len(e.inputs) {
		return nil, fmt.Errorf("vkxla backend: Execute %s: %d inputs, want %d", e.module.Name, len(inputs), len(e.inputs))
	}
	if donate != nil && len(donate) != len(inputs) {
		return nil, fmt.Errorf("vkxla backend: Execute %s: %d donate flags for %d inputs", e.module.Name, len(donate), len(inputs))
	}
	bufs, args, err := e.arguments(inputs)
	if err != nil {
		return nil, err
	}
	x, err := e.executable(donate)
	if err != nil {
		return nil, err
	}
	outs, err := x.RunOnDevice(context.Background(), args...)
	if err != nil {
		// A donated tensor the failed run took is ErrClosed from here on, which
		// is the error its next use reports.
		return nil, fmt.Errorf("vkxla backend: Execute %s: %w", e.module.Name, err)
	}
	for i, b := range bufs {
		if donate != nil && donate[i] {
			b.kill()
		}
	}
	e.backend.ran(x)
	result := make([]backends.Buffer, len(outs))
	for i, t := range outs {
		result[i] = &Buffer{tensor: t, shape: e.outputs[i]}
	}
	return result, nil
}

// arguments checks the inputs' shapes and returns their live tensors.
func (e *Executable) arguments(inputs []backends.Buffer) ([]*Buffer, []any, error) {
	bufs := make([]*Buffer, len(inputs))
	args := make([]any, len(inputs))
	for i, in := range inputs {
		b, err := e.backend.buffer(in)
		if err != nil {
			return nil, nil, fmt.Errorf("vkxla backend: Execute %s: input %d: %w", e.module.Name, i, err)
		}
		if !b.shape.Equal(e.inputs[i]) {
			return nil, nil, fmt.Errorf("vkxla backend: Execute %s: input %d (%s) is %s, want %s", e.module.Name, i, e.names[i], b.shape, e.inputs[i])
		}
		t, err := b.live()
		if err != nil {
			return nil, nil, fmt.Errorf("vkxla backend: Execute %s: input %d (%s): %w", e.module.Name, i, e.names[i], err)
		}
		bufs[i], args[i] = b, t
	}
	return bufs, args, nil
}
