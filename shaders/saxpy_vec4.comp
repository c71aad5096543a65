#version 450
// saxpy_vec4: y[i] = a*x[i] + y[i] for i < n, four floats per invocation per iteration.
// The vec4 bandwidth baseline: on lavapipe four elements per invocation is worth about
// 2x over one (the per-invocation overhead is amortised), on GPUs it is a 16-byte access.
// Each binding is also declared as float[] (an alias of the same binding) so that the
// last n%4 elements are handled here too; n need not be a multiple of 4.

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) readonly buffer X4 { vec4 x4[]; };
layout(set = 0, binding = 0, std430) readonly buffer X1 { float x1[]; };
layout(set = 0, binding = 1, std430) buffer Y4 { vec4 y4[]; };
layout(set = 0, binding = 1, std430) buffer Y1 { float y1[]; };

layout(push_constant, std430) uniform Push {
    uint n;  // number of elements (floats)
    float a; // scale
} p;

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint n4 = p.n >> 2;
    for (uint i = id; i < n4; i += stride) {
        y4[i] = p.a * x4[i] + y4[i];
    }
    uint tail = n4 * 4u + id;
    if (tail < p.n) {
        y1[tail] = p.a * x1[tail] + y1[tail];
    }
}
