#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "ops/conv_common.glsl"
// The transforms of Winograd's minimal filtering for 3x3 kernels (stride 1, kernel dilation 1
// on the last two axes; kernel 1 on the first), around the GEMMs of ops/conv/winograd.py:
//   forward          y_t  = GM^T [ sum_c (AT^T w_jc AT) (.) (BT d_tc BT^T) ] GM   F(TILE^2, 3x3)
//   backward-weight  dW_jc = AT [ sum_t (GM g_tj GM^T) (.) (BT d_tc BT^T) ] AT^T  F(3x3, TILE^2)
// Tiles t = (batch, first-axis output position, TILE x TILE block of output positions), t < T;
// d_tc is the ALPHA x ALPHA patch of x' (ALPHA = TILE + 2) the block's outputs read (padding,
// cropping and input-dilation holes are zeros), g_tj the cotangent block (zeros past the edge).
//   WINO_X:   V[xi][c][t] = (BT d_tc BT^T)[xi], c < CIN (all groups), t < count (zero past T).
//   WINO_G:   U[xi][j][t] = (GM g_tj GM^T)[xi], j < COUT.
//   WINO_W:   U[xi][g][c][j] = (AT^T w_jc AT)[xi] (mirrored when FLIP), weight read by strides.
//   WINO_Y:   y from M[xi][g][j][t] (count columns per row): GM^T M GM (+ bias), the block's
//             outputs inside the output.
//   WINO_OUT: dW from M[s][xi][g][j][c] in `count` partial sums: summed, AT M AT^T, into the
//             weight's layout through its strides (mirrored when FLIP).
// Interpolation points 0, 1, -1 and infinity (TILE 2: entries 0, +-1, +-1/2, exact in binary);
// TILE 4 adds 1/2 and -2: in a float32 numpy model of both problems, 2.5-3x less error than
// 0, +-1, +-2 (the choice of Barabasz et al., "Error analysis and improving the accuracy of
// Winograd convolution", 2020), still 5-10x the direct sum's.
// Push: in offset, out offset, count (tiles padded, or splits), bias offset (WINO_Y).
// Bindings: 0 in, 1 out, 2 bias (WINO_Y).
// @variants TILE=2|4 WINO_X|WINO_G|WINO_W|WINO_OUT
// @variants TILE=2|4 WINO_Y ?HAS_BIAS
#ifndef TILE
#define TILE 2
#endif
#ifndef HAS_BIAS
#define HAS_BIAS 0
#endif
#define ALPHA (TILE + 2)
#define AA (ALPHA * ALPHA)

#if TILE == 2
const float BT[AA] = float[](1, 0, -1, 0,   0, 0.5, 0.5, 0,   0, -0.5, 0.5, 0,   0, -1, 0, 1);
const float GM[ALPHA * TILE] = float[](1, 0,   1, 1,   1, -1,   0, 1);
const float AT[3 * ALPHA] = float[](1, 1, 1, 0,   0, 1, -1, 0,   0, 1, 1, 1);
#elif TILE == 4
const float BT[AA] = float[](
    1, -3.0 / 2.0, -2, 3.0 / 2.0, 1, 0,
    0, -1.0 / 3.0, 1.0 / 6.0, 5.0 / 6.0, 1.0 / 3.0, 0,
    0, -1.0 / 3.0, 5.0 / 6.0, -1.0 / 6.0, -1.0 / 3.0, 0,
    0, 32.0 / 15.0, 16.0 / 15.0, -32.0 / 15.0, -16.0 / 15.0, 0,
    0, 1.0 / 30.0, -1.0 / 15.0, -1.0 / 30.0, 1.0 / 15.0, 0,
    0, 1, -3.0 / 2.0, -2, 3.0 / 2.0, 1);
const float GM[ALPHA * TILE] = float[](1, 0, 0, 0,   1, 1, 1, 1,   1, -1, 1, -1,   1, 0.5, 0.25, 0.125,
                                      1, -2, 4, -8,   0, 0, 0, 1);
const float AT[3 * ALPHA] = float[](1, 1, 1, 1, 1, 0,   0, 1, -1, 0.5, -2, 0,   0, 1, 1, 0.25, 4, 1);
#else
#error "TILE must be 2 or 4"
#endif
// The filter-side and output-side matrices of each problem, (rows x columns) as named.
#define BT_(i, k) BT[(i) * ALPHA + (k)]   // ALPHA x ALPHA
#define GM_(i, k) GM[(i) * TILE + (k)]    // ALPHA x TILE
#define AT_(i, k) AT[(i) * ALPHA + (k)]   // 3 x ALPHA

