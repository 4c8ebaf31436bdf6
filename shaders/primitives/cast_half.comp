#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
// @variants TO_HALF|FROM_HALF ?BITS
// @variants TO_HALF|FROM_HALF BF16
// float32 <-> float16 without 16-bit storage: halves are packed two per word (packHalf2x16 /
// unpackHalf2x16 are core GLSL), so this runs on every device; BF16: bfloat16 halves instead
// (lib/common.glsl's bf16_bits). BITS: the halves' bit patterns
// moved as they are, one per uint32 word (FROM_HALF) and back (TO_HALF), for work that must not
// touch them (drivers may canonicalize NaN payloads in the float conversions).
// TO_HALF:   out word i = the halves of in[in_off + 2i], in[in_off + 2i + 1]   (out_off in words)
// FROM_HALF: out[out_off + i] = half number in_off + i of the packed input       (in_off in halves)
// Push: n (elements), in_off, out_off.
layout(std430, binding = 0) readonly buffer In { uint in_[]; };
layout(std430, binding = 1) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Push { uint n; uint in_off; uint out_off; } p;

void main() {
#ifdef TO_HALF
    GRID_STRIDE_LOOP(i, (p.n + 1) / 2) {
        uint e = 2 * i;
#ifdef BITS
        uint hi = e + 1 < p.n ? in_[p.in_off + e + 1] & 0xFFFFu : 0u;
        out_[p.out_off + i] = (in_[p.in_off + e] & 0xFFFFu) | (hi << 16);
#else
        float lo = uintBitsToFloat(in_[p.in_off + e]);
        float hi = e + 1 < p.n ? uintBitsToFloat(in_[p.in_off + e + 1]) : 0.0;
#ifdef BF16
        out_[p.out_off + i] = bf16_bits(lo) | (bf16_bits(hi) << 16);
#else
        out_[p.out_off + i] = packHalf2x16(vec2(lo, hi));
#endif
#endif
    }
#else
    GRID_STRIDE_LOOP(i, p.n) {
        uint h = p.in_off + i;
#ifdef BITS
        out_[p.out_off + i] = (in_[h >> 1] >> (16u * (h & 1u))) & 0xFFFFu;
#else
#ifdef BF16
        out_[p.out_off + i] = (in_[h >> 1] << (16u * (~h & 1u))) & 0xFFFF0000u;
#else
        out_[p.out_off + i] = floatBitsToUint(unpackHalf2x16(in_[h >> 1])[h & 1u]);
#endif
#endif
    }
#endif
}
