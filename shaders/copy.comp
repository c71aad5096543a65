#version 450
// copy: a rank-4 strided copy of 32-bit elements between two bindings.
//
//   for every (i0, i1, i2, i3) < shape:
//     dst[dstOffset + i0*dstStride.x + i1*dstStride.y + i2*dstStride.z + i3*dstStride.w] =
//     src[srcOffset + i0*srcStride.x + i1*srcStride.y + i2*srcStride.z + i3*srcStride.w]
//
// Offsets and strides count elements, not bytes; strides may be negative or zero (a
// zero source stride broadcasts). Lower ranks pad the shape with leading 1s. The
// destination ranges of distinct elements must not overlap, and src and dst must not
// overlap if they are the same memory.
//
// Layout of the work: x runs over i3 (the innermost extent), y over i2, z over the
// flattened (i0, i1). Only i3 differs between invocations of a workgroup, so the one
// integer division (splitting i0 from i1) happens once per row rather than once per
// element; integer division is not vectorised on lavapipe's CPU target. Every axis is
// a grid-stride loop because lavapipe allows only 65535 workgroups per dimension.
// The Go side (Copy.Grid) puts the longest extent innermost, which keeps the x lanes
// busy whatever the caller's dimension order.

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint dst[]; };

layout(push_constant, std430) uniform Push {
    uvec4 shape;     // extents (i0, i1, i2, i3); i3 is innermost
    ivec4 srcStride; // element strides of src per dimension
    ivec4 dstStride; // element strides of dst per dimension
    uint srcOffset;  // element offset of src[0,0,0,0]
    uint dstOffset;  // element offset of dst[0,0,0,0]
} p;

void main() {
    uint rows01 = p.shape.x * p.shape.y;
    uint strideX = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint r = gl_WorkGroupID.z; r < rows01; r += gl_NumWorkGroups.z) {
        uint i0 = r / p.shape.y;
        uint i1 = r - i0 * p.shape.y;
        int s01 = int(p.srcOffset) + int(i0) * p.srcStride.x + int(i1) * p.srcStride.y;
        int d01 = int(p.dstOffset) + int(i0) * p.dstStride.x + int(i1) * p.dstStride.y;
        for (uint i2 = gl_WorkGroupID.y; i2 < p.shape.z; i2 += gl_NumWorkGroups.y) {
            int s = s01 + int(i2) * p.srcStride.z;
            int d = d01 + int(i2) * p.dstStride.z;
            for (uint i3 = gl_GlobalInvocationID.x; i3 < p.shape.w; i3 += strideX) {
                dst[uint(d + int(i3) * p.dstStride.w)] = src[uint(s + int(i3) * p.srcStride.w)];
            }
        }
    }
}
