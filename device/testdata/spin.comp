#version 450
// Each invocation i iterates an LCG pc.iters times on x[i]: a kernel that runs long
// enough (many workgroups) for tests of cancellation and of closing objects while
// work is in flight. lavapipe (gallivm) silently ends a shader's loops after about
// 65535 iterations in all, so iters stays below that and length comes from width.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform Push { uint iters; } pc;
void main() {
	uint i = gl_GlobalInvocationID.x;
	uint v = x[i];
	for (uint k = 0u; k < pc.iters; k++) v = v * 1664525u + 1013904223u;
	x[i] = v;
}
