package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandCustomCalls replaces every custom-call by the decomposition its target's
// registry entry builds (hlo.RegisterCustomCall); an unregistered target is an
// error wrapping hlo.ErrUnknownCustomCall that names the target and the call.
// Calls of kernel targets stay: code generation dispatches their SPIR-V kernels;
// so do MoveToHost and MoveToDevice: the planner makes them copies between the
// arena and host memory (heapsim's host offload).
func ExpandCustomCalls(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, func(in *hlo.Instruction) bool {
		_, kernel := hlo.KernelTarget(in)
		_, placement := hlo.Placement(in)
		return in.Op == hlo.OpCustomCall && !kernel && !placement
	}, hlo.ExpandCustomCall)
}
