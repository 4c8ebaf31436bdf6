#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#if HALF_IN
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#define IN_T float16_t
#else
#define IN_T float
#endif
#include "lib/common.glsl"
#include "ops/conv_common.glsl"
// Convolution forward (and backward-input, as a convolution of the cotangent) by implicit GEMM:
//   Y[m, j] = sum_kk A[m, kk] * B[kk, j]     per group g,
// m = (batch, output position) over the rows, j = output channel of the group over COG, kk the
// reduction over (input channel of the group, kernel tap). A is never formed: each tile of it is
// gathered from x by index math (zeros for padding and dilation holes) into shared memory, the
// weight tile B likewise (through the weight strides), and each invocation accumulates a TM x TN
// register block. Shared tiles are double-buffered: one barrier per BK-step.
//
// Defines (chosen by ops/conv/plan_f32.py):
//   BM, BN, BK   tile: BM output rows x BN output channels, BK reduction steps per stage
//   TM, TN       register block per invocation (TM, TN multiples of 4); workgroup = (BM/TM)*(BN/TN)
//   GATHER       how A is gathered:
//                1 (uniform): the reduction runs tap-major in chunks of BK channels, so a chunk
//                  shares one tap and each row's address is computed once per chunk (wide
//                  channels; 1x1 is a plain GEMM);
//                0 (flat): over (channel, tap) in the weight's order, each element decoded
//                  (few channels per group; any geometry);
//                2 (table): flat, with (channel, tap) decoded once per workgroup into a shared
//                  table of TABLE_N entries (few channels, no input dilation: a first layer
//                  with C_in <= 4); taps per axis must be < 1024
//   PHASED       input dilation ID > 1 with stride 1 (backward-input of a strided convolution, a
//                transposed convolution) and gcd(KD, ID) = 1: outputs are split by phase
//                (position mod ID per axis, workgroup z = group * phases + phase), and each phase
//                reduces over only the taps that meet input elements rather than holes: a dense
//                stride-1 convolution with about 1/ID of the taps per axis.
//   B_J_FAST     weight tile loaded with consecutive invocations on consecutive output channels
//                (when the weight's output-channel stride is the smaller: transposed weights)
//   HAS_BIAS     add b[co] in the epilogue;   NO_UNROLL (conv_common.glsl)
//   NARROW       a GEMM with very few output channels per group (the backward-input of a first
//                layer: 3 channels over K = 64 * 49): no A tile in shared memory (no invocation
//                would reuse another's A element); each invocation gathers its own RT rows
//                straight from x (rows RT apart by the workgroup size: coalesced) and
//                accumulates all NN (4 or 8) output channels of grid y's chunk, with the weight
//                chunk (KC channels of one tap) in shared memory. Uniform gather, PHASED or not;
//                workgroup = any size (the planner's); BM/BN/BK/TM/TN/GATHER unused;
//                CU channels' loads in flight at once.
// Split-K (SPLITS > 1; conv_common.glsl): the reduction's steps are cut into SPLITS runs of
// SPLIT_STEPS (so that no invocation loops past a device's loop budget), workgroup z = (group
// [* phases + phase]) * SPLITS + split; split s writes its partial sums (the bias in split 0) at
// y + s * NB * COUT * SO, and conv_reduce.comp adds them.
// Bindings: 0 x, 1 w, 2 b (a dummy without bias), 3 y.   Push: x, w, b, y element offsets.
// Grid: x over row tiles (looping when more than dispatched), y over channel tiles, z groups
// (times phases, times splits).
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
#ifndef GATHER
#define GATHER 0
#endif
#ifndef PHASED
#define PHASED 0
#endif
#ifndef B_J_FAST
#define B_J_FAST 0
#endif
#ifndef TABLE_N
#define TABLE_N 1
#endif
#ifndef HAS_BIAS
#define HAS_BIAS 0
#endif
#ifndef NARROW
#define NARROW 0
#endif
#if PHASED && GATHER == 2 && !NARROW
#error "the table gather has no input dilation: PHASED does not apply"
#endif
// @variants GATHER=0|1 ?B_J_FAST HAS_BIAS=1
// @variants GATHER=0|1 PHASED=1 B_J_FAST=1
// @variants BM=128 BN=128 BK=16 TM=8 TN=8 GATHER=1
// @variants BM=32 BN=4 BK=8 TM=4 TN=4 GATHER=2 TABLE_N=160 NO_UNROLL
// @variants NARROW=1 NN=4|8 RT=2 KC=32 CU=1|8 ?PHASED ?HAS_BIAS
// @variants NARROW=1 NN=8 RT=2 KC=32 CU=8 PHASED=1 HAS_BIAS=1 HALF_IN=1
// @variants GATHER=0|1|2 TABLE_N=160 HAS_BIAS=1 HALF_IN=1 NO_UNROLL
// @variants NARROW=1 NN=4 RT=1 KC=8 NO_UNROLL

