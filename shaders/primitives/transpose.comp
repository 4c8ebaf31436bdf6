#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
// @variants
// @variants WINDOWED
// Batched transpose of the last two axes: out[b, c, r] = in[b, r, c] for in of shape (B, R, C),
// both C-contiguous, elements moved as bits: 32-bit words, or T_MOVE (primitives/moves.py:
// uint8_t, uint16_t, uvec2) held in the tile as T_TILE (uint, or uvec2).
// A workgroup moves TILE x TILE tiles through shared memory so that both the reads (along c) and
// the writes (along r) are consecutive in memory; the +1 column of padding makes the column-wise
// reads of the tile hit TILE different banks. Workgroups loop over the B * tiles_r * tiles_c tiles,
// so any shape fits in a capped 1-D grid.
// Spec constant 0 (workgroup size) must be a multiple of TILE.
// WINDOWED (primitives/windows.py): a box of a larger transpose, each side bound as a window of
// a buffer larger than a shader may bind: in[b, r, c] at in_off + b * plane + r * in_pitch + c,
// out[b, c, r] at out_off + b * plane + c * out_pitch + r (offsets relative to what is bound).
// Bindings: 0 out, 1 in. Push: B, R, C, in offset, out offset, tiles_r, tiles_c; WINDOWED adds
// in_pitch, out_pitch, plane.
#define TILE 32u
layout(push_constant) uniform Push {
    uint batch; uint rows; uint cols; uint in_off; uint out_off; uint tiles_r; uint tiles_c;
#ifdef WINDOWED
    uint in_pitch; uint out_pitch; uint plane;
#endif
} p;
#ifdef WINDOWED
#define PLANE p.plane
#define IN_PITCH p.in_pitch
#define OUT_PITCH p.out_pitch
#else
#define PLANE p.rows * p.cols
#define IN_PITCH p.cols
#define OUT_PITCH p.rows
#endif

#ifndef T_MOVE
#define T_MOVE uint
#define T_TILE uint
#endif
layout(std430, binding = 0) writeonly buffer Out { T_MOVE out_[]; };
layout(std430, binding = 1) readonly buffer In { T_MOVE in_[]; };

shared T_TILE tile[TILE][TILE + 1u];

void main() {
    const uint rows_per_pass = WG_SIZE / TILE;
    uint lx = gl_LocalInvocationIndex % TILE;
    uint ly = gl_LocalInvocationIndex / TILE;
    uint per_batch = p.tiles_r * p.tiles_c;
    uint total = p.batch * per_batch;
    for (uint t = gl_WorkGroupID.x; t < total; t += gl_NumWorkGroups.x) {  // uniform per workgroup
        uint b = t / per_batch;
        uint tr = (t % per_batch) / p.tiles_c;
        uint tc = t % p.tiles_c;
        uint plane = b * PLANE;
        uint r0 = tr * TILE, c0 = tc * TILE;
        for (uint y = ly; y < TILE; y += rows_per_pass) {
            uint r = r0 + y, c = c0 + lx;
            if (r < p.rows && c < p.cols) tile[y][lx] = T_TILE(in_[p.in_off + plane + r * IN_PITCH + c]);
        }
        barrier();
        for (uint y = ly; y < TILE; y += rows_per_pass) {
            uint c = c0 + y, r = r0 + lx;  // output row c, column r
            if (c < p.cols && r < p.rows) out_[p.out_off + plane + c * OUT_PITCH + r] = T_MOVE(tile[lx][y]);
        }
        barrier();  // the tile is rewritten by the next iteration
    }
}
