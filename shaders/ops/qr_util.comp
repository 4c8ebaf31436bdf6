#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
// @variants COPY|TRANSPOSE|TRIU|EYE
// @variants COPY|TRANSPOSE|TRIU|EYE F64 VK_WIDE VK_MATH64
// Batched 2-D helpers for QR: dst (rows x cols) from src, over row-major matrices with their own
// offsets, row strides and batch strides (batch: gl_WorkGroupID.z). One of:
//   COPY        dst[r][c] = src[r][c]
//   TRANSPOSE   dst[c][r] = src[r][c]  (dst is cols x rows)
//   TRIU        dst[r][c] = c >= r ? src[r][c] : 0   (R from the factored matrix)
//   EYE         dst[r][c] = r == c ? 1 : 0           (src unused)
// F64: float64 matrices.
#ifdef F64
#define T double
#else
#define T float
#endif
layout(std430, binding = 0) readonly buffer SrcBuf { T src[]; };
layout(std430, binding = 1) writeonly buffer DstBuf { T dst[]; };

layout(push_constant) uniform Push {
    uint s_off; uint s_ld; uint s_bs;
    uint d_off; uint d_ld; uint d_bs;
    uint rows; uint cols;
} p;

void main() {
    uint b = gl_WorkGroupID.z;
    uint n = p.rows * p.cols;
    for (uint e = gl_GlobalInvocationID.x; e < n; e += gl_NumWorkGroups.x * WG_SIZE) {
#ifdef TRANSPOSE
        // Walk in destination order so the writes are contiguous.
        uint c = e / p.rows, r = e % p.rows;
#else
        uint r = e / p.cols, c = e % p.cols;
#endif
#ifdef EYE
        T v = T(r == c ? 1.0 : 0.0);
#else
        T v = src[p.s_off + b * p.s_bs + r * p.s_ld + c];
#endif
#ifdef TRIU
        v = c >= r ? v : T(0.0);
#endif
#ifdef TRANSPOSE
        dst[p.d_off + b * p.d_bs + c * p.d_ld + r] = v;
#else
        dst[p.d_off + b * p.d_bs + r * p.d_ld + c] = v;
#endif
    }
}
