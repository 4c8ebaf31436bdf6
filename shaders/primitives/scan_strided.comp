#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
#include "scan_types.glsl"
// @variants OP=add T_IN=float T=float S=float KEY=0 NEG_ZERO T_IN4=vec4 T4=vec4 S4=vec4 MODE=0|1 ?HAS_PREFIX ?EXCLUSIVE ?REVERSE
// @variants OP=mul T_IN=float T=float S=float KEY=0 T_IN4=vec4 T4=vec4 S4=vec4 MODE=0|1 ?HAS_PREFIX ?EXCLUSIVE ?REVERSE
// @variants OP=max T_IN=uint T=int S=int KEY=0 T_IN4=uvec4 T4=ivec4 S4=ivec4 MODE=0
// Scans along the middle axis of a C-contiguous (outer, len, inner) array: one thread per column
// (o, i) and chunk of `chunk` consecutive positions along the axis; neighbouring threads take
// neighbouring i, so every step of the serial loop reads a contiguous run (coalesced for inner
// >= the subgroup size; for short last-axis rows, inner = 1, neighbours share cache lines).
// Chunks bound the serial work (and lavapipe's loop budget); with several chunks per column the
// caller runs reduce-then-scan: MODE 1 writes each chunk's combination to aux, laid out as an
// (outer, chunks, inner) array; the caller scans that (exclusive) along its middle axis; MODE 0
// with HAS_PREFIX then scans each chunk from its prefix.
// Defines: scan_types.glsl's, MODE (0 scan, 1 reduce), HAS_PREFIX, EXCLUSIVE, REVERSE.
// Bindings: 0 input, 1 output (unused by MODE 1), 2 aux.
// Push: len, inner, outer, chunks, chunk, input offset, output offset, aux offset.
layout(push_constant) uniform Push {
    uint len; uint inner; uint outer; uint chunks; uint chunk; uint in_off; uint out_off; uint aux_off;
} p;

layout(std430, binding = 0) readonly buffer In { T_IN in_[]; };
layout(std430, binding = 1) writeonly buffer Out { T out_[]; };
layout(std430, binding = 2) buffer Aux { uint aux[]; };

// Offset of logical position l of column (o, i) relative to an array's start.
uint at(uint o, uint l, uint i) {
#ifdef REVERSE
    l = p.len - 1u - l;
#endif
    return (o * p.len + l) * p.inner + i;
}

void main() {
    GRID_STRIDE_LOOP(g, p.outer * p.chunks * p.inner) {
        uint i = g % p.inner;
        uint rest = g / p.inner;
        uint k = rest % p.chunks;
        uint o = rest / p.chunks;
        uint begin = k * p.chunk;
        uint end = min(begin + p.chunk, p.len);
        uint slot = p.aux_off + (o * p.chunks + k) * p.inner + i;
#if MODE == 1
        S acc = IDENTITY;
        for (uint l = begin; l < end; ++l) acc = COMBINE(acc, load_convert(in_[p.in_off + at(o, l, i)]));
        AUX_PUT(slot, acc);
#else
#ifdef HAS_PREFIX
        S run = AUX_GET(slot);
#else
        S run = IDENTITY;
#endif
        for (uint l = begin; l < end; ++l) {
            S before = run;
            run = COMBINE(run, load_convert(in_[p.in_off + at(o, l, i)]));
#ifdef EXCLUSIVE
            out_[p.out_off + at(o, l, i)] = decode(before);
#else
            out_[p.out_off + at(o, l, i)] = decode(run);
#endif
        }
#endif
    }
}
