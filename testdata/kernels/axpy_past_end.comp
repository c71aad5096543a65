#version 450
// A user kernel that misbehaves, for the custom-call registry's adversarial tests:
// axpy_diff.comp's (a*x + y, x - y), but each invocation also writes its results
// one whole result length past their ends, and out0 64 Ki elements past, where
// the arena's neighbouring buffers lie. vkxla binds each argument with its exact
// byte range; on lavapipe (which bounds-checks storage-buffer access) those
// writes are dropped. docs/custom-calls.md says what a kernel may rely on.
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
    precise float ax = pc.a * x[i];
    precise float s = ax + y[i];
    out0[i] = s;
    out1[i] = x[i] - y[i];
    out0[i + pc.n] = 12345.0;
    out1[i + pc.n] = -12345.0;
    out0[i + 65536u] = 54321.0;
}
