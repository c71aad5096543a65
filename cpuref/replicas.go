package cpuref

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/collective"
)

// EvalReplicas runs the module on replicas × partitions devices, as XLA runs one
// SPMD program on each. inputs[d] are the entry arguments of device d, numbered
// replica×partitions + partition (XLA's global device id); it returns each
// device's root value in the same order. It is Limits{}.EvalReplicas.
func EvalReplicas(ctx context.Context, m *hlo.Module, replicas, partitions int, inputs [][]*hlo.Literal) ([]*hlo.Literal, error) {
	return Limits{}.EvalReplicas(ctx, m, replicas, partitions, inputs)
}

// EvalReplicas runs one evaluator per device, concurrently, each within these
// limits (Progress reports device 0's); they meet at every collective, each
// execution of it (docs/replicas.md gives the semantics). A program whose devices
// cannot all meet — one finishes or fails without reaching a collective the others
// wait at — stops every device with an error wrapping
// collective.ErrMismatch; the error returned is the first device's own failure
// where one failed, and names the device. Invalid groups wrap ErrInvalidInput.
func (l Limits) EvalReplicas(ctx context.Context, m *hlo.Module, replicas, partitions int, inputs [][]*hlo.Literal) ([]*hlo.Literal, error) {
	if ctx == nil {
		return nil, fmt.Errorf("cpuref: %w: nil context", ErrInvalidInput)
	}
	topo := collective.Topology{Replicas: replicas, Partitions: partitions}
	if err := topo.Check(); err != nil {
		return nil, fmt.Errorf("cpuref: %w: %w", ErrInvalidInput, err)
	}
	if len(inputs) != topo.Devices() {
		return nil, fmt.Errorf("cpuref: %w: %d input lists for %d replicas × %d partitions", ErrInvalidInput, len(inputs), replicas, partitions)
	}
	if err := hlo.Verify(m); err != nil {
		return nil, fmt.Errorf("cpuref: %w: %w", ErrInvalidInput, err)
	}
	r := collective.NewRendezvous(topo)
	outs, errs := make([]*hlo.Literal, topo.Devices()), make([]error, topo.Devices())
	var wg sync.WaitGroup
	for d := range topo.Devices() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			member := r.Member(d)
			defer member.Finish()
			dl := l
			if d > 0 {
				dl.Progress = nil
			}
			ev := newEvaluator(ctx, dl)
			ev.dev = collective.Device{Topology: topo, ID: d, Member: member, Reduce: ev.reducer}
			outs[d], errs[d] = ev.run(m.Entry, inputs[d])
		}()
	}
	wg.Wait()
	if err := firstError(topo, errs); err != nil {
		return nil, err
	}
	return outs, nil
}

// firstError is the error to report: a device's own failure before the mismatch
// errors it caused in the others.
func firstError(topo collective.Topology, errs []error) error {
	pick := -1
	for d, err := range errs {
		if err != nil && (pick < 0 || errors.Is(errs[pick], collective.ErrMismatch) && !errors.Is(err, collective.ErrMismatch)) {
			pick = d
		}
	}
	if pick < 0 {
		return nil
	}
	err := errs[pick]
	if errors.Is(err, collective.ErrInvalidGroups) {
		err = fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	return fmt.Errorf("%s: %w", topo.Name(pick), err)
}

// ErrMismatch is wrapped by EvalReplicas's errors when the devices cannot all meet
// at a collective (a data-dependent loop that runs a collective more often on
// some devices, a device that fails first).
var ErrMismatch = collective.ErrMismatch
