#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#include "lib/common.glsl"
#include "ops/conv_common.glsl"
// float16 convolution forward (and backward-input) by implicit GEMM on cooperative matrices, on
// operands repacked by conv_pack.comp: x channels-last, xp[n][position][group][CIGP], and the
// weight as wp[g][kpos][CIGP][COGP]. Y[m, j] = sum over (tap, channel) of A[m, (tap, c)] B[(tap, c), j]
// with rows m = (batch, output position). A reduction step is one tap and BK channels, so a row
// of the A tile is BK consecutive halves of xp at one input position (or zeros on padding), and
// a row of the B tile BN consecutive halves of wp: every load and shared-memory store moves 16
// bytes, and a row's bounds are checked once per vector. (conv_coopmat.comp gathers halves one
// by one from the original layouts: the first layers with few channels.)
//
// Tiles: BM x BN per workgroup, SG_M x SG_N subgroups of SGS invocations, each owning a
// (BM / SG_M) x (BN / SG_N) block of 16 x 16 float32 accumulators. Shared tiles are row-major
// (A: m, k; B: k, j), rows padded by one vector against bank conflicts, double-buffered; the
// global loads of step s + 1 are in flight during the products of step s. (H100: two steps in
// flight, in a second register set, ran 8-11 % slower.)
// Defines: BM, BN (multiples of 16 per subgroup), BK (a multiple of 16), SG_M, SG_N, SGS,
// STAGES (lib/staged_steps.glsl: 2 double-buffers the tiles as above, 1 does not), PHASED
// (conv_gemm_view.glsl), HAS_BIAS.
// Bindings: 0 xp (uvec4), 1 wp (uvec4), 2 b (a dummy without bias), 3 y.
// Push: xp, wp (element offsets, multiples of 8), b, y element offsets.
// Grid: x over row tiles (looping), y over channel tiles, z groups (times phases).
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 32
#endif
#ifndef SG_M
#define SG_M 4
#endif
#ifndef SG_N
#define SG_N 2
#endif
#ifndef SGS
#define SGS 32
#endif
#ifndef PHASED
#define PHASED 0
#endif
#ifndef HAS_BIAS
#define HAS_BIAS 0
#endif
// @variants ?HAS_BIAS
// @variants PHASED=1 BM=64 BN=32 BK=16 SG_M=2 SG_N=1

#define NSUBGROUPS (SG_M * SG_N)
#define NTHREADS (NSUBGROUPS * SGS)
#define WTM (BM / SG_M)        // rows of one subgroup's block
#define WTN (BN / SG_N)        // columns of one subgroup's block
#define FM (WTM / 16)
#define FN (WTN / 16)
// The tiles (ops/conv_coopmat_stage.glsl): A is BM rows m of BK channels, B BK channels of BN.
#define A_ROWS BM
#define A_COLS BK
#define B_ROWS BK
#define B_COLS BN

const int CIGP = (CIG + 7) / 8 * 8;
const int COGP = (COG + 7) / 8 * 8;
const int XROW = GROUPS * CIGP / 8;   // vectors per input position of xp

layout(push_constant) uniform Push { int x_off; int w_off; int b_off; int y_off; } pc;
layout(std430, binding = 0) readonly buffer X { uvec4 xp[]; };
layout(std430, binding = 1) readonly buffer W { uvec4 wp[]; };
layout(std430, binding = 2) readonly buffer B { float16_t b_[]; };
layout(std430, binding = 3) writeonly buffer Y { float16_t y_[]; };

#include "ops/conv_coopmat_stage.glsl"
#include "ops/conv_gemm_view.glsl"
#include "ops/conv_coopmat_epilogue.glsl"

// This invocation's rows of the A tile (fixed across steps: NTHREADS is a multiple of AV_ROW) and
// its vector within a row; likewise for B.
int a_row_x[AV];       // xp vector of (batch, group, channel vector) at position 0, or -1 past the last row
ivec3 a_row_base[AV];  // first input coordinate per axis (row_window)

