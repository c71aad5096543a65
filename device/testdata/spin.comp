#version 450
// One invocation iterates an LCG pc.iters times: a kernel that runs long enough for
// tests of cancellation and of closing objects while work is in flight.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform Push { uint iters; } pc;
void main() {
	uint v = x[0];
	for (uint k = 0u; k < pc.iters; k++) v = v * 1664525u + 1013904223u;
	x[0] = v;
}
