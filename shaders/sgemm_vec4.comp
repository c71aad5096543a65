#version 450
#extension GL_EXT_control_flow_attributes : require
// sgemm_vec4: C = A·B (row-major f32; A M×K, B K×N, C M×N), register-blocked with vec4
// and no shared memory.
//
// Each invocation computes an RM×(4·CB) = 8×8 block of C in 16 vec4 accumulators. When
// K and N are multiples of 4 (the fast path) it steps k by 4: it loads RM vec4s of A
// (four k each) and 4·CB vec4s of B, then issues 4·RM·CB vec4 FMAs (256 FMAs per 24
// loads). No barriers and no shared memory, which is what lavapipe runs fastest: there
// each buffer access is a loop over the 8 lanes, so the kernel is sized to maximise
// FMAs per vec4 load. The workgroup is one row of 32 invocations: on lavapipe that
// measured 1.3–1.5× faster at 1024³ than 16×4 or 8×8 with the same blocking.
//
// Otherwise (the general path) the same blocking runs with scalar loads, one k at a
// time, and column indices clamped to N-1. Rows past M are computed from a clamped row
// index and not stored, so neither inner loop tests rows. The path is chosen once per
// dispatch from the push constants. Grid-stride loops over blocks (65535 workgroups per
// dimension on lavapipe).
//
// Every loop with a constant trip count is [[unroll]]ed in the SPIR-V: lavapipe stops an
// invocation's loops once they have run 65535 iterations in total (one counter shared
// by all loops, nested ones included), so only the block and k loops may count. The
// fast path then allows K up to about 4·65535, the general path K up to about 65535;
// SgemmVec4Dispatch checks.

#define RM 8 // rows per invocation
#define CB 2 // vec4 column groups per invocation (8 columns)

layout(local_size_x = 32, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) readonly buffer A4 { vec4 a4[]; };
layout(set = 0, binding = 0, std430) readonly buffer A1 { float a1[]; };
layout(set = 0, binding = 1, std430) readonly buffer B4 { vec4 b4[]; };
layout(set = 0, binding = 1, std430) readonly buffer B1 { float b1[]; };
layout(set = 0, binding = 2, std430) writeonly buffer C4 { vec4 c4[]; };
layout(set = 0, binding = 2, std430) writeonly buffer C1 { float c1[]; };

layout(push_constant, std430) uniform Push {
    uint M; // rows of A and C
    uint N; // columns of B and C
    uint K; // columns of A, rows of B
} p;

// fastBlock computes rows row0.. and vec4 column groups bn*CB.. with K%4 == N%4 == 0.
void fastBlock(uint row0, uint bn) {
    uint k4 = p.K >> 2;
    uint n4 = p.N >> 2;
    uint arow[RM];
    [[unroll]] for (int i = 0; i < RM; i++) {
        arow[i] = min(row0 + uint(i), p.M - 1u) * k4;
    }
    uint q[CB];
    [[unroll]] for (int j = 0; j < CB; j++) {
        q[j] = min(bn * CB + uint(j), n4 - 1u);
    }
    vec4 acc[RM][CB];
    [[unroll]] for (int i = 0; i < RM; i++) {
        [[unroll]] for (int j = 0; j < CB; j++) {
            acc[i][j] = vec4(0.0);
        }
    }
    for (uint kk = 0u; kk < k4; kk++) {
        vec4 av[RM];
        [[unroll]] for (int i = 0; i < RM; i++) {
            av[i] = a4[arow[i] + kk];
        }
        [[unroll]] for (int l = 0; l < 4; l++) {
            uint brow = (kk * 4u + uint(l)) * n4;
            vec4 bv[CB];
            [[unroll]] for (int j = 0; j < CB; j++) {
                bv[j] = b4[brow + q[j]];
            }
            [[unroll]] for (int i = 0; i < RM; i++) {
                [[unroll]] for (int j = 0; j < CB; j++) {
                    acc[i][j] += av[i][l] * bv[j];
                }
            }
        }
    }
    [[unroll]] for (int i = 0; i < RM; i++) {
        uint r = row0 + uint(i);
        [[unroll]] for (int j = 0; j < CB; j++) {
            uint qj = bn * CB + uint(j);
            if (r < p.M && qj < n4) {
                c4[r * n4 + qj] = acc[i][j];
            }
        }
    }
}

// generalBlock computes the same block for any M, N, K.
void generalBlock(uint row0, uint bn) {
    uint col0 = bn * 4u * CB;
    uint arow[RM];
    [[unroll]] for (int i = 0; i < RM; i++) {
        arow[i] = min(row0 + uint(i), p.M - 1u) * p.K;
    }
    uint col[4 * CB];
    [[unroll]] for (int j = 0; j < 4 * CB; j++) {
        col[j] = min(col0 + uint(j), p.N - 1u);
    }
    vec4 acc[RM][CB];
    [[unroll]] for (int i = 0; i < RM; i++) {
        [[unroll]] for (int j = 0; j < CB; j++) {
            acc[i][j] = vec4(0.0);
        }
    }
    for (uint k = 0u; k < p.K; k++) {
        uint brow = k * p.N;
        vec4 bv[CB];
        [[unroll]] for (int j = 0; j < CB; j++) {
            bv[j] = vec4(b1[brow + col[4 * j]], b1[brow + col[4 * j + 1]],
                         b1[brow + col[4 * j + 2]], b1[brow + col[4 * j + 3]]);
        }
        [[unroll]] for (int i = 0; i < RM; i++) {
            float av = a1[arow[i] + k];
            [[unroll]] for (int j = 0; j < CB; j++) {
                acc[i][j] += av * bv[j];
            }
        }
    }
    [[unroll]] for (int i = 0; i < RM; i++) {
        uint r = row0 + uint(i);
        [[unroll]] for (int j = 0; j < CB; j++) {
            [[unroll]] for (int l = 0; l < 4; l++) {
                uint c = col0 + 4u * uint(j) + uint(l);
                if (r < p.M && c < p.N) {
                    c1[r * p.N + c] = acc[i][j][l];
                }
            }
        }
    }
}

void main() {
    uvec2 stride = gl_NumWorkGroups.xy * gl_WorkGroupSize.xy;
    uint blocksM = (p.M + RM - 1u) / RM;
    uint blocksN = (p.N + 4u * CB - 1u) / (4u * CB);
    if (((p.K | p.N) & 3u) == 0u) {
        for (uint bm = gl_GlobalInvocationID.y; bm < blocksM; bm += stride.y) {
            for (uint bn = gl_GlobalInvocationID.x; bn < blocksN; bn += stride.x) {
                fastBlock(bm * RM, bn);
            }
        }
    } else {
        for (uint bm = gl_GlobalInvocationID.y; bm < blocksM; bm += stride.y) {
            for (uint bn = gl_GlobalInvocationID.x; bn < blocksN; bn += stride.x) {
                generalBlock(bm * RM, bn);
            }
        }
    }
}
