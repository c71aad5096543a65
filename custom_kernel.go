package vkxla

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
	"github.com/vkxla/vkxla/spirv/tools"
)

// RegisterKernelTarget registers a custom-call target that runs a user-supplied
// SPIR-V compute kernel (t.Kernel; with t.Reference or t.Expand, which cpuref
// checks it against): the module is validated with SPIRV-Tools for Vulkan 1.1 and
// read for its entry point and storage buffers before hlo.RegisterCustomCall adds
// it, so a broken module (or an entry that lacks a part) fails here rather than
// at the first Compile, with an error wrapping ErrInvalidArgument. A name registered already fails with
// hlo.ErrDuplicateCustomCall and the first registration stays. The registry keeps
// its own copy of the module's words: changing the caller's slice afterwards
// changes nothing. Safe to call from many goroutines.
// docs/custom-calls.md shows how to write one.
func RegisterKernelTarget(t hlo.CustomCallTarget) error {
	if t.Kernel == nil {
		return fmt.Errorf("vkxla: RegisterKernelTarget %q: %w: no Kernel (use hlo.RegisterCustomCall for a decomposition)", t.Name, ErrInvalidArgument)
	}
	k := *t.Kernel
	k.Words = slices.Clone(k.Words)
	t.Kernel = &k
	if err := tools.Validate(k.Words, tools.Vulkan1_1); err != nil {
		return fmt.Errorf("vkxla: kernel target %q: %w: the SPIR-V module does not validate: %w", t.Name, ErrInvalidArgument, err)
	}
	if err := codegen.CheckKernel(&k); err != nil {
		return fmt.Errorf("vkxla: kernel target %q: %w: %w", t.Name, ErrInvalidArgument, err)
	}
	switch err := hlo.RegisterCustomCall(t); {
	case errors.Is(err, hlo.ErrDuplicateCustomCall):
		return fmt.Errorf("vkxla: %w", err)
	case err != nil: // what the entry lacks (a name, a Reference or Expand, Groups)
		return fmt.Errorf("vkxla: %w: %w", ErrInvalidArgument, err)
	}
	return nil
}
