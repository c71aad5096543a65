#version 450
// c[i] = a[i] * scale + b[i] + bias for i < n: a binding test with push constants
// (n, bias) and specialisation constants (workgroup size, scale).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const float scale = 1.0;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Push { uint n; float bias; } pc;
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < pc.n) c[i] = a[i] * scale + b[i] + pc.bias;
}
