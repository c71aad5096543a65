#version 450
// add_one: dst[i] = src[i] + 1 for i < n. The arena's device tests dispatch it over
// the bindings of split ranges; the +1 proves the kernel, not a copy, wrote dst.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, std430) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint dst[]; };
layout(push_constant, std430) uniform Push { uint n; } p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        dst[i] = src[i] + 1u;
    }
}
