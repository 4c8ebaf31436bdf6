#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
// @variants
// Column sums of the backward's partials: for each k, out[k * D + c] = sum over g of
// part[k][g][c], c < D. The partials are [K][G][PS4] vec4s (rows padded to a multiple of 4).
// A workgroup takes COLS vec4 columns; its WG_SIZE / COLS slices of invocations split the G rows,
// then a shared-memory tree adds the slices. Columns are grid-strided in tiles.
layout(constant_id = 2) const uint COLS = 16u;  // vec4 columns per workgroup; WG_SIZE / COLS a power of two
layout(push_constant) uniform Push {
    uint g;       // partial rows per k
    uint ps4;     // vec4s per partial row
    uint ncols;   // K * ps4: vec4 columns over every k
    uint d;       // valid columns per k (D)
    uint out_off;
} p;

layout(std430, binding = 0) restrict readonly buffer Part { vec4 part_[]; };
layout(std430, binding = 1) restrict writeonly buffer Out { float out_[]; };

shared vec4 red[WG_SIZE];

void main() {
    const uint lid = gl_LocalInvocationIndex;
    const uint cx = lid % COLS, ry = lid / COLS, slices = WG_SIZE / COLS;
    for (uint tile = gl_WorkGroupID.x; tile * COLS < p.ncols; tile += gl_NumWorkGroups.x) {
        const uint c = tile * COLS + cx;
        const uint k = c / p.ps4, c4 = c % p.ps4;
        vec4 acc = vec4(0.0);
        if (c < p.ncols) {
            const uint base = k * p.g * p.ps4 + c4;
            // four loads in flight per invocation
            vec4 a1 = vec4(0.0), a2 = vec4(0.0), a3 = vec4(0.0);
            uint r = ry;
            for (; r + 3u * slices < p.g; r += 4u * slices) {
                acc += part_[base + r * p.ps4];
                a1 += part_[base + (r + slices) * p.ps4];
                a2 += part_[base + (r + 2u * slices) * p.ps4];
                a3 += part_[base + (r + 3u * slices) * p.ps4];
            }
            for (; r < p.g; r += slices) acc += part_[base + r * p.ps4];
            acc = (acc + a1) + (a2 + a3);
        }
        red[lid] = acc;
        barrier();
        for (uint s = slices >> 1; s > 0u; s >>= 1) {
            if (ry < s) red[lid] += red[lid + s * COLS];
            barrier();
        }
        if (ry == 0u && c < p.ncols) {
            const vec4 v = red[lid];
            [[unroll]] for (uint e = 0u; e < 4u; ++e) {
                const uint col = c4 * 4u + e;
                if (col < p.d) out_[p.out_off + k * p.d + col] = v[e];
            }
        }
        barrier();
    }
}
