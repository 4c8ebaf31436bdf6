#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
// @variants T_DST=uint T_SRC=uint RANK=0|1|3
// @variants T_DST=uint T_SRC=uint VEC4
// @variants T_DST=float T_SRC=int|uint RANK=0|2
// @variants T_DST=int T_SRC=uint RANK=0
// dst[view] = T_DST(src[view]) between two strided views of RANK (collapsed) dims walked in C order.
// Used for strided copies (transpose of any permutation, stepped slices), concatenation (the dst
// view is a slab of the output) and dtype-converting copies.
// Defines: T_SRC, T_DST (float, int or uint; equal for a bit copy: uint, or for the packed dtypes
//   uint8_t, uint16_t (with VK_WIDE) or uvec2, primitives/moves.py);
//   RANK: 0 = both sides contiguous, else the number of dims;
//   VEC4 (RANK 0 only, both offsets multiples of 4, T_SRC == T_DST): 16-byte loads and stores.
// Bindings: 0 dst, 1 src; with VEC4 also 2 dst and 3 src again, seen as uvec4 (the same buffers).
// Push words: n, dst offset, src offset, then shape[RANK], dst strides[RANK], src strides[RANK]
//   (element strides, signed: a reversed slice walks backwards).
#ifndef RANK
#define RANK 0
#endif
#ifndef T_DST  // defaults make the file compile on its own (bit copy)
#define T_DST uint
#define T_SRC uint
#endif
layout(push_constant) uniform Push { uint w[3 + 3 * RANK]; } p;

layout(std430, binding = 0) writeonly buffer Dst { T_DST dst_[]; };
layout(std430, binding = 1) readonly buffer Src { T_SRC src_[]; };
#ifdef VEC4
layout(std430, binding = 2) writeonly buffer Dst4 { uvec4 dst4_[]; };
layout(std430, binding = 3) readonly buffer Src4 { uvec4 src4_[]; };
#endif

#if RANK > 0
// Offsets of element i (C order over the shape) in the dst and src views.
void positions(uint i, out int d, out int s) {
    d = int(p.w[1]);
    s = int(p.w[2]);
    [[unroll]] for (int k = RANK - 1; k >= 0; --k) {
        uint extent = p.w[3 + k];
        int c = int(i % extent);
        i /= extent;
        d += c * int(p.w[3 + RANK + k]);
        s += c * int(p.w[3 + 2 * RANK + k]);
    }
}
#endif

void main() {
    uint n = p.w[0];
#if RANK > 0
    GRID_STRIDE_LOOP(i, n) {
        int d, s;
        positions(i, d, s);
        dst_[d] = T_DST(src_[s]);
    }
#elif defined(VEC4)
    // Whole 16-byte groups first, then the tail (< 4 elements) through the scalar bindings.
    uint n4 = n / 4u, d4 = p.w[1] / 4u, s4 = p.w[2] / 4u;
    GRID_STRIDE_LOOP(i, n4) dst4_[d4 + i] = src4_[s4 + i];
    uint t = n4 * 4u + gl_GlobalInvocationID.x;
    if (t < n) dst_[p.w[1] + t] = src_[p.w[2] + t];
#else
    GRID_STRIDE_LOOP(i, n) dst_[p.w[1] + i] = T_DST(src_[p.w[2] + i]);
#endif
}
