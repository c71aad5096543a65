package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// The generated variants: a module compiled by vkxla and run with Executable.Run
// (what a user gets), and a kernel computation lowered by codegen.Lower and
// dispatched directly (what the generated kernels can do once fusion hands them a
// whole computation; it bypasses the runtime's lowering and memory plan).

// exeRunner runs a compiled executable with host inputs. Its wall time is the whole
// Run: input upload, the recorded dispatches, output download.
type exeRunner struct {
	name   string
	exe    *vkxla.Executable
	inputs []*hlo.Literal
	outs   []*hlo.Literal // of the last run
}

func (r *exeRunner) Name() string     { return r.name }
func (r *exeRunner) PeakBytes() int64 { return r.exe.MemoryStats().PeakBytes }
func (r *exeRunner) Close() error     { return r.exe.Close() }

// LowerBoundBytes is the plan's lower bound on device memory.
func (r *exeRunner) LowerBoundBytes() int64 { return r.exe.MemoryStats().LowerBoundBytes }

func (r *exeRunner) Run(ctx context.Context) (Sample, error) {
	start := time.Now()
	outs, err := r.exe.Run(ctx, r.inputs...)
	if err != nil {
		return Sample{}, err
	}
	s := Sample{Wall: time.Since(start)}
	r.outs = outs
	p, err := r.exe.Profile()
	if err != nil {
		return Sample{}, err
	}
	s.GPU = p.Total()
	for _, k := range p.Kernels {
		s.Dispatches += k.Dispatches
	}
	return s, nil
}

// Executable compiles the module that build returns and runs it with inputs; check
// sees the outputs of the first run.
func Executable(name string, build func() (*hlo.Module, error), inputs func() []*hlo.Literal, check func(in, out []*hlo.Literal) error) Variant {
	return ExecutableWith(name, nil, build, inputs, check)
}

// ExecutableWith is Executable with compile options, which opts may choose on the
// runtime and module (a memory budget relative to the unbudgeted plan, say).
func ExecutableWith(name string, opts func(rt *vkxla.Runtime, m *hlo.Module) ([]vkxla.CompileOption, error),
	build func() (*hlo.Module, error), inputs func() []*hlo.Literal, check func(in, out []*hlo.Literal) error) Variant {
	return Variant{Name: name, New: func(ctx context.Context, rt *vkxla.Runtime) (Runner, error) {
		m, err := build()
		if err != nil {
			return nil, err
		}
		var co []vkxla.CompileOption
		if opts != nil {
			if co, err = opts(rt, m); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		exe, err := rt.Compile(ctx, m, co...)
		if err != nil {
			return nil, err
		}
		r := &exeRunner{name: name, exe: exe, inputs: inputs()}
		if _, err := r.Run(ctx); err != nil {
			return nil, errors.Join(fmt.Errorf("%s: %w", name, err), r.Close())
		}
		p, err := exe.Profile()
		if err != nil {
			return nil, errors.Join(fmt.Errorf("%s: %w", name, err), r.Close())
		}
		r.name = fmt.Sprintf("%s (%s)", name, kernels(p))
		if err := check(r.inputs, r.outs); err != nil {
			return nil, errors.Join(fmt.Errorf("%s: %w", name, err), r.Close())
		}
		r.outs = nil
		return r, nil
	}}
}

// kernels describes a profile's dispatches: "3 kernels".
func kernels(p vkxla.Profile) string {
	n := 0
	for _, k := range p.Kernels {
		n += k.Dispatches
	}
	if n == 1 {
		return "1 kernel"
	}
	return fmt.Sprintf("%d kernels", n)
}

// Program lowers the kernel computation that build returns with codegen.Lower
// and dispatches its program directly on the runtime's device, inputs uploaded
// once; check sees the input and output bytes after the first run.
func Program(name string, build func() (*hlo.Computation, error), inputs func() []*hlo.Literal, check func(in []*hlo.Literal, out [][]byte) error) Variant {
	return program(name, nil, build, inputs, check)
}

// ProgramInPlace is Program with output j bound over input overwrites[j], as buffer
// donation will let the runtime do: the kernel then moves the bytes an in-place
// hand-written kernel moves. It is valid for kernels that read and write each
// element in the same invocation (elementwise ones).
func ProgramInPlace(name string, overwrites map[int]int, build func() (*hlo.Computation, error), inputs func() []*hlo.Literal, check func(in []*hlo.Literal, out [][]byte) error) Variant {
	return program(name, overwrites, build, inputs, check)
}

func program(name string, overwrites map[int]int, build func() (*hlo.Computation, error), inputs func() []*hlo.Literal, check func(in []*hlo.Literal, out [][]byte) error) Variant {
	return Variant{Name: name, New: func(ctx context.Context, rt *vkxla.Runtime) (Runner, error) {
		c, err := build()
		if err != nil {
			return nil, err
		}
		d := rt.Device()
		prog, err := codegen.Lower(c, vkxla.TargetFromCaps(d.Caps()))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r := newKernelRunner(d, fmt.Sprintf("%s (%d kernel)", name, len(prog.Dispatches)))
		if len(prog.Dispatches) != 1 {
			r.name += "s"
		}
		ins := inputs()
		var outs []*device.Buffer
		err = func() error {
			args := map[codegen.ArgKind][]*device.Buffer{}
			for _, lit := range ins {
				b, err := r.buffer(lit.Shape().ByteSize(), lit.Bytes())
				if err != nil {
					return err
				}
				args[codegen.ArgInput] = append(args[codegen.ArgInput], b)
			}
			for j, s := range prog.Outputs {
				if i, ok := overwrites[j]; ok {
					outs = append(outs, args[codegen.ArgInput][i])
					continue
				}
				b, err := r.buffer(s.ByteSize(), nil)
				if err != nil {
					return err
				}
				outs = append(outs, b)
			}
			args[codegen.ArgOutput] = outs
			for _, size := range prog.Scratch {
				b, err := r.buffer(size, nil)
				if err != nil {
					return err
				}
				args[codegen.ArgScratch] = append(args[codegen.ArgScratch], b)
			}
			made := map[*codegen.Kernel]*device.Kernel{}
			var ds []device.Command
			for _, pd := range prog.Dispatches {
				k := made[pd.Kernel]
				if k == nil {
					if k, err = r.kernel(pd.Kernel.SPIRV, vkxla.KernelSpec(pd.Kernel)); err != nil {
						return fmt.Errorf("kernel %s: %w", pd.Kernel.Name, err)
					}
					made[pd.Kernel] = k
				}
				var as []device.BufferRange
				for _, a := range pd.Args {
					as = append(as, device.BufferRange{Buffer: args[a.Kind][a.Index]})
				}
				bs, err := vkxla.KernelBindings(pd.Kernel, as)
				if err != nil {
					return err
				}
				ds = append(ds, device.Command{Kernel: k, Bindings: bs, Push: pd.Push, Groups: pd.Groups})
			}
			return r.record(ds)
		}()
		if err != nil {
			return nil, errors.Join(fmt.Errorf("%s: %w", name, err), r.Close())
		}
		return checked(ctx, r, func() error {
			var bs [][]byte
			for _, b := range outs {
				data, err := read(b)
				if err != nil {
					return err
				}
				bs = append(bs, data)
			}
			return check(ins, bs)
		})
	}}
}
