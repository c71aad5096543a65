package spirv

// TexelBuffer is a uniform texel buffer (Vulkan's VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
// GLSL's samplerBuffer): a read-only array of 4-component texels of a format the
// descriptor's buffer view names, read with Function.Fetch. Drivers read it through
// their texture path: on llvmpipe that is a branch-free gather across the SIMD lanes,
// where a storage-buffer load with a per-lane offset is a loop over the lanes with a
// branch per lane and component (docs/codegen.md, "Texel reads").
type TexelBuffer struct {
	Var     ID // the UniformConstant variable of the image type
	Sampled ID // the component type a fetch returns a vec4 of (f32 or u32)
}

// UniformTexelBuffer declares a uniform texel buffer in descriptor set set whose
// fetches return vec4s of sampled (a 32-bit float or integer type). Its binding is
// decorated by the caller (Decorate(t.Var, DecorationBinding, b)) before Assemble:
// code generation numbers texel buffers after all of a kernel's storage buffers,
// which it knows only once the kernel is emitted.
func (m *Module) UniformTexelBuffer(name string, set uint32, sampled ID) TexelBuffer {
	if info := m.typeInfoOf(sampled); (info.op != OpTypeFloat && info.op != OpTypeInt) || info.width != 32 {
		m.failf("texel buffer %s: sampled type %s is not a 32-bit scalar", name, m.TypeName(sampled))
		return TexelBuffer{}
	}
	m.Capability(CapabilitySampledBuffer)
	img := m.typeDecl("imagebuffer"+m.TypeName(sampled), &typeInfo{op: OpTypeImage, elem: sampled},
		uint32(sampled), uint32(DimBuffer), 0, 0, 0, 1, uint32(ImageFormatUnknown))
	v := m.Variable(StorageClassUniformConstant, img, name)
	m.Decorate(v, DecorationDescriptorSet, set)
	return TexelBuffer{Var: v, Sampled: sampled}
}

// Fetch reads texel i (a 32-bit integer) of t as a vec4 of its sampled type.
func (f *Function) Fetch(t TexelBuffer, i ID) ID {
	img := f.Op(OpLoad, f.m.Pointee(f.m.TypeOf(t.Var)), uint32(t.Var))
	return f.Op(OpImageFetch, f.m.TypeVector(t.Sampled, 4), uint32(img), uint32(i))
}