#define NT_M (BM / TM)
#define NT_N (BN / TN)
#define NTHREADS (NT_M * NT_N)
// A loader: LA_M invocations along rows (consecutive output positions: coalesced), LA_K along k.
#define LA_M (BM < NTHREADS ? BM : NTHREADS)
#define LA_K (NTHREADS / LA_M)
#define RA (BM / LA_M)
#define QA (BK / LA_K)
// B loader: element e of the BK x BN tile is (kk = e % BK, j = e / BK), or with B_J_FAST
// (j = e % BN, kk = e / BN).
#define EB ((BK * BN + NTHREADS - 1) / NTHREADS)
// Rows of the B tile are padded by a vec4 when its stores run down columns (fewer bank conflicts).
#define BROW (BN / 4 + (B_J_FAST != 0 ? 0 : 1))

layout(push_constant) uniform Push { int x_off; int w_off; int b_off; int y_off; } pc;
// HALF_IN: x, the weight and the bias are float16, widened as they are loaded (y stays float32).
layout(std430, binding = 0) readonly buffer X { IN_T x_[]; };
layout(std430, binding = 1) readonly buffer W { IN_T w_[]; };
layout(std430, binding = 2) readonly buffer B { IN_T b_[]; };
layout(std430, binding = 3) writeonly buffer Y { float y_[]; };

#if !NARROW
shared vec4 As[2 * BK * (BM / 4)];
shared vec4 Bs[2 * BK * BROW];
#endif

#include "ops/conv_gemm_view.glsl"

#if NARROW
// -- narrow: RT rows x NN channels per invocation, no A tile ---------------------------------
#ifndef NN
#define NN 4
#endif
#ifndef RT
#define RT 2
#endif
#ifndef KC
#define KC 32
#endif
#ifndef CU
#define CU 1   // channels whose loads go out together (the planner's)
#endif
#define NV (NN / 4)
#define NTH int(WG_SIZE)
shared vec4 Ws[KC * NV];   // weight chunk: (channel c0 + c, output channel j0 + 4 * v + e)

