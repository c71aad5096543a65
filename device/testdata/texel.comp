#version 450
// Reads texel i of an rgba32ui and an rgba16ui uniform texel buffer and writes both to
// y[8i..8i+7] (the 32-bit values, then the 16-bit values widened) for i < n; y[8n] and
// y[8n+1] are the two views' sizes in texels (textureSize).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer Y { uint y[]; };
layout(set = 0, binding = 1) uniform usamplerBuffer F;
layout(set = 0, binding = 2) uniform usamplerBuffer U;
layout(push_constant) uniform Push { uint n; } pc;
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i == 0u) {
		y[8u * pc.n] = uint(textureSize(F));
		y[8u * pc.n + 1u] = uint(textureSize(U));
	}
	if (i >= pc.n)
		return;
	uvec4 f = texelFetch(F, int(i));
	uvec4 u = texelFetch(U, int(i));
	for (uint c = 0u; c < 4u; c++) {
		y[8u * i + c] = f[c];
		y[8u * i + 4u + c] = u[c];
	}
}
