#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "ops/conv_common.glsl"
// Convolution backward-weight of a 3x3 kernel (stride 1, kernel dilation 1 on the last two axes;
// the first axis has kernel 1) by Winograd's minimal filtering F(3x3, TILE x TILE) (Lavin & Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2016, with the roles of the operands
// swapped: the cotangent tile is the filter, the 3x3 weight gradient the output):
//   dW[j, c] = AT ( sum_t U_t[j] (.) V_t[c] ) AT^T,   U_t = Gm g_t Gm^T,   V_t = BT d_t BT^T
// over tiles t = (batch, first output axis, TILE x TILE blocks of output positions). g_t is the
// cotangent block (zeros past the edge), d_t the ALPHA x ALPHA input patch it meets (ALPHA =
// TILE + 2; padding, cropping and input-dilation holes are zeros). The sum over tiles is ALPHA^2
// GEMMs per group, run by primitives/matmul.comp between the two transforms here: 2.25x (TILE 2)
// or 4x (TILE 4) fewer multiplications than the direct sum.
//   WINO_X:   V[xi][c][t] for c < CIN (all groups), t < TP (tiles, zero past T).
//   WINO_G:   U[xi][j][t] for j < COUT from the cotangent.
//   WINO_OUT: dW from M[s][xi][g][j][c], the GEMMs' products in `splits` partial sums: summed,
//             transformed back, written through the weight's strides (mirrored when FLIP).
// Interpolation points 0, 1, -1 (TILE 2; exact in binary: two roundings more than the direct sum)
// and 0, +-1, +-2 (TILE 4; ~17x the direct sum's float32 error in a numpy model).
// Push: WINO_X / WINO_G: in offset, out offset, TP.  WINO_OUT: M offset, dW offset, splits.
// Bindings: 0 in (x, cotangent or M), 1 out.
// @variants TILE=2|4 WINO_X|WINO_G|WINO_OUT
#ifndef TILE
#define TILE 2
#endif
#define ALPHA (TILE + 2)
#define AA (ALPHA * ALPHA)

#if TILE == 2
const float BT[AA] = float[](1, 0, -1, 0,   0, 0.5, 0.5, 0,   0, -0.5, 0.5, 0,   0, -1, 0, 1);
const float GM[ALPHA * TILE] = float[](1, 0,   1, 1,   1, -1,   0, 1);
const float AT[3 * ALPHA] = float[](1, 1, 1, 0,   0, 1, -1, 0,   0, 1, 1, 1);
#elif TILE == 4
const float BT[AA] = float[](
    1, 0, -1.25, 0, 0.25, 0,
    0, 2.0 / 3.0, 2.0 / 3.0, -1.0 / 6.0, -1.0 / 6.0, 0,
    0, -2.0 / 3.0, 2.0 / 3.0, 1.0 / 6.0, -1.0 / 6.0, 0,
    0, -1.0 / 12.0, -1.0 / 24.0, 1.0 / 12.0, 1.0 / 24.0, 0,
    0, 1.0 / 12.0, -1.0 / 24.0, -1.0 / 12.0, 1.0 / 24.0, 0,
    0, 4, 0, -5, 0, 1);
const float GM[ALPHA * TILE] = float[](1, 0, 0, 0,   1, 1, 1, 1,   1, -1, 1, -1,   1, 2, 4, 8,
                                      1, -2, 4, -8,   0, 0, 0, 1);
const float AT[3 * ALPHA] = float[](1, 1, 1, 1, 1, 0,   0, 1, -1, 2, -2, 0,   0, 1, 1, 4, 4, 1);
#else
#error "TILE must be 2 or 4"
#endif

const int TA = (SO1 + TILE - 1) / TILE;   // tiles along the last two output axes
const int TB = (SO2 + TILE - 1) / TILE;
const int T = NB * SO0 * TA * TB;         // tiles in all

layout(push_constant) uniform Push { uint in_off; uint out_off; uint count; } pc;
layout(std430, binding = 0) readonly buffer In { float in_[]; };
layout(std430, binding = 1) writeonly buffer Out { float out_[]; };

