package bench

import (
	"context"
	"errors"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/shaders"
)

// The hand-written baselines: shaders from package shaders, dispatched on the
// runtime's device from a pre-recorded command buffer.

func shaderKernel(r *kernelRunner, s shaders.Shader) (*device.Kernel, error) {
	return r.kernel(s.SPIRV, device.KernelSpec{EntryPoint: s.EntryPoint, Bindings: s.Bindings, PushConstantSize: s.PushConstantSize})
}

// saxpyBaseline is y = a·x + y in place with a saxpy shader (scalar or vec4).
func saxpyBaseline(s shaders.Shader, plan func(n int, a float32) (shaders.Dispatch, error), n int) Variant {
	return Variant{Name: s.Name, New: func(ctx context.Context, rt *vkxla.Runtime) (Runner, error) {
		r := newKernelRunner(rt.Device(), s.Name)
		x, y := saxpyInputs(n)
		var xb, yb *device.Buffer
		err := func() error {
			k, err := shaderKernel(r, s)
			if err != nil {
				return err
			}
			if xb, err = r.buffer(4*int64(n), x.Bytes()); err != nil {
				return err
			}
			if yb, err = r.buffer(4*int64(n), y.Bytes()); err != nil {
				return err
			}
			g, err := plan(n, SaxpyA)
			if err != nil {
				return err
			}
			return r.record([]device.Command{{Kernel: k, Bindings: []device.BufferRange{{Buffer: xb}, {Buffer: yb}}, Push: g.Push, Groups: g.Groups}})
		}()
		if err != nil {
			return nil, errors.Join(err, r.Close())
		}
		return checked(ctx, r, func() error {
			out, err := read(yb)
			if err != nil {
				return err
			}
			return checkSaxpy(x.Bytes(), y.Bytes(), out)
		})
	}}
}

// sgemmBaseline is C = A·B with an sgemm shader.
func sgemmBaseline(s shaders.Shader, plan func(m, n, k int) (shaders.Dispatch, error), m, n, k int) Variant {
	return Variant{Name: s.Name, New: func(ctx context.Context, rt *vkxla.Runtime) (Runner, error) {
		r := newKernelRunner(rt.Device(), s.Name)
		a, b := gemmInputs(m, n, k)
		var cb *device.Buffer
		err := func() error {
			kern, err := shaderKernel(r, s)
			if err != nil {
				return err
			}
			ab, err := r.buffer(a.Shape().ByteSize(), a.Bytes())
			if err != nil {
				return err
			}
			bb, err := r.buffer(b.Shape().ByteSize(), b.Bytes())
			if err != nil {
				return err
			}
			if cb, err = r.buffer(4*int64(m)*int64(n), nil); err != nil {
				return err
			}
			g, err := plan(m, n, k)
			if err != nil {
				return err
			}
			return r.record([]device.Command{{Kernel: kern, Bindings: []device.BufferRange{{Buffer: ab}, {Buffer: bb}, {Buffer: cb}}, Push: g.Push, Groups: g.Groups}})
		}()
		if err != nil {
			return nil, errors.Join(err, r.Close())
		}
		return checked(ctx, r, func() error {
			out, err := read(cb)
			if err != nil {
				return err
			}
			return checkGemm(a.Bytes(), b.Bytes(), out, m, n, k)
		})
	}}
}

// roundTrip is the device package's raw dispatch round trip: submit a recorded
// one-workgroup dispatch (the fill shader over n words) and wait for it.
func roundTrip(n int) Variant {
	const name = "device-roundtrip"
	return Variant{Name: name, New: func(ctx context.Context, rt *vkxla.Runtime) (Runner, error) {
		r := newKernelRunner(rt.Device(), name)
		err := func() error {
			k, err := shaderKernel(r, shaders.Fill)
			if err != nil {
				return err
			}
			buf, err := r.buffer(4*int64(n), nil)
			if err != nil {
				return err
			}
			g, err := shaders.FillDispatch(0, n, 0)
			if err != nil {
				return err
			}
			return r.record([]device.Command{{Kernel: k, Bindings: []device.BufferRange{{Buffer: buf}}, Push: g.Push, Groups: g.Groups}})
		}()
		if err != nil {
			return nil, errors.Join(err, r.Close())
		}
		return r, nil
	}}
}
