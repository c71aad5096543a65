#version 450
#extension GL_EXT_control_flow_attributes : require
// sgemm_tiled: C = A·B (row-major f32; A M×K, B K×N, C M×N) with shared-memory tiles.
//
// The classic GPU GEMM: a workgroup of WG×WG invocations owns a TILE×TILE block of C.
// Per step it stages a TILE×TK block of A (transposed) and a TK×TILE block of B in
// shared memory, as vec4s, and every invocation accumulates an RB×RB register block
// (RB = TILE/WG = 8) from them, reading RB/4 vec4s of each tile per k.
//
// Sizes are chosen for lavapipe, where every barrier switches between the workgroup's
// 8-wide coroutines and every shared or buffer access is a per-lane loop: 64
// invocations, 8×8 outputs each, 64·64·16 = 65536 FMAs per barrier pair, 8 KiB of
// shared memory. On lavapipe 1024³ measured (best of 3): TILE 32/WG 8 scalar tiles
// 1.0 s; TILE 64/WG 8 scalar 0.52 s; this vec4 layout 0.34 s.
//
// Out-of-range rows, columns and k are staged as zero, so any M, N, K work; stores are
// masked. Grid-stride loops over tiles (65535 workgroups per dimension on lavapipe).
//
// Every loop with a constant trip count is [[unroll]]ed in the SPIR-V: lavapipe stops an
// invocation's loops once they have run 65535 iterations in total (one counter shared
// by all loops, nested ones included), so only the tile loops and the K/TK steps count.

#define TILE 64 // C block per workgroup is TILE×TILE
#define TK 16   // K-depth of one shared-memory step
#define WG 8    // the workgroup is WG×WG invocations
#define RB 8    // register block per invocation is RB×RB = (TILE/WG)²
#define T4 (TILE / 4)
#define RB4 (RB / 4)
#define STAGE (T4 * TK / (WG * WG)) // vec4s of each tile one invocation stages

layout(local_size_x = WG, local_size_y = WG, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) readonly buffer A { float a[]; };
layout(set = 0, binding = 1, std430) readonly buffer B { float b[]; };
layout(set = 0, binding = 2, std430) writeonly buffer C { float c[]; };

layout(push_constant, std430) uniform Push {
    uint M; // rows of A and C
    uint N; // columns of B and C
    uint K; // columns of A, rows of B
} p;

shared vec4 As[TK][T4]; // As[k][m/4]: A transposed, four rows per vec4
shared vec4 Bs[TK][T4]; // Bs[k][n/4]: four columns per vec4

void main() {
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint tid = gl_LocalInvocationIndex;
    uint tilesM = (p.M + TILE - 1u) / TILE;
    uint tilesN = (p.N + TILE - 1u) / TILE;
    for (uint tm = gl_WorkGroupID.y; tm < tilesM; tm += gl_NumWorkGroups.y) {
        for (uint tn = gl_WorkGroupID.x; tn < tilesN; tn += gl_NumWorkGroups.x) {
            uint row0 = tm * TILE;
            uint col0 = tn * TILE;
            vec4 acc[RB][RB4];
            [[unroll]] for (int i = 0; i < RB; i++) {
                [[unroll]] for (int j = 0; j < RB4; j++) {
                    acc[i][j] = vec4(0.0);
                }
            }
            for (uint k0 = 0u; k0 < p.K; k0 += TK) {
                // Stage the tiles: T4*TK vec4s of each, WG*WG invocations. The loops
                // count a constant number of rounds so that they unroll.
                [[unroll]] for (int r = 0; r < STAGE; r++) {
                    uint e = tid + uint(r * WG * WG);
                    uint m4 = e / TK;
                    uint k = e % TK;
                    uint gk = k0 + k;
                    vec4 v;
                    [[unroll]] for (int l = 0; l < 4; l++) {
                        uint gr = row0 + m4 * 4u + uint(l);
                        v[l] = (gr < p.M && gk < p.K) ? a[gr * p.K + gk] : 0.0;
                    }
                    As[k][m4] = v;
                }
                [[unroll]] for (int r = 0; r < STAGE; r++) {
                    uint e = tid + uint(r * WG * WG);
                    uint k = e / T4;
                    uint n4 = e % T4;
                    uint gk = k0 + k;
                    vec4 v;
                    [[unroll]] for (int l = 0; l < 4; l++) {
                        uint gc = col0 + n4 * 4u + uint(l);
                        v[l] = (gk < p.K && gc < p.N) ? b[gk * p.N + gc] : 0.0;
                    }
                    Bs[k][n4] = v;
                }
                barrier();
                [[unroll]] for (int k = 0; k < TK; k++) {
                    vec4 av[RB4];
                    vec4 bv[RB4];
                    [[unroll]] for (int i = 0; i < RB4; i++) {
                        av[i] = As[k][ty * RB4 + uint(i)];
                        bv[i] = Bs[k][tx * RB4 + uint(i)];
                    }
                    [[unroll]] for (int i = 0; i < RB; i++) {
                        float ai = av[i / 4][i % 4];
                        [[unroll]] for (int j = 0; j < RB4; j++) {
                            acc[i][j] += ai * bv[j];
                        }
                    }
                }
                // Nobody may overwrite the tiles while others still read them.
                barrier();
            }
            [[unroll]] for (int i = 0; i < RB; i++) {
                uint gr = row0 + ty * RB + uint(i);
                [[unroll]] for (int j = 0; j < RB4; j++) {
                    [[unroll]] for (int l = 0; l < 4; l++) {
                        uint gc = col0 + (tx * RB4 + uint(j)) * 4u + uint(l);
                        if (gr < p.M && gc < p.N) {
                            c[gr * p.N + gc] = acc[i][j][l];
                        }
                    }
                }
            }
        }
    }
}
