#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
#include "lib/sort_keys.glsl"
// @variants ?KEY64
// numpy.searchsorted: out[i] = the number of elements of the sorted array that come before
// query i (side left: smaller; right: smaller or equal), by binary search over sort keys
// (lib/sort_keys.glsl: NaN largest, -0.0 == +0.0, as numpy compares). KEY64: of 64-bit elements,
// word pairs (offsets in words), their keys compared as (high, low).
// Bindings: 0 the sorted array, 1 the queries, 2 out (int32). Push: n (sorted), queries, their
// offsets, the key type, right (1: side right).
layout(push_constant) uniform Push {
    uint n; uint queries; uint sorted_off; uint query_off; uint out_off; uint key_type; uint right;
} p;

layout(std430, binding = 0) restrict readonly buffer Sorted { uint sorted_[]; };
layout(std430, binding = 1) restrict readonly buffer Queries { uint queries_[]; };
layout(std430, binding = 2) writeonly buffer Out { uint out_[]; };

#ifdef KEY64
#define KEY uvec2
uvec2 query_key(uint i) {
    return sort_key64(uvec2(queries_[p.query_off + 2u * i], queries_[p.query_off + 2u * i + 1u]), p.key_type);
}
uvec2 sorted_key(uint i) {
    return sort_key64(uvec2(sorted_[p.sorted_off + 2u * i], sorted_[p.sorted_off + 2u * i + 1u]), p.key_type);
}
bool before(uvec2 k, uvec2 q) {  // k comes before q (right: or equals it)
    return k.y != q.y ? k.y < q.y : (p.right != 0u ? k.x <= q.x : k.x < q.x);
}
#else
#define KEY uint
uint query_key(uint i) { return sort_key(queries_[p.query_off + i], p.key_type); }
uint sorted_key(uint i) { return sort_key(sorted_[p.sorted_off + i], p.key_type); }
bool before(uint k, uint q) { return p.right != 0u ? k <= q : k < q; }
#endif

void main() {
    GRID_STRIDE_LOOP(i, p.queries) {
        KEY q = query_key(i);
        uint lo = 0u, hi = p.n;
        while (lo < hi) {  // at most 33 rounds (n < 2**32)
            uint mid = lo + (hi - lo) / 2u;
            if (before(sorted_key(mid), q)) lo = mid + 1u; else hi = mid;
        }
        out_[p.out_off + i] = lo;
    }
}
