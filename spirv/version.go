package spirv

import "fmt"

// Version is a SPIR-V version as it appears in the module header: 0x00MMmm00.
type Version uint32

// SPIR-V versions. Vulkan 1.1 consumes up to 1.3 (1.4 with VK_KHR_spirv_1_4),
// Vulkan 1.2 up to 1.5, Vulkan 1.3 up to 1.6.
const (
	Version1_0 Version = 0x00010000
	Version1_1 Version = 0x00010100
	Version1_2 Version = 0x00010200
	Version1_3 Version = 0x00010300
	Version1_4 Version = 0x00010400
	Version1_5 Version = 0x00010500
	Version1_6 Version = 0x00010600
)

// Major returns the major version number.
func (v Version) Major() int { return int(v>>16) & 0xff }

// Minor returns the minor version number.
func (v Version) Minor() int { return int(v>>8) & 0xff }

func (v Version) String() string { return fmt.Sprintf("SPIR-V %d.%d", v.Major(), v.Minor()) }
