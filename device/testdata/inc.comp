#version 450
// x[i] += 1 for i < n: replay and stress tests count submissions with it.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer X { uint x[]; };
layout(push_constant) uniform Push { uint n; } pc;
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < pc.n) x[i] += 1u;
}