void main() {
    const int t = int(gl_LocalInvocationIndex);
    const int zg = int(gl_WorkGroupID.z) / SPLITS;
    const int split = int(gl_WorkGroupID.z) - zg * SPLITS;
#if PHASED
    const int g = zg / NPHASES;
    phase_setup(zg - g * NPHASES);
#else
    const int g = zg;
#endif
    const int ybase_split = pc.y_off + split * (NB * COUT * SO);
    const int j0 = int(gl_WorkGroupID.y) * NN;
    const int wbase = pc.w_off + g * W_G;
    const int cch = (CIG + KC - 1) / KC;
    const int nsteps = G_KP * cch;
    const int s_begin = SPLITS == 1 ? 0 : split * SPLIT_STEPS;
    const int s_end = SPLITS == 1 ? nsteps : min(nsteps, s_begin + SPLIT_STEPS);
    const int tiles_m = (G_ROWS + RT * NTH - 1) / (RT * NTH);
    for (int tile = int(gl_WorkGroupID.x); tile < tiles_m; tile += int(gl_NumWorkGroups.x)) {
        const int m0 = tile * (RT * NTH) + t;
        ivec3 rbase[RT];
        int rx[RT];
        UNROLL for (int r = 0; r < RT; ++r) {
            int m = m0 + r * NTH;
            int n = m / G_SO;
            rbase[r] = row_window(m - n * G_SO);
            rx[r] = m < G_ROWS ? pc.x_off + (n * CIN + g * CIG) * SI : -1;
        }
        vec4 acc[RT * NV];
        UNROLL for (int i = 0; i < RT * NV; ++i) acc[i] = vec4(0.0);
        LOOP for (int step = s_begin; step < s_end; ++step) {
            const int kpos = step / cch;
            const int c0 = (step - kpos * cch) * KC;
            const int wk = wbase + weight_of(kpos);
            barrier();   // the previous chunk is consumed
            for (int e = t; e < KC * NN; e += NTH) {
                int c = e / NN;
                int j = e - c * NN;
                float v = 0.0;
                if (c0 + c < CIG && j0 + j < COG) v = w_[wk + (j0 + j) * W_J + (c0 + c) * W_C];
                Ws[c * NV + j / 4][j % 4] = v;
            }
            barrier();
            const ivec3 taps = tap_of(kpos);
            int addr[RT];
            UNROLL for (int r = 0; r < RT; ++r) {
                int off = plane_of(rbase[r], taps);
                addr[r] = (rx[r] >= 0 && off >= 0) ? rx[r] + off + c0 * SI : -1;
            }
            const int cn = (CIG % KC) == 0 ? KC : min(KC, CIG - c0);
            // CU channels' loads are issued before their FMAs: CU * RT loads in flight per
            // invocation rather than RT (one load waited for at a time left the first layer's
            // backward-input latency-bound: 5.0 TFLOP/s on the H100, 7.3 with CU=8).
            for (int cb = 0; cb < cn; cb += CU) {
                float a[CU * RT];
                UNROLL for (int u = 0; u < CU; ++u) {
                    UNROLL for (int r = 0; r < RT; ++r)
                        a[u * RT + r] = (addr[r] >= 0 && cb + u < cn) ? x_[addr[r] + (cb + u) * SI] : 0.0;
                }
                UNROLL for (int u = 0; u < CU; ++u) {
                    if (cb + u >= cn) break;  // uniform
                    UNROLL for (int v = 0; v < NV; ++v) {
                        vec4 b = Ws[(cb + u) * NV + v];
                        UNROLL for (int r = 0; r < RT; ++r) acc[r * NV + v] += a[u * RT + r] * b;
                    }
                }
            }
        }
        UNROLL for (int r = 0; r < RT; ++r) {
            int m = m0 + r * NTH;
            if (m >= G_ROWS) continue;
            int n = m / G_SO;
            int ybase = ybase_split + (n * COUT + g * COG) * SO + out_pos(m - n * G_SO);
            UNROLL for (int v = 0; v < NV; ++v) {
                UNROLL for (int e = 0; e < 4; ++e) {
                    int j = j0 + v * 4 + e;
                    if (j < COG) {
#if HAS_BIAS
                        float bias = split == 0 ? float(b_[pc.b_off + g * COG + j]) : 0.0;
                        y_[ybase + j * SO] = acc[r * NV + v][e] + bias;
#else
                        y_[ybase + j * SO] = acc[r * NV + v][e];
#endif
                    }
                }
            }
        }
    }
}
#else
#include "ops/conv_gather.glsl"

