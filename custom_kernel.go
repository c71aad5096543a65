package vkxla

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
	"github.com/vkxla/vkxla/spirv/tools"
)

// RegisterKernelTarget registers a custom-call target that runs a user-supplied
// SPIR-V compute kernel (t.Kernel; with t.Reference or t.Expand, which cpuref
// checks it against): the module is validated with SPIRV-Tools for Vulkan 1.1 and
// read for its entry point and storage buffers before hlo.RegisterCustomCall adds
// it, so a broken module fails here rather than at the first Compile.
// docs/custom-calls.md shows how to write one.
func RegisterKernelTarget(t hlo.CustomCallTarget) error {
	if t.Kernel == nil {
		return fmt.Errorf("vkxla: RegisterKernelTarget %q: %w: no Kernel (use hlo.RegisterCustomCall for a decomposition)", t.Name, ErrInvalidArgument)
	}
	if err := tools.Validate(t.Kernel.Words, tools.Vulkan1_1); err != nil {
		return fmt.Errorf("vkxla: kernel target %q: the SPIR-V module does not validate: %w", t.Name, err)
	}
	if err := codegen.CheckKernel(t.Kernel); err != nil {
		return fmt.Errorf("vkxla: kernel target %q: %w", t.Name, err)
	}
	if err := hlo.RegisterCustomCall(t); err != nil {
		return fmt.Errorf("vkxla: %w", err)
	}
	return nil
}
