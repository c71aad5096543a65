package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// TrainWorkload is one step of TrainStep (layers × width, batch rows) compiled
// without a memory budget (the "baseline") and under budgets of the given
// percentages of that plan's peak: rematerialisation trades recomputed kernels for
// device memory, and the table shows both, peak bytes next to time. The figure is
// GFLOP/s of the step's useful work (3 products per layer, 2·batch·width² flops
// each), so recomputation shows as a lower figure. The unbudgeted run is checked
// against cpuref; the budgeted ones must give the same bits as the unbudgeted one
// (a recomputed kernel is the same kernel on the same inputs).
func TrainWorkload(layers, batch, width int, percents []int) Workload {
	build := func() (*hlo.Module, error) {
		b := hlo.NewBuilder(fmt.Sprintf("train%d", layers))
		return b.Build(TrainStep(b, layers, batch, width))
	}
	inputs := func() []*hlo.Literal {
		ins := []*hlo.Literal{F32Literal(11, int64(batch), int64(width))}
		for i := range layers {
			w := F32Literal(uint64(12+i), int64(width), int64(width))
			scaleF32(w, 1/float32(width)) // keep tanh out of saturation
			ins = append(ins, w)
		}
		return ins
	}
	ref := &trainReference{}
	w := Workload{
		Name: fmt.Sprintf("train step %d×%d, batch %d", layers, width, batch),
		Unit: "GFLOP/s",
		Work: float64(layers) * 3 * 2 * float64(batch) * float64(width) * float64(width),
		Baselines: []Variant{Executable("vkxla, no budget", build, inputs, func(in, out []*hlo.Literal) error {
			return ref.checkAgainstCPU(build, in, out)
		})},
	}
	for _, pct := range percents {
		budget := func(rt *vkxla.Runtime, m *hlo.Module) ([]vkxla.CompileOption, error) {
			exe, err := rt.Compile(context.Background(), m)
			if err != nil {
				return nil, err
			}
			peak := exe.MemoryStats().PeakBytes
			err = errors.Join(ref.record(exe, inputs), exe.Close())
			return []vkxla.CompileOption{vkxla.WithMemoryBudget(peak * int64(pct) / 100)}, err
		}
		w.Generated = append(w.Generated, ExecutableWith(fmt.Sprintf("vkxla, budget %d%%", pct), budget, build, inputs,
			func(in, out []*hlo.Literal) error { return ref.checkSame(out) }))
	}
	return w
}

// trainReference holds the unbudgeted outputs the budgeted variants must match.
type trainReference struct {
	mu   sync.Mutex
	outs []*hlo.Literal
}

// checkAgainstCPU compares the unbudgeted outputs with cpuref.
func (r *trainReference) checkAgainstCPU(build func() (*hlo.Module, error), in, out []*hlo.Literal) error {
	m, err := build()
	if err != nil {
		return err
	}
	return CheckAgainstCPU(m, in, out)
}

// record runs the unbudgeted executable once, the first time, for checkSame.
func (r *trainReference) record(exe *vkxla.Executable, inputs func() []*hlo.Literal) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.outs != nil {
		return nil
	}
	outs, err := exe.Run(context.Background(), inputs()...)
	r.outs = outs
	return err
}

func (r *trainReference) checkSame(out []*hlo.Literal) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.outs == nil {
		return errors.New("the unbudgeted variant has not run")
	}
	for i := range out {
		if err := hlo.LiteralsEqual(out[i], r.outs[i]); err != nil {
			return fmt.Errorf("output %d differs from the unbudgeted run: %w", i, err)
		}
	}
	return nil
}

// scaleF32 multiplies every element of an f32 literal by k.
func scaleF32(lit *hlo.Literal, k float32) {
	for i := 0; i < lit.NumElements(); i++ {
		lit.SetFloat64(i, float64(float32(lit.Float64(i))*k))
	}
}