void store_tiles(int buf, int t, int la_m, int la_k) {
    UNROLL for (int r = 0; r < RA; ++r) {
        UNROLL for (int q = 0; q < QA; ++q) {
            int m = la_m + r * LA_M;
            int k = la_k + q * LA_K;
            As[buf * (BK * BM / 4) + k * (BM / 4) + m / 4][m % 4] = ra[r * QA + q];
        }
    }
    UNROLL for (int e = 0; e < EB; ++e) {
        int idx = t + e * NTHREADS;
        if (idx < BK * BN) {
            ivec2 kj = b_elem(idx);
            Bs[buf * (BK * BROW) + kj.x * BROW + kj.y / 4][kj.y % 4] = rb[e];
        }
    }
}

void main() {
    const int t = int(gl_LocalInvocationIndex);
    const int tm = t % NT_M;
    const int tn = t / NT_M;
    const int la_m = t % LA_M;
    const int la_k = t / LA_M;
    const int zg = int(gl_WorkGroupID.z) / SPLITS;
    const int split = int(gl_WorkGroupID.z) - zg * SPLITS;
#if PHASED
    const int g = zg / NPHASES;
    phase_setup(zg - g * NPHASES);
#else
    const int g = zg;
#endif
    const int ybase_split = pc.y_off + split * (NB * COUT * SO);
    const int j0 = int(gl_WorkGroupID.y) * BN;
    const int wbase = pc.w_off + g * W_G;
    const int tiles_m = (G_ROWS + BM - 1) / BM;
#if GATHER == 1
    const int nsteps = G_KP * CSTEPS;
#else
    const int nsteps = (G_KTOT + BK - 1) / BK;
#endif
    const int s_begin = SPLITS == 1 ? 0 : split * SPLIT_STEPS;
    const int s_end = SPLITS == 1 ? nsteps : min(nsteps, s_begin + SPLIT_STEPS);
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

        vec4 acc[(TM / 4) * TN];
        UNROLL for (int i = 0; i < (TM / 4) * TN; ++i) acc[i] = vec4(0.0);

        if (s_begin < s_end) {
            load_a(s_begin, la_k);
            load_b(s_begin, t, wbase, j0);
            store_tiles(0, t, la_m, la_k);
        }
        barrier();
        LOOP for (int step = s_begin; step < s_end; ++step) {
            const int buf = (step - s_begin) & 1;
            const bool more = step + 1 < s_end;
            if (more) {
                load_a(step + 1, la_k);
                load_b(step + 1, t, wbase, j0);
            }
            const int abase = buf * (BK * BM / 4);
            const int bbase = buf * (BK * BROW);
            UNROLL for (int k = 0; k < BK; ++k) {
                vec4 a[TM / 4];
                UNROLL for (int i = 0; i < TM / 4; ++i) a[i] = As[abase + k * (BM / 4) + tm + i * NT_M];
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
            if (more) store_tiles(buf ^ 1, t, la_m, la_k);
            barrier();
        }

        // Epilogue: rows (tm + i*NT_M)*4 + 0..3, columns (tn + jv*NT_N)*4 + 0..3.
        UNROLL for (int jv = 0; jv < TN / 4; ++jv) {
            UNROLL for (int jj = 0; jj < 4; ++jj) {
                int j = j0 + (tn + jv * NT_N) * 4 + jj;
                if (j >= COG) continue;
                int co = g * COG + j;
#if HAS_BIAS
                float bias = split == 0 ? float(b_[pc.b_off + co]) : 0.0;
#else
                float bias = 0.0;
#endif
                UNROLL for (int i = 0; i < TM / 4; ++i) {
                    vec4 v = acc[i * TN + jv * 4 + jj] + bias;
                    int mb = m0 + (tm + i * NT_M) * 4;
                    UNROLL for (int e = 0; e < 4; ++e) {
                        int m = mb + e;
                        if (m < G_ROWS) {
                            int n = m / G_SO;
                            y_[ybase_split + (n * COUT + co) * SO + out_pos(m - n * G_SO)] = v[e];
                        }
                    }
                }
            }
        }
    }
}
#endif