// Tile t -> (batch, first-axis position, first output position of the block).
void tile_coords(int t, out int n, out ivec3 o) {
    int b = t % TB, r = t / TB;
    int a = r % TA;
    r /= TA;
    o = ivec3(r % SO0, a * TILE, b * TILE);
    n = r / SO0;
}

#if defined(WINO_X) || defined(WINO_G)
#ifdef WINO_X
#define IN_N (TILE + 2)
#define CH CIN
#else
#define IN_N TILE
#define CH COUT
#endif
// out[xi][ch][t] = (L in L^T)[xi] for the IN_N x IN_N block `in` of tile t, L = BT or GM.
void main() {
    const int t = int(gl_GlobalInvocationID.x), ch = int(gl_WorkGroupID.y);
    if (t >= int(pc.count)) return;
    float v[IN_N][IN_N];
    int n = 0;
    ivec3 o = ivec3(0);
    if (t < T) tile_coords(t, n, o);
#ifdef WINO_X
    const ivec3 base = window_base(o);
    const int plane = (n * CIN + ch) * SI;
#else
    const int plane = (n * COUT + ch) * SO + o.x * SO1 * SO2;
#endif
    UNROLL for (int u = 0; u < IN_N; ++u) {
        UNROLL for (int w = 0; w < IN_N; ++w) {
#ifdef WINO_X
            const int off = t < T ? plane_offset(base, ivec3(0, u, w)) : -1;
#else
            const int off = (t < T && o.y + u < SO1 && o.z + w < SO2) ? (o.y + u) * SO2 + o.z + w : -1;
#endif
            v[u][w] = off < 0 ? 0.0 : in_[pc.in_off + plane + off];
        }
    }
#ifdef WINO_X
#define L(i, k) BT[(i) * ALPHA + (k)]
#else
#define L(i, k) GM[(i) * TILE + (k)]
#endif
    float h[ALPHA][IN_N];  // L v
    UNROLL for (int i = 0; i < ALPHA; ++i) {
        UNROLL for (int w = 0; w < IN_N; ++w) {
            float s = 0.0;
            UNROLL for (int u = 0; u < IN_N; ++u) s += L(i, u) * v[u][w];
            h[i][w] = s;
        }
    }
    const uint stride = uint(CH) * pc.count;
    uint dst = pc.out_off + uint(ch) * pc.count + uint(t);
    UNROLL for (int i = 0; i < ALPHA; ++i) {
        UNROLL for (int k = 0; k < ALPHA; ++k) {
            float s = 0.0;
            UNROLL for (int w = 0; w < IN_N; ++w) s += h[i][w] * L(k, w);
            out_[dst] = s;
            dst += stride;
        }
    }
}
#elif defined(WINO_OUT)
void main() {
    const uint n = uint(COUT * CIG);
    GRID_STRIDE_LOOP(e, n) {
        float m[AA];
        UNROLL for (int xi = 0; xi < AA; ++xi) m[xi] = 0.0;
        for (uint s = 0u; s < pc.count; ++s) {
            UNROLL for (int xi = 0; xi < AA; ++xi) m[xi] += in_[pc.in_off + (s * AA + xi) * n + e];
        }
        float h[3][ALPHA];  // AT m
        UNROLL for (int u = 0; u < 3; ++u) {
            UNROLL for (int k = 0; k < ALPHA; ++k) {
                float s = 0.0;
                UNROLL for (int i = 0; i < ALPHA; ++i) s += AT[u * ALPHA + i] * m[i * ALPHA + k];
                h[u][k] = s;
            }
        }
        const int jg = int(e) / CIG, c = int(e) % CIG;
        const int base = int(pc.out_off) + (jg / COG) * W_G + (jg % COG) * W_J + c * W_C;
        UNROLL for (int u = 0; u < 3; ++u) {
            UNROLL for (int w = 0; w < 3; ++w) {
                float s = 0.0;
                UNROLL for (int k = 0; k < ALPHA; ++k) s += h[u][k] * AT[w * ALPHA + k];
                out_[base + weight_tap(u * 3 + w)] = s;
            }
        }
    }
}
#else
#error "define WINO_X, WINO_G or WINO_OUT"
#endif
