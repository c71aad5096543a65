#version 450
// x[i] += 1 for i < n, x reached through its device address (table[0]) rather than
// a binding: the PhysicalStorageBuffer64 path kernels use for tensors larger than
// one binding.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint x[]; };
layout(set = 0, binding = 0) readonly buffer Table { uint64_t table[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < pc.n) {
		Words w = Words(table[0]);
		w.x[i] += 1u;
	}
}