const int TA = (SO1 + TILE - 1) / TILE;   // tiles along the last two output axes
const int TB = (SO2 + TILE - 1) / TILE;
const int T = NB * SO0 * TA * TB;         // tiles in all

layout(push_constant) uniform Push { uint in_off; uint out_off; uint count; uint b_off; } pc;
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
#define IN_N ALPHA
#define CH CIN
#define L(i, k) BT_(i, k)
#else
#define IN_N TILE
#define CH COUT
#define L(i, k) GM_(i, k)
#endif
// out[xi][ch][t] = (L v L^T)[xi] for the IN_N x IN_N block v of tile t.
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
#elif defined(WINO_W)
// e = (g, c, j), j fastest: U[xi] at xi * COUT * CIG + e (coalesced stores).
void main() {
    const uint n = uint(COUT * CIG);
    GRID_STRIDE_LOOP(e, n) {
        const int j = int(e) % COG, r = int(e) / COG;
        const int c = r % CIG, g = r / CIG;
        const int base = int(pc.in_off) + g * W_G + j * W_J + c * W_C;
        float w[3][3];
        UNROLL for (int u = 0; u < 3; ++u)
            UNROLL for (int v = 0; v < 3; ++v) w[u][v] = in_[base + weight_tap(u * 3 + v)];
        float h[ALPHA][3];  // AT^T w
        UNROLL for (int i = 0; i < ALPHA; ++i) {
            UNROLL for (int v = 0; v < 3; ++v) {
                float s = 0.0;
                UNROLL for (int u = 0; u < 3; ++u) s += AT_(u, i) * w[u][v];
                h[i][v] = s;
            }
        }
        uint dst = pc.out_off + e;
        UNROLL for (int i = 0; i < ALPHA; ++i) {
            UNROLL for (int k = 0; k < ALPHA; ++k) {
                float s = 0.0;
                UNROLL for (int v = 0; v < 3; ++v) s += h[i][v] * AT_(v, k);
                out_[dst] = s;
                dst += n;
            }
        }
    }
}
#elif defined(WINO_Y)
layout(std430, binding = 2) readonly buffer Bias { float b_[]; };
// Invocation (t, output channel jg): M[xi][jg][t] at (xi * COUT + jg) * count + t.
void main() {
    const int t = int(gl_GlobalInvocationID.x), jg = int(gl_WorkGroupID.y);
    if (t >= T) return;
    float m[ALPHA][ALPHA];
    uint src = pc.in_off + uint(jg) * pc.count + uint(t);
    const uint stride = uint(COUT) * pc.count;
    UNROLL for (int i = 0; i < ALPHA; ++i) {
        UNROLL for (int k = 0; k < ALPHA; ++k) {
            m[i][k] = in_[src];
            src += stride;
        }
    }
    float h[TILE][ALPHA];  // GM^T m
    UNROLL for (int u = 0; u < TILE; ++u) {
        UNROLL for (int k = 0; k < ALPHA; ++k) {
            float s = 0.0;
            UNROLL for (int i = 0; i < ALPHA; ++i) s += GM_(i, u) * m[i][k];
            h[u][k] = s;
        }
    }
    int n;
    ivec3 o;
    tile_coords(t, n, o);
    const float bias = HAS_BIAS != 0 ? b_[pc.b_off + jg] : 0.0;
    const int plane = int(pc.out_off) + (n * COUT + jg) * SO + o.x * SO1 * SO2;
    UNROLL for (int u = 0; u < TILE; ++u) {
        UNROLL for (int v = 0; v < TILE; ++v) {
            float s = bias;
            UNROLL for (int k = 0; k < ALPHA; ++k) s += h[u][k] * GM_(k, v);
            if (o.y + u < SO1 && o.z + v < SO2) out_[plane + (o.y + u) * SO2 + o.z + v] = s;
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
                UNROLL for (int i = 0; i < ALPHA; ++i) s += AT_(u, i) * m[i * ALPHA + k];
                h[u][k] = s;
            }
        }
        const int jg = int(e) / CIG, c = int(e) % CIG;
        const int base = int(pc.out_off) + (jg / COG) * W_G + (jg % COG) * W_J + c * W_C;
        UNROLL for (int u = 0; u < 3; ++u) {
            UNROLL for (int w = 0; w < 3; ++w) {
                float s = 0.0;
                UNROLL for (int k = 0; k < ALPHA; ++k) s += h[u][k] * AT_(w, k);
                out_[base + weight_tap(u * 3 + w)] = s;
            }
        }
    }
}
#else
#error "define WINO_X, WINO_G, WINO_W, WINO_Y or WINO_OUT"
#endif
