#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#include "lib/common.glsl"
#include "ops/conv_common.glsl"
// float16 convolution backward-weight on cooperative matrices, float32 accumulation, on
// channels-last copies (conv_pack.comp) of the input, xp[n][position][group][CIGP], and of the
// cotangent, gp[n][output position][group][COGP]. Per group and weight tap a GEMM:
//   dW[j, c, tap] = sum over rows m = (batch, output position) of G[m, j] X[m, c]
// where X[m, c] is the input at the position row m reads through this tap (zero on padding and
// holes; mirrored with FLIP). A step is BK rows m: a row of the G tile is BM consecutive halves
// of gp, a row of the X tile BN consecutive halves of xp, both moved as 16-byte vectors into
// shared memory (row-major: m, j and m, c); G is read as the GEMM's A in column-major order.
// The rows are split across workgroups (SPLIT_STEPS steps each; conv_common.glsl): split s
// writes float32 partial sums in the GEMM's order, part[s][g][tap][j][c] (c fastest: whole
// fragments stored straight from the accumulators).
// FINISH (a second dispatch, grid-stride over WTOT): dw = the sum of the splits, in the
// weight's layout (strides W_G, W_J, W_C), rounded to float16.
// Defines: BM (output channels per tile), BN (input channels per tile), BK (rows per step), all
// multiples of 16 per subgroup; SG_M x SG_N subgroups of SGS invocations.
// Bindings: 0 xp (uvec4), 1 gp (uvec4), 2 part (float). Push: xp, gp element offsets (multiples
// of 8), part element offset. Grid: (channel tiles: output x input, KP taps, GROUPS * SPLITS).
// FINISH bindings: 0 part, 1 dw (float16). Push: part, dw element offsets.
#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 32
#endif
#ifndef SG_M
#define SG_M 2
#endif
#ifndef SG_N
#define SG_N 2
#endif
#ifndef SGS
#define SGS 32
#endif
// @variants
// @variants BM=128 BN=128 SG_M=2 SG_N=4
// @variants FINISH=1

#ifdef FINISH
layout(push_constant) uniform Push { int part_off; int dw_off; } pc;
layout(std430, binding = 0) readonly buffer Part { float part_[]; };
layout(std430, binding = 1) writeonly buffer DW { float16_t dw_[]; };

void main() {
    GRID_STRIDE_LOOP(i, uint(WTOT)) {  // i in the GEMM's order: read coalesced
        float sum = 0.0;
        for (int k = 0; k < SPLITS; ++k) sum += part_[pc.part_off + k * WTOT + int(i)];
        int c = int(i) % CIG;
        int r = int(i) / CIG;
        int j = r % COG;
        r /= COG;
        int kpos = r % KP, g = r / KP;
        dw_[pc.dw_off + g * W_G + j * W_J + c * W_C + kpos] = float16_t(sum);
    }
}
#else

#define NTHREADS (SG_M * SG_N * SGS)
#define WTM (BM / SG_M)
#define WTN (BN / SG_N)
#define FM (WTM / 16)
#define FN (WTN / 16)
// The tiles (ops/conv_coopmat_stage.glsl): A is BK rows m of BM output channels (the cotangent),
// B BK rows m of BN input channels (x).
#define A_ROWS BK
#define A_COLS BM
#define B_ROWS BK
#define B_COLS BN

const int CIGP = (CIG + 7) / 8 * 8;
const int COGP = (COG + 7) / 8 * 8;
const int XROW = GROUPS * CIGP / 8;   // vectors per position of xp, of gp
const int GROW = GROUPS * COGP / 8;

layout(push_constant) uniform Push { int x_off; int g_off; int out_off; } pc;
layout(std430, binding = 0) readonly buffer X { uvec4 xp[]; };
layout(std430, binding = 1) readonly buffer G { uvec4 gp[]; };
layout(std430, binding = 2) writeonly buffer Out { float out_[]; };

#include "ops/conv_coopmat_stage.glsl"

