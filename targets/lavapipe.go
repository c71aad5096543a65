package targets

import (
	_ "embed"
	"strings"

	"github.com/vkxla/vkxla/spirv/codegen"
)

// lavapipeLoopLimit is how many loop iterations lavapipe's loop limiter lets one
// invocation run, all loops together, before it silently ends them (measured:
// device's TestLavapipeLoopLimit). No query reports it, so it is keyed on the
// driver.
const lavapipeLoopLimit = 65535

// lavapipeProfile is `vulkaninfo --json` of Mesa lavapipe 22.3 (LLVM 15, 256-bit),
// the CI device, cut to the structures FromVulkaninfo reads.
//
//go:embed lavapipe.json
var lavapipeProfile []byte

func init() {
	families = append(families, family{name: "lavapipe", matches: isLavapipe,
		apply: func(t *codegen.Target) { t.MaxLoopIterations = lavapipeLoopLimit }})
	builtins["lavapipe"] = lavapipeProfile
}

// isLavapipe: Mesa's software rasteriser (llvmpipe driver).
func isLavapipe(d Device) bool {
	return strings.Contains(d.Driver, "llvmpipe") || strings.HasPrefix(d.Name, "llvmpipe")
}