// Step s = (tap, channel chunk): the A and B vectors of this invocation, zeros outside.
void load_step(int s, int t, int g, int j0, inout Regs r) {
    int kpos = s / CSTEPS;
    int c0 = (s - kpos * CSTEPS) * BK;
    ivec3 taps = tap_of(kpos);
    int c = c0 + 8 * (t % AV_ROW);
    UNROLL for (int e = 0; e < AV; ++e) {
        int off = plane_of(a_row_base[e], taps);
        bool ok = a_row_x[e] >= 0 && off >= 0 && c < CIGP && t + e * NTHREADS < BM * AV_ROW;
        r.a[e] = ok ? xp[a_row_x[e] + off * XROW + c / 8] : uvec4(0u);
    }
    int wrow = pc.w_off / 8 + ((g * KP + weight_of(kpos)) * CIGP + c0) * (COGP / 8) + j0 / 8;
    UNROLL for (int e = 0; e < BV; ++e) {
        int idx = t + e * NTHREADS;
        int k = idx / BV_ROW, j8 = idx % BV_ROW;
        bool ok = idx < BK * BV_ROW && c0 + k < CIGP && j0 + 8 * j8 < COGP;
        r.b[e] = ok ? wp[wrow + k * (COGP / 8) + j8] : uvec4(0u);
    }
}

void multiply(int buf, int sm, int sn, inout ACC acc[FM * FN]) {
    UNROLL for (int kk = 0; kk < BK; kk += 16) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a[FM];
        UNROLL for (int i = 0; i < FM; ++i)
            coopMatLoad(a[i], As, buf * A_TILE + (sm * WTM + i * 16) * LDA + kk / 8, LDA,
                        gl_CooperativeMatrixLayoutRowMajor);
        UNROLL for (int j = 0; j < FN; ++j) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
            coopMatLoad(b, Bs, buf * B_TILE + kk * LDB + (sn * WTN + j * 16) / 8, LDB,
                        gl_CooperativeMatrixLayoutRowMajor);
            UNROLL for (int i = 0; i < FM; ++i) acc[i * FN + j] = coopMatMulAdd(a[i], b, acc[i * FN + j]);
        }
    }
}

void main() {
    const int t = int(gl_LocalInvocationIndex);
    const int sg = t / SGS;
    const int sm = sg % SG_M;
    const int sn = sg / SG_M;
#if PHASED
    const int g = int(gl_WorkGroupID.z) / NPHASES;
    phase_setup(int(gl_WorkGroupID.z) - g * NPHASES);
#else
    const int g = int(gl_WorkGroupID.z);
#endif
    const int j0 = int(gl_WorkGroupID.y) * BN;
    const int tiles_m = (G_ROWS + BM - 1) / BM;
    const int nsteps = G_KP * CSTEPS;

    for (int tile = int(gl_WorkGroupID.x); tile < tiles_m; tile += int(gl_NumWorkGroups.x)) {
        const int m0 = tile * BM;
        UNROLL for (int e = 0; e < AV; ++e) {
            int m = m0 + (t + e * NTHREADS) / AV_ROW;
            int n = m / G_SO;
            a_row_base[e] = row_window(m - n * G_SO);
            a_row_x[e] = m < G_ROWS ? pc.x_off / 8 + n * SI * XROW + g * (CIGP / 8) : -1;
        }
        const int lane = t % SGS;
        ACC acc[FM * FN];
        UNROLL for (int j = 0; j < FN; ++j) {
            ACC c = start_fragment(sg, lane, j0 + sn * WTN + j * 16, g);
            UNROLL for (int i = 0; i < FM; ++i) acc[i * FN + j] = c;
        }

        Regs r;
#define LOAD(s) load_step(s, t, g, j0, r)
#define STORE(buf) store_step(buf, t, r)
#define MULTIPLY(buf) multiply(buf, sm, sn, acc)
        STAGED_STEPS(nsteps, LOAD, STORE, MULTIPLY)
        UNROLL for (int i = 0; i < FM; ++i)
            UNROLL for (int j = 0; j < FN; ++j)
                store_fragment(acc[i * FN + j], sg, lane, m0 + sm * WTM + i * 16, j0 + sn * WTN + j * 16, g);
    }
}
