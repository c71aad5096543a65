#version 450
// A user kernel for the custom-call registry tests: given x and y of n floats and
// a scalar a (push constants), out0 = a*x + y and out1 = x - y. Bindings are the
// call's operands (x, y), then its results (out0, out1).
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Y { float y[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out0 { float out0[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out1 { float out1[]; };
layout(push_constant) uniform Push { uint n; float a; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) {
        return;
    }
    precise float ax = pc.a * x[i]; // precise: no fused multiply-add, as the Go reference rounds
    precise float s = ax + y[i];
    out0[i] = s;
    out1[i] = x[i] - y[i];
}
