#version 450
// saxpy: y[i] = a*x[i] + y[i] for i < n, one float per invocation per iteration.
// The scalar bandwidth baseline. Grid-stride loop (65535 workgroups per dimension on
// lavapipe).

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) readonly buffer X { float x[]; };
layout(set = 0, binding = 1, std430) buffer Y { float y[]; };

layout(push_constant, std430) uniform Push {
    uint n;  // number of elements
    float a; // scale
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        y[i] = p.a * x[i] + y[i];
    }
}
