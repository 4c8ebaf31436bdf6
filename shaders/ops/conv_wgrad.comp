#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#if HALF_IN
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#define ELEM float16_t
#else
#define ELEM float
#endif
#include "lib/common.glsl"
#include "ops/conv_common.glsl"
// Convolution backward-weight by implicit GEMM:
//   dW[p, j] = sum_r A[r, p] * G[r, j]     per group g,
// p = (input channel of the group, weight tap) over KTOT in the weight's own order, j = output
// channel of the group over COG, r = (batch, output position) over MROWS. A[r, p] is the input
// element that tap meets at output position r (gathered by index math, zeros for padding and
// holes); G[r, j] the cotangent. The reduction over r is split SPLITS ways (workgroup z =
// g * SPLITS + split, SPLIT_STEPS steps of BK each); split s writes its partial sums at
// s * WTOT, laid out as the weight (strides W_G, W_J, W_C), and conv_reduce.comp adds them.
//
// Defines: BM (tile over p), BN (over j), BK (reduction rows per stage), TM, TN (multiples of 4);
// HALF_IN: x and the cotangent are float16 (widened as they are loaded; the sums stay float32).
// Bindings: 0 x, 1 cotangent, 2 out (dW or partials).   Push: x, cotangent, out element offsets.
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 32
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
#endif
// @variants BM=64 BN=32 BK=8 TM=4 TN=4 ?NO_UNROLL
// @variants BM=128 BN=64 BK=16 TM=8 TN=4 ?HALF_IN
// @variants BM=32 BN=32 BK=8 TM=4 TN=4 NO_UNROLL HALF_IN=1

#define NT_M (BM / TM)
#define NT_N (BN / TN)
#define NTHREADS (NT_M * NT_N)
// Both loaders: LK invocations along r (consecutive output positions: coalesced reads), the rest
// along p (A) or j (B).
#define LK (BK < NTHREADS ? BK : NTHREADS)
#define LP (NTHREADS / LK)
#define QK (BK / LK)
#define PA ((BM + LP - 1) / LP)
#define PB ((BN + LP - 1) / LP)
// Tile rows padded by a vec4: the loaders store down columns (fewer bank conflicts).
#define AROW (BM / 4 + 1)
#define BROW (BN / 4 + 1)

layout(push_constant) uniform Push { int x_off; int g_off; int o_off; } pc;
layout(std430, binding = 0) readonly buffer X { ELEM x_[]; };
layout(std430, binding = 1) readonly buffer G { ELEM g_[]; };
layout(std430, binding = 2) writeonly buffer O { float o_[]; };

shared vec4 As[2 * BK * AROW];
shared vec4 Bs[2 * BK * BROW];

const int NSTEPS = (MROWS + BK - 1) / BK;

// Per-invocation column state of the A loader (fixed for the workgroup).
int col_x[PA];       // channel-plane offset (c * SI), or -1 past the last column
ivec3 col_taps[PA];  // tap offsets (kernel coordinate times kernel dilation) per axis
float ra[QK * PA];
float rb[QK * PB];

void load(int step, int lk, int lp, int xg, int gg, int j0) {
    UNROLL for (int q = 0; q < QK; ++q) {
        int r = step * BK + lk + q * LK;
        int n = r / SO;
        int o = r - n * SO;
        bool rok = r < MROWS;
        ivec3 base = window_base(out_coords(o));
        int xb = xg + n * CIN * SI;
        UNROLL for (int i = 0; i < PA; ++i) {
            int off = plane_offset(base, col_taps[i]);
            float v = 0.0;
            if (rok && col_x[i] >= 0 && off >= 0) v = float(x_[xb + col_x[i] + off]);
            ra[q * PA + i] = v;
        }
        int gb = gg + n * COUT * SO + o;
        UNROLL for (int i = 0; i < PB; ++i) {
            int j = j0 + lp + i * LP;
            float v = 0.0;
            if (rok && j < COG && lp + i * LP < BN) v = float(g_[gb + j * SO]);
            rb[q * PB + i] = v;
        }
    }
}