shared float Cs[SG_M * SG_N * 256];  // one 16 x 16 scratch per subgroup, for the epilogue

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// Rows m0.. m0+BK-1 (below `end`) of both tiles into this invocation's registers.
void load_step(int m0, int end, int t, int g, int j0, int c0, ivec3 taps, inout Regs r) {
    UNROLL for (int e = 0; e < AV; ++e) {
        int idx = t + e * NTHREADS;
        int m = m0 + idx / AV_ROW, j8 = idx % AV_ROW;
        bool ok = idx < BK * AV_ROW && m < end && j0 + 8 * j8 < COGP;
        r.a[e] = ok ? gp[pc.g_off / 8 + m * GROW + g * (COGP / 8) + j0 / 8 + j8] : uvec4(0u);
    }
    UNROLL for (int e = 0; e < BV; ++e) {
        int idx = t + e * NTHREADS;
        int m = m0 + idx / BV_ROW, c8 = idx % BV_ROW;
        int n = m / SO;
        int off = plane_offset(window_base(out_coords(m - n * SO)), taps);
        bool ok = idx < BK * BV_ROW && m < end && off >= 0 && c0 + 8 * c8 < CIGP;
        r.b[e] = ok ? xp[pc.x_off / 8 + (n * SI + off) * XROW + g * (CIGP / 8) + c0 / 8 + c8] : uvec4(0u);
    }
}

void multiply(int buf, int sm, int sn, inout ACC acc[FM * FN]) {
    UNROLL for (int kk = 0; kk < BK; kk += 16) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a[FM];
        UNROLL for (int i = 0; i < FM; ++i)
            coopMatLoad(a[i], As, buf * A_TILE + kk * LDA + (sm * WTM + i * 16) / 8, LDA,
                        gl_CooperativeMatrixLayoutColumnMajor);
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
    const int tiles_j = (COG + BM - 1) / BM;
    const int j0 = (int(gl_WorkGroupID.x) % tiles_j) * BM;
    const int c0 = (int(gl_WorkGroupID.x) / tiles_j) * BN;
    const int kpos = int(gl_WorkGroupID.y);
    const int g = int(gl_WorkGroupID.z) / SPLITS;
    const int split = int(gl_WorkGroupID.z) - g * SPLITS;
    const ivec3 taps = tap_offsets(weight_tap(kpos));
    const int begin = split * SPLIT_STEPS * BK;
    const int end = min(begin + SPLIT_STEPS * BK, MROWS);
    const int nsteps = max(0, (end - begin + BK - 1) / BK);

    ACC acc[FM * FN];
    UNROLL for (int i = 0; i < FM * FN; ++i) acc[i] = ACC(0.0);
    Regs r;
#define LOAD(s) load_step(begin + (s) * BK, end, t, g, j0, c0, taps, r)
#define STORE(buf) store_step(buf, t, r)
#define MULTIPLY(buf) multiply(buf, sm, sn, acc)
    STAGED_STEPS(nsteps, LOAD, STORE, MULTIPLY)

    // Epilogue: fragment (j rows, c columns) into part[split][g][kpos][j][c]: straight from the
    // accumulator when whole and its rows are 16-byte aligned, else through this subgroup's
    // scratch (row-major: consecutive lanes write consecutive c).
    const int lane = t % SGS;
    const int base = pc.out_off + split * WTOT + (g * KP + kpos) * COG * CIG;
    UNROLL for (int i = 0; i < FM; ++i) {
        UNROLL for (int jf = 0; jf < FN; ++jf) {
            int fj = j0 + sm * WTM + i * 16, fc = c0 + sn * WTN + jf * 16;
            if (fj + 16 <= COG && fc + 16 <= CIG && CIG % 4 == 0 && pc.out_off % 4 == 0) {
                coopMatStore(acc[i * FN + jf], out_, base + fj * CIG + fc, CIG, gl_CooperativeMatrixLayoutRowMajor);
                continue;
            }
            coopMatStore(acc[i * FN + jf], Cs, sg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            for (int e = lane; e < 256; e += SGS) {
                int j = fj + (e >> 4), c = fc + (e & 15);
                if (j < COG && c < CIG) out_[base + j * CIG + c] = Cs[sg * 256 + e];
            }
            subgroupBarrier();  // the scratch is read before the next fragment overwrites it
        }
    }
}
#endif
