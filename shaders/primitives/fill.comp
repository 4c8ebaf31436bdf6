#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
#include "lib/math.glsl"
// @variants T=float|int|uint ?ARANGE
// @variants T=uvec2 PAIR
// out[offset + i] = value (FILL), or start + i * step computed in T (ARANGE), for i < n.
// T: float, int or uint; or uvec2 with PAIR (a fill only): a 64-bit value, low word in a, high in b.
// Push: n, offset, value-or-start bits, step bits.
layout(std430, binding = 0) writeonly buffer Out { T out_[]; };
layout(push_constant) uniform Push { uint n; uint offset; uint a; uint b; } p;

void main() {
    GRID_STRIDE_LOOP(i, p.n) {
#if defined(ARANGE)
        out_[p.offset + i] = FROM_BITS(T, p.a) + T(i) * FROM_BITS(T, p.b);
#elif defined(PAIR)
        out_[p.offset + i] = uvec2(p.a, p.b);
#else
        out_[p.offset + i] = FROM_BITS(T, p.a);
#endif
    }
}
