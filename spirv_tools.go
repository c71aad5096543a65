package vkxla

import (
	"fmt"
	"github.com/vkxla/vkxla/plan"

	"github.com/vkxla/vkxla/spirv"
	"github.com/vkxla/vkxla/spirv/tools"
)

func disassemble(bin []byte) (string, error) {
	words, err := spirv.Words(bin)
	if err != nil {
		return "", err
	}
	return tools.Disassemble(words)
}

// validateKernels checks every generated kernel with SPIRV-Tools for Vulkan 1.1,
// the oldest environment vkxla targets.
func validateKernels(refs []*plan.KernelRef) error {
	for _, ref := range refs {
		words, err := spirv.Words(ref.Kernel.SPIRV)
		if err == nil {
			err = tools.Validate(words, tools.Vulkan1_1)
		}
		if err != nil {
			return fmt.Errorf("generated kernel %s does not validate: %w", ref.Kernel.Name, err)
		}
	}
	return nil
}