void store_tiles(int buf, int lk, int lp) {
    UNROLL for (int q = 0; q < QK; ++q) {
        int k = lk + q * LK;
        UNROLL for (int i = 0; i < PA; ++i) {
            int p = lp + i * LP;
            if (p < BM) As[buf * (BK * AROW) + k * AROW + p / 4][p % 4] = ra[q * PA + i];
        }
        UNROLL for (int i = 0; i < PB; ++i) {
            int j = lp + i * LP;
            if (j < BN) Bs[buf * (BK * BROW) + k * BROW + j / 4][j % 4] = rb[q * PB + i];
        }
    }
}

void main() {
    const int t = int(gl_LocalInvocationIndex);
    const int tm = t % NT_M;
    const int tn = t / NT_M;
    const int lk = t % LK;
    const int lp = t / LK;
    const int g = int(gl_WorkGroupID.z) / SPLITS;
    const int split = int(gl_WorkGroupID.z) - g * SPLITS;
    const int p0 = int(gl_WorkGroupID.x) * BM;
    const int j0 = int(gl_WorkGroupID.y) * BN;
    const int xg = pc.x_off + g * CIG * SI;
    const int gg = pc.g_off + g * COG * SO;

    UNROLL for (int i = 0; i < PA; ++i) {
        int p = p0 + lp + i * LP;
        int c = p / KP;
        col_taps[i] = tap_offsets(weight_tap(p - c * KP));
        col_x[i] = (p < KTOT && lp + i * LP < BM) ? c * SI : -1;
    }

    const int s_begin = split * SPLIT_STEPS;
    const int s_end = min(s_begin + SPLIT_STEPS, NSTEPS);

    vec4 acc[(TM / 4) * TN];
    UNROLL for (int i = 0; i < (TM / 4) * TN; ++i) acc[i] = vec4(0.0);

    if (s_begin < s_end) {
        load(s_begin, lk, lp, xg, gg, j0);
        store_tiles(0, lk, lp);
    }
    barrier();
    LOOP for (int step = s_begin; step < s_end; ++step) {
        const int buf = (step - s_begin) & 1;
        const bool more = step + 1 < s_end;
        if (more) load(step + 1, lk, lp, xg, gg, j0);
        const int abase = buf * (BK * AROW);
        const int bbase = buf * (BK * BROW);
        UNROLL for (int k = 0; k < BK; ++k) {
            vec4 a[TM / 4];
            UNROLL for (int i = 0; i < TM / 4; ++i) a[i] = As[abase + k * AROW + tm + i * NT_M];
            UNROLL for (int jv = 0; jv < TN / 4; ++jv) {
                vec4 b = Bs[bbase + k * BROW + tn + jv * NT_N];
                UNROLL for (int i = 0; i < TM / 4; ++i) {
                    acc[i * TN + jv * 4 + 0] += a[i] * b.x;
                    acc[i * TN + jv * 4 + 1] += a[i] * b.y;
                    acc[i * TN + jv * 4 + 2] += a[i] * b.z;
                    acc[i * TN + jv * 4 + 3] += a[i] * b.w;
                }
            }
        }
        if (more) store_tiles(buf ^ 1, lk, lp);
        barrier();
    }

    // Rows p = p0 + (tm + i*NT_M)*4 + e, columns j = j0 + (tn + jv*NT_N)*4 + jj.
    const int obase = pc.o_off + split * WTOT + g * W_G;
    UNROLL for (int jv = 0; jv < TN / 4; ++jv) {
        UNROLL for (int jj = 0; jj < 4; ++jj) {
            int j = j0 + (tn + jv * NT_N) * 4 + jj;
            if (j >= COG) continue;
            UNROLL for (int i = 0; i < TM / 4; ++i) {
                vec4 v = acc[i * TN + jv * 4 + jj];
                int pb = p0 + (tm + i * NT_M) * 4;
                UNROLL for (int e = 0; e < 4; ++e) {
                    int p = pb + e;
                    if (p < KTOT) {
                        int c = p / KP;
                        o_[obase + j * W_J + c * W_C + (p - c * KP)] = v[e];
                    }
                }
            }
        }
    }
}
