#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
// probe: the radix sort's tile loop reduced to stages (S: 0 copy, 1 + shared staging, 2 + extra
// barriers and counter clears, 3 + the per-digit loops)
#ifndef ITEMS
#define ITEMS 8
#endif
#ifndef S
#define S 0
#endif
layout(push_constant) uniform Push { uint n; uint blocks; uint tiles_per_block; } p;
layout(std430, binding = 0) restrict readonly buffer KeysIn { uint keys_in[]; };
layout(std430, binding = 1) writeonly buffer KeysOut { uint keys_out[]; };
const uint TILE = WG_SIZE * ITEMS;
#ifdef FIXED
shared uint tile_keys[256 * ITEMS];
#else
shared uint tile_keys[TILE];
#endif
shared uint sg_counts[8 * 256];
shared uint digit_next[256];
void main() {
    uint block = gl_WorkGroupID.x;
    if (block >= p.blocks) return;
    uint lid = gl_LocalInvocationIndex;
    uint first = block * p.tiles_per_block * TILE;
    uint end = min(first + p.tiles_per_block * TILE, p.n);
#if S >= 3
    for (uint d = lid; d < 256u; d += WG_SIZE) digit_next[d] = 0u;
    barrier();
#endif
    for (uint base = first; base < end; base += TILE) {
        uint keys[ITEMS];
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
            uint e = base + k * WG_SIZE + lid;
            keys[k] = e < end ? keys_in[e] : 0u;
        }
#if S >= 2
        for (uint i = lid; i < 8u * 256u; i += WG_SIZE) sg_counts[i] = 0u;
        barrier();
        barrier();
#endif
#if S >= 1
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) tile_keys[(k * WG_SIZE + lid) ^ (keys[k] & 31u)] = keys[k];
        barrier();
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) keys[k] = tile_keys[k * WG_SIZE + lid];
#endif
#if S >= 2
        barrier();
        barrier();
#endif
#if S >= 3
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) keys[k] += digit_next[keys[k] & 255u];
#endif
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
            uint e = base + k * WG_SIZE + lid;
            if (e < end) keys_out[e] = keys[k];
        }
#if S >= 1
        barrier();
#endif
#if S >= 3
        for (uint d = lid; d < 256u; d += WG_SIZE) digit_next[d] += 1u;
        barrier();
#endif
    }
}
