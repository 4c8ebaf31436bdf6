#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
#include "lib/workgroup.glsl"
// @variants T=float OP=add|mul|min|max
// @variants T=int|uint OP=add|mul|min|max|and|or|xor
// Test kernel: each workgroup takes WG_SIZE inputs (N valid, the rest identity) by scan rank and
// writes reduce, inclusive scan, exclusive scan and aggregate for OP over T.
layout(std430, binding = 0) readonly buffer In { T in_[]; };
layout(std430, binding = 1) writeonly buffer Incl { T incl_[]; };
layout(std430, binding = 2) writeonly buffer Excl { T excl_[]; };
layout(std430, binding = 3) writeonly buffer Red { T red_[]; };  // 2 per workgroup: reduce, aggregate
layout(push_constant) uniform Push { uint n; } p;

void main() {
    uint r = wg_rank();
    uint i = gl_WorkGroupID.x * WG_SIZE + r;
    T x = (r < WG_SIZE && i < p.n) ? in_[i] : PASTE(identity_, OP)(T(0));
    T agg;
    T incl = PASTE(wg_inclusive_scan_, OP)(x, agg);
    T agg2;
    T excl = PASTE(wg_exclusive_scan_, OP)(x, agg2);
    T red = PASTE(wg_reduce_, OP)(x);
    if (r < WG_SIZE && i < p.n) { incl_[i] = incl; excl_[i] = excl; }
    if (r == 0u) { red_[2u * gl_WorkGroupID.x] = red; red_[2u * gl_WorkGroupID.x + 1u] = agg; }
}
