#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
#include "lib/math.glsl"
// @variants T=float|int|uint ?ARANGE
// out[offset + i] = value (FILL), or start + i * step computed in T (ARANGE), for i < n.
// T: float, int or uint. Push: n, offset, value-or-start bits, step bits.
layout(std430, binding = 0) writeonly buffer Out { T out_[]; };
layout(push_constant) uniform Push { uint n; uint offset; uint a; uint b; } p;

void main() {
    GRID_STRIDE_LOOP(i, p.n) {
#ifdef ARANGE
        out_[p.offset + i] = FROM_BITS(T, p.a) + T(i) * FROM_BITS(T, p.b);
#else
        out_[p.offset + i] = FROM_BITS(T, p.a);
#endif
    }
}
