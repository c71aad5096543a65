#version 450
// sgemm_naive: C = A·B for row-major f32 matrices, A M×K, B K×N, C M×N.
// One output element per invocation per iteration, a plain dot product over K straight
// from global memory: the baseline every generated GEMM must beat. 2-D grid-stride
// loops (x over columns, y over rows), so any size runs with at most 65535 workgroups
// per dimension.

layout(local_size_x = 16, local_size_y = 4, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) readonly buffer A { float a[]; };
layout(set = 0, binding = 1, std430) readonly buffer B { float b[]; };
layout(set = 0, binding = 2, std430) writeonly buffer C { float c[]; };

layout(push_constant, std430) uniform Push {
    uint M; // rows of A and C
    uint N; // columns of B and C
    uint K; // columns of A, rows of B
} p;

void main() {
    uvec2 stride = gl_NumWorkGroups.xy * gl_WorkGroupSize.xy;
    for (uint row = gl_GlobalInvocationID.y; row < p.M; row += stride.y) {
        for (uint col = gl_GlobalInvocationID.x; col < p.N; col += stride.x) {
            float acc = 0.0;
            uint ai = row * p.K;
            uint bi = col;
            for (uint k = 0u; k < p.K; k++) {
                acc += a[ai + k] * b[bi];
                bi += p.N;
            }
            c[row * p.N + col] = acc;
        }
    }
}
