#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#include "lib/common.glsl"
#include "ops/conv_common.glsl"
// float16 convolution forward (and backward-input) by implicit GEMM on cooperative matrices
// (VK_KHR_cooperative_matrix): the GEMM of conv_gemm.comp, Y[m, j] = sum_kk A[m, kk] B[kk, j],
// with x, w and y in float16 and float32 accumulation. Tiles of A and B are gathered as in
// conv_gemm.comp (ops/conv_gather.glsl) into shared memory, double-buffered; each subgroup owns a
// (BM / SG_M) x (BN / SG_N) block of the BM x BN tile as 16 x 16 accumulators and multiplies
// 16 x 16 x 16 fragments loaded from the shared tiles.
//
// Defines: BM, BN, BK (multiples of 16; BM/SG_M and BN/SG_N too), SG_M x SG_N subgroups of SGS
// invocations per workgroup (the workgroup size is SG_M * SG_N * SGS: the planner uses this
// kernel only where the device's subgroup size is fixed, and passes it as SGS), GATHER (0 flat,
// 1 uniform, 2 table with TABLE_N entries), PHASED, B_J_FAST, HAS_BIAS as in conv_gemm.comp.
// Bindings: 0 x, 1 w, 2 b (a dummy without bias), 3 y.  Push: x, w, b, y element offsets.
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
#ifndef GATHER
#define GATHER 0
#endif
#ifndef PHASED
#define PHASED 0
#endif
#ifndef B_J_FAST
#define B_J_FAST 0
#endif
#ifndef HAS_BIAS
#define HAS_BIAS 0
#endif
#if PHASED && GATHER == 2
#error "the table gather has no input dilation: PHASED does not apply"
#endif
// @variants GATHER=0|1 ?HAS_BIAS
// @variants GATHER=0|1 PHASED=1 B_J_FAST=1
// @variants BM=64 BN=64 BK=16 SG_M=2 SG_N=2 GATHER=1
// @variants GATHER=2 TABLE_N=160 HAS_BIAS=1

#define ELEM float16_t
#define NSUBGROUPS (SG_M * SG_N)
#define NTHREADS (NSUBGROUPS * SGS)
#define WTM (BM / SG_M)        // rows of one subgroup's block
#define WTN (BN / SG_N)        // columns of one subgroup's block
#define FM (WTM / 16)
#define FN (WTN / 16)
// Loader layout: LA_M invocations along rows (consecutive output positions: coalesced).
#define LA_M (BM < NTHREADS ? BM : NTHREADS)
#define LA_K (NTHREADS / LA_M)
#define RA (BM / LA_M)
#define QA ((BK + LA_K - 1) / LA_K)
#define EB ((BK * BN + NTHREADS - 1) / NTHREADS)
// Shared tiles, column-major for the fragments: A (m, k) at k * LDA + m, B (k, j) at j * LDB + k.
// Rows padded by 8 halves (16 bytes) against bank conflicts, keeping 16-byte aligned strides.
#define LDA (BM + 8)
#define LDB (BK + 8)
#define A_TILE (BK * LDA)
#define B_TILE (BN * LDB)

layout(push_constant) uniform Push { int x_off; int w_off; int b_off; int y_off; } pc;
layout(std430, binding = 0) readonly buffer X { float16_t x_[]; };
layout(std430, binding = 1) readonly buffer W { float16_t w_[]; };
layout(std430, binding = 2) readonly buffer B { float16_t b_[]; };
layout(std430, binding = 3) writeonly buffer Y { float16_t y_[]; };

shared float16_t As[2 * A_TILE];
shared float16_t Bs[2 * B_TILE];

#include "ops/conv_gemm_view.glsl"
#include "ops/conv_gather.glsl"
#include "ops/conv_coopmat_epilogue.glsl"

