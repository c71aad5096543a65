#version 450
#extension GL_EXT_control_flow_attributes : require
// reduce_sum: out[workgroup] = sum of in[0..n) over the elements that workgroup visits.
//
// A two-pass f32 sum. Pass 1 dispatches G workgroups over the input and leaves G
// partial sums; pass 2 runs the same shader with one workgroup over the G partials and
// leaves the total in out[0]. Each invocation first accumulates vec4s along a
// grid-stride loop (no barriers in the streaming part, which is where the time goes),
// then the workgroup combines its 64 lane sums with a shared-memory tree: six barriers
// per workgroup, once. Plain shared memory rather than subgroup arithmetic keeps the
// shader free of optional features. The float[] alias of the input takes the last n%4
// elements, so any n works; n = 0 writes 0.

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) readonly buffer In4 { vec4 in4[]; };
layout(set = 0, binding = 0, std430) readonly buffer In1 { float in1[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Out { float outv[]; };

layout(push_constant, std430) uniform Push {
    uint n; // number of input elements
} p;

shared float partial[64];

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint n4 = p.n >> 2;
    vec4 s4 = vec4(0.0);
    for (uint i = id; i < n4; i += stride) {
        s4 += in4[i];
    }
    float s = (s4.x + s4.y) + (s4.z + s4.w);
    uint tail = n4 * 4u + id;
    if (tail < p.n) {
        s += in1[tail];
    }
    uint lid = gl_LocalInvocationIndex;
    partial[lid] = s;
    barrier();
    [[unroll]] for (int level = 5; level >= 0; level--) {
        uint half_ = 1u << level;
        if (lid < half_) {
            partial[lid] += partial[lid + half_];
        }
        barrier();
    }
    if (lid == 0u) {
        outv[gl_WorkGroupID.x] = partial[0];
    }
}
