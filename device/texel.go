package device

/*
#include "vkx.h"
*/
import "C"

import "fmt"

// TexelFormat is the format a kernel reads a uniform texel buffer binding with
// (texelFetch on a samplerBuffer or usamplerBuffer): one texel per element of the
// view. The zero value is no format. On lavapipe a texel fetch compiles to a
// branch-free gather, where a storage-buffer load at a computed offset becomes a
// loop over the SIMD lanes.
type TexelFormat uint8

const (
	TexelRGBA32U TexelFormat = C.VKX_TEXEL_RGBA32U // VK_FORMAT_R32G32B32A32_UINT: a vec4 per texel
	TexelRGBA16U TexelFormat = C.VKX_TEXEL_RGBA16U // VK_FORMAT_R16G16B16A16_UINT: a uvec4 of 16-bit values per texel
	TexelR32U    TexelFormat = C.VKX_TEXEL_R32U    // VK_FORMAT_R32_UINT: one 32-bit value per texel
	TexelR16U    TexelFormat = C.VKX_TEXEL_R16U    // VK_FORMAT_R16_UINT: one 16-bit value per texel
)

// texelFormats lists every TexelFormat, for the capability query.
var texelFormats = []TexelFormat{TexelRGBA32U, TexelRGBA16U, TexelR32U, TexelR16U}

// Bytes is the size of one texel; 0 for an unknown format.
func (f TexelFormat) Bytes() int64 {
	switch f {
	case TexelRGBA32U:
		return 16
	case TexelRGBA16U:
		return 8
	case TexelR32U:
		return 4
	case TexelR16U:
		return 2
	}
	return 0
}

func (f TexelFormat) String() string {
	switch f {
	case TexelRGBA32U:
		return "rgba32ui"
	case TexelRGBA16U:
		return "rgba16ui"
	case TexelR32U:
		return "r32ui"
	case TexelR16U:
		return "r16ui"
	}
	return fmt.Sprintf("TexelFormat(%d)", uint8(f))
}