void store_tiles(int buf, int t, int la_m, int la_k) {
    UNROLL for (int r = 0; r < RA; ++r) {
        UNROLL for (int q = 0; q < QA; ++q) {
            int k = la_k + q * LA_K;
            if (k < BK) As[buf * A_TILE + k * LDA + la_m + r * LA_M] = ra[r * QA + q];
        }
    }
    UNROLL for (int e = 0; e < EB; ++e) {
        int idx = t + e * NTHREADS;
        if (idx < BK * BN) {
            ivec2 kj = b_elem(idx);
            Bs[buf * B_TILE + kj.y * LDB + kj.x] = rb[e];
        }
    }
}

void main() {
    const int t = int(gl_LocalInvocationIndex);
    const int sg = t / SGS;
    const int sm = sg % SG_M;
    const int sn = sg / SG_M;
    const int la_m = t % LA_M;
    const int la_k = t / LA_M;
#if PHASED
    const int g = int(gl_WorkGroupID.z) / NPHASES;
    phase_setup(int(gl_WorkGroupID.z) - g * NPHASES);
#else
    const int g = int(gl_WorkGroupID.z);
#endif
    const int j0 = int(gl_WorkGroupID.y) * BN;
    const int wbase = pc.w_off + g * W_G;
    const int tiles_m = (G_ROWS + BM - 1) / BM;
#if GATHER == 1
    const int nsteps = G_KP * CSTEPS;
#else
    const int nsteps = (G_KTOT + BK - 1) / BK;
#endif
#if GATHER == 2
    gather_table(t);
    barrier();
#endif

    for (int tile = int(gl_WorkGroupID.x); tile < tiles_m; tile += int(gl_NumWorkGroups.x)) {
        const int m0 = tile * BM;
        UNROLL for (int r = 0; r < RA; ++r) {
            int m = m0 + la_m + r * LA_M;
            int n = m / G_SO;
            ivec3 b = row_window(m - n * G_SO);
            row_base[r] = b;
            row_lin[r] = (b.x * SI1 + b.y) * SI2 + b.z;
            row_x[r] = m < G_ROWS ? pc.x_off + (n * CIN + g * CIG) * SI : -1;
        }

        const int lane = t % SGS;
        ACC acc[FM * FN];
        UNROLL for (int j = 0; j < FN; ++j) {
            ACC c = start_fragment(sg, lane, j0 + sn * WTN + j * 16, g);
            UNROLL for (int i = 0; i < FM; ++i) acc[i * FN + j] = c;
        }

        if (nsteps > 0) {
            load_a(0, la_k);
            load_b(0, t, wbase, j0);
            store_tiles(0, t, la_m, la_k);
        }
        barrier();
        LOOP for (int step = 0; step < nsteps; ++step) {
            const int buf = step & 1;
            const bool more = step + 1 < nsteps;
            if (more) {  // the next tiles' loads are in flight during this step's products
                load_a(step + 1, la_k);
                load_b(step + 1, t, wbase, j0);
            }
            UNROLL for (int kk = 0; kk < BK; kk += 16) {
                coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a[FM];
                UNROLL for (int i = 0; i < FM; ++i)
                    coopMatLoad(a[i], As, buf * A_TILE + kk * LDA + sm * WTM + i * 16, LDA,
                                gl_CooperativeMatrixLayoutColumnMajor);
                UNROLL for (int j = 0; j < FN; ++j) {
                    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
                    coopMatLoad(b, Bs, buf * B_TILE + (sn * WTN + j * 16) * LDB + kk, LDB,
                                gl_CooperativeMatrixLayoutColumnMajor);
                    UNROLL for (int i = 0; i < FM; ++i) acc[i * FN + j] = coopMatMulAdd(a[i], b, acc[i * FN + j]);
                }
            }
            if (more) store_tiles(buf ^ 1, t, la_m, la_k);
            barrier();
        }

        UNROLL for (int i = 0; i < FM; ++i)
            UNROLL for (int j = 0; j < FN; ++j)
                store_fragment(acc[i * FN + j], sg, lane, m0 + sm * WTM + i * 16, j0 + sn * WTN + j * 16, g);
    }
}
