#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#include "lib/common.glsl"
#include "ops/conv_common.glsl"
// The float16 operands of conv_coopmat_packed.comp, repacked so that every row of its GEMM tiles
// is a run of 16-byte vectors (8 halves), channels padded with zeros to CIGP = CIG rounded up to 8:
//   PACK_X  x (N, CIN, spatial) -> xp[n][spatial position][group][CIGP]   (channels last)
//   PACK_W  the weight as the GEMM's B, w[g, j, c, kpos] (strides W_*, conv_common.glsl) ->
//           wp[g][kpos][CIGP][COGP]   (output channels last, padded to COGP = COG rounded up to 8)
// Geometry: conv_common.glsl's specialization constants. Push: source and destination element
// offsets (the destination's a multiple of 8). Bindings: 0 source (halves), 1 destination (uvec4).
// PACK_X grid: (ceil(SI / 64), GROUPS * ceil(CIGP / 64), NB), 256 invocations, a 64 x 64 tile of
// (channel, position) transposed through shared memory: both sides coalesced.
// PACK_W grid: any (grid-stride), one 16-byte vector per invocation and round (8 halves gathered
// W_J apart). PACK_W with W_TILED, for a weight whose (channel, tap) block of each output channel
// is contiguous (W_C = KP, W_J = CIG * KP: a forward convolution's), transposes 64 x 64 tiles of
// (output channel) x (flat channel and tap) through shared memory instead: grid
// (ceil(CIGP * KP / 64), ceil(COGP / 64), GROUPS), 256 invocations.
// @variants PACK_X=1
// @variants PACK_W=1 ?W_TILED
layout(push_constant) uniform Push { int src_off; int dst_off; } pc;
layout(std430, binding = 0) readonly buffer Src { float16_t src_[]; };
layout(std430, binding = 1) writeonly buffer Dst { uvec4 dst4[]; };

const int CIGP = (CIG + 7) / 8 * 8;
const int COGP = (COG + 7) / 8 * 8;

uvec4 pack8(float16_t h[8]) {
    return uvec4(packFloat2x16(f16vec2(h[0], h[1])), packFloat2x16(f16vec2(h[2], h[3])),
                 packFloat2x16(f16vec2(h[4], h[5])), packFloat2x16(f16vec2(h[6], h[7])));
}

const int T = 64;                       // tile edge of the transposes
shared float16_t tile[T][T + 2];        // [row][column] of the source

#ifdef PACK_X
const int CBLK = (CIGP + T - 1) / T;    // channel tiles per group

void main() {
    const int t = int(gl_LocalInvocationIndex);
    const int p0 = int(gl_WorkGroupID.x) * T;
    const int g = int(gl_WorkGroupID.y) / CBLK;
    const int c0 = (int(gl_WorkGroupID.y) - g * CBLK) * T;
    const int n = int(gl_WorkGroupID.z);
    // Read: consecutive invocations along positions of one channel plane.
    for (int e = 0; e < T * T / int(WG_SIZE); ++e) {
        int idx = t + e * int(WG_SIZE);
        int c = idx / T, p = idx % T;
        float16_t v = float16_t(0.0);
        if (c0 + c < CIG && p0 + p < SI) v = src_[pc.src_off + (n * CIN + g * CIG + c0 + c) * SI + p0 + p];
        tile[c][p] = v;
    }
    barrier();
    // Write: consecutive invocations along the 8-channel vectors of one position.
    for (int e = 0; e < T * T / 8 / int(WG_SIZE); ++e) {
        int idx = t + e * int(WG_SIZE);
        int p = idx / (T / 8), c8 = idx % (T / 8);
        if (p0 + p >= SI || c0 + 8 * c8 >= CIGP) continue;
        float16_t h[8];
        for (int k = 0; k < 8; ++k) h[k] = tile[8 * c8 + k][p];
        dst4[pc.dst_off / 8 + ((n * SI + p0 + p) * GROUPS + g) * (CIGP / 8) + (c0 / 8 + c8)] = pack8(h);
    }
}
#elif defined(PACK_W) && defined(W_TILED)
void main() {
    const int t = int(gl_LocalInvocationIndex);
    const int f0 = int(gl_WorkGroupID.x) * T;   // flat (channel, tap) = c * KP + kpos, c < CIGP
    const int j0 = int(gl_WorkGroupID.y) * T;
    const int g = int(gl_WorkGroupID.z);
    // Read: consecutive invocations along (channel, tap) of one output channel (contiguous).
    for (int e = 0; e < T * T / int(WG_SIZE); ++e) {
        int idx = t + e * int(WG_SIZE);
        int jj = idx / T, f = f0 + idx % T;
        float16_t v = float16_t(0.0);
        if (j0 + jj < COG && f < CIG * KP) v = src_[pc.src_off + g * W_G + (j0 + jj) * W_J + f];
        tile[jj][idx % T] = v;
    }
    barrier();
    // Write: consecutive invocations along the output channels of one (channel, tap) row.
    for (int e = 0; e < T * T / 8 / int(WG_SIZE); ++e) {
        int idx = t + e * int(WG_SIZE);
        int ff = idx / (T / 8), j8 = idx % (T / 8);
        int f = f0 + ff;
        if (f >= CIGP * KP || j0 + 8 * j8 >= COGP) continue;
        int c = f / KP, kpos = f - c * KP;
        float16_t h[8];
        for (int k = 0; k < 8; ++k) h[k] = tile[8 * j8 + k][ff];
        dst4[pc.dst_off / 8 + ((g * KP + kpos) * CIGP + c) * (COGP / 8) + j0 / 8 + j8] = pack8(h);
    }
}
#elif defined(PACK_W)
void main() {
    const int total = GROUPS * KP * CIGP * (COGP / 8);
    const int stride = int(gl_NumWorkGroups.x * WG_SIZE);
    for (int idx = int(gl_GlobalInvocationID.x); idx < total; idx += stride) {
        int j8 = idx % (COGP / 8);
        int r = idx / (COGP / 8);
        int c = r % CIGP;
        r /= CIGP;
        int kpos = r % KP, g = r / KP;
        float16_t h[8];
        for (int k = 0; k < 8; ++k) {
            int j = 8 * j8 + k;
            h[k] = (c < CIG && j < COG) ? src_[pc.src_off + g * W_G + j * W_J + c * W_C + kpos] : float16_t(0.0);
        }
        dst4[pc.dst_off / 8 + idx] = pack8(h);
    }
}
#endif
