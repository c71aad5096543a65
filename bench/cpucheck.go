package bench

import (
	"fmt"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// CheckAgainstCPU compares a run's outputs (the module's output leaves, in
// order) with cpuref's on the same inputs, each within the program tolerance of
// its element type (vkxla.ProgramTolerance, the one tolerance table).
func CheckAgainstCPU(m *hlo.Module, in, out []*hlo.Literal) error {
	want, err := cpuref.Eval(m, in...)
	if err != nil {
		return fmt.Errorf("cpuref: %w", err)
	}
	leaves := want.Leaves()
	if len(out) != len(leaves) {
		return fmt.Errorf("%d outputs, cpuref has %d", len(out), len(leaves))
	}
	for i, w := range leaves {
		if err := vkxla.ProgramTolerance(m, w.DType()).Check(out[i], w); err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
	}
	return nil
}
