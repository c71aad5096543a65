#version 450
// fill: words[offset, offset+count) = value, for a buffer of 32-bit words.
//
// The runtime uses it to zero or fill a range of the arena (lavapipe does not zero new
// memory). The value is a bit pattern: a float fill passes math.Float32bits(v).
// The bulk of the range is written as uvec4 through a second, aliased view of the same
// binding: four words per invocation per iteration is about 2x faster on lavapipe than
// one, and a 16-byte store is the natural width on real GPUs. The at most three words
// before the first and after the last whole quad go through the word view.
// Grid-stride loop: any number of workgroups (lavapipe allows 65535 per dimension)
// covers any count.

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) writeonly buffer Words { uint words[]; };
layout(set = 0, binding = 0, std430) writeonly buffer Quads { uvec4 quads[]; };

layout(push_constant, std430) uniform Push {
    uint offset; // first word to write
    uint count;  // number of words to write
    uint value;  // 32-bit pattern written to every word
} p;

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint begin = p.offset;
    uint end = p.offset + p.count;
    uint qbegin = (begin + 3u) >> 2; // first whole quad
    uint qend = end >> 2;            // one past the last whole quad
    if (qbegin < qend) {
        uvec4 v = uvec4(p.value);
        for (uint q = qbegin + id; q < qend; q += stride) {
            quads[q] = v;
        }
        if (id < qbegin * 4u - begin) {
            words[begin + id] = p.value;
        }
        if (id < end - qend * 4u) {
            words[qend * 4u + id] = p.value;
        }
    } else {
        // Fewer than four words, or a range inside one quad.
        for (uint i = begin + id; i < end; i += stride) {
            words[i] = p.value;
        }
    }
}
