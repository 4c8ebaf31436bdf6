#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#include "lib/common.glsl"
#include "ops/conv_common.glsl"
// float16 convolution backward-weight on cooperative matrices for few input channels (a first
// layer's 3), gathering x by index math in its own layout: per group one GEMM
//   dW[j, p] = sum over rows r = (batch, output position) of G[r, j] X[r, p]
// with p = (input channel, tap) over CIG * KP (all of it in one tile: 147 for 3 channels 7x7),
// G the cotangent and X[r, p] the input element row r meets through tap p (zero on padding and
// holes). conv_coopmat_wgrad.comp's GEMM per tap on channels-last copies would pad 3 channels
// to 8 and read the cotangent once per tap (49 times).
// A step is BK rows: the G tile (64 output channels x BK rows, row-major) and the X tile (PF x 16
// columns p x BK rows, p-major: the GEMM's B in column-major order) go through registers into
// double-buffered shared memory while the previous step multiplies. 8 subgroups: subgroup s
// owns output-channel fragment s % 4 and column fragments s / 4, s / 4 + 2, ... of the 64 x
// 16 PF tile. The rows are split across workgroups (SPLIT_STEPS steps each, conv_common.glsl);
// split s stores its float32 partial sums whole, part[s][g][j tile][64][16 PF].
// FINISH (a second dispatch, grid-stride over WTOT): dw = the splits' sum in the weight's layout
// (strides W_G, W_J, W_C; mirrored with FLIP), rounded to float16.
// Defines: PF (16-wide column fragments: CIG * KP <= 16 PF), BK (rows per step, a multiple of
// 16), SGS (the fixed subgroup size).
// Bindings: 0 x, 1 cotangent (float16), 2 part. Push: x, cotangent, part element offsets.
// Grid: (SPLITS, output-channel tiles of 64, GROUPS).
// FINISH bindings: 0 part, 1 dw (float16). Push: part, dw element offsets.
#ifndef PF
#error "define PF"
#endif
#ifndef BK
#define BK 32
#endif
#ifndef SGS
#define SGS 32
#endif
// @variants PF=10
// @variants PF=3 BK=16
// @variants FINISH=1 PF=10

#define BJ 64                 // output channels per tile
#define PP (PF * 16)          // columns p per tile (padded)
const int JT = (COG + BJ - 1) / BJ;   // output-channel tiles
const int PTOT = CIG * KP;

#ifdef FINISH
layout(push_constant) uniform Push { int part_off; int dw_off; } pc;
layout(std430, binding = 0) readonly buffer Part { float part_[]; };
layout(std430, binding = 1) writeonly buffer DW { float16_t dw_[]; };

void main() {
    const int per_split = GROUPS * JT * BJ * PP;
    GRID_STRIDE_LOOP(i, uint(WTOT)) {  // i in the weight's order (g, j, c, tap)
        int kpos = int(i) % KP;
        int r = int(i) / KP;
        int c = r % CIG;
        r /= CIG;
        int j = r % COG, g = r / COG;
        int src = pc.part_off + (g * JT * BJ + j) * PP + c * KP + kpos;
        float sum = 0.0;
        for (int k = 0; k < SPLITS; ++k) sum += part_[src + k * per_split];
        dw_[pc.dw_off + g * W_G + j * W_J + c * W_C + weight_tap(kpos)] = float16_t(sum);
    }
}
#else

#define NSG 8
#define NT (NSG * SGS)
#define FPS ((PF + 1) / 2)    // column fragments per subgroup, at most
#define LDG (BK + 8)          // shared row strides in halves (16-byte aligned, skewed)
#define LDX (BK + 8)
#define G_TILE (BJ * LDG)
#define X_TILE (PP * LDX)
// Loaders: G, 8 consecutive rows of one output channel per invocation (BJ * BK / 8 of them);
// X, row t % BK and columns t / BK + k * (NT / BK).
#define GV (BJ * BK / 8)
#define GR ((GV + NT - 1) / NT)
#define XC (NT / BK)
#define XE ((PP + XC - 1) / XC)

layout(push_constant) uniform Push { int x_off; int g_off; int out_off; } pc;
layout(std430, binding = 0) readonly buffer X { float16_t x_[]; };
layout(std430, binding = 1) readonly buffer G { float16_t g_[]; };
layout(std430, binding = 2) writeonly buffer Out { float out_[]; };

shared float16_t Gs[2 * G_TILE];
shared float16_t Xs[2 * X_TILE];
// Column p's channel offset in x (c * SI; -1 past the columns) and tap offsets per axis,
// computed once: the gathers then cost no divisions.
shared ivec4 ptab[PP];

float16_t rg[GR * 8];
float16_t rx[XE];

// Step rows r0.. r0 + BK of [begin, end): this invocation's share of both tiles, zeros outside.
void load_step(int r0, int end, int t, int g, int j0) {
    UNROLL for (int e = 0; e < GR; ++e) {
        int v = t + e * NT;
        int j = j0 + v / (BK / 8), rr = r0 + (v % (BK / 8)) * 8;
        bool ok = v < GV && j < COG;
        int n = rr / SO, o = rr - (rr / SO) * SO;   // row rr + q at (n, o): no division per row
        UNROLL for (int q = 0; q < 8; ++q) {
            rg[e * 8 + q] = ok && rr + q < end ? g_[pc.g_off + (n * COUT + g * COG + j) * SO + o] : float16_t(0.0);
            o += 1;
            if (o == SO) {
                o = 0;
                n += 1;
            }
        }
    }
    const int r = r0 + t % BK;
    const int n = r / SO;
    const ivec3 base = window_base(out_coords(r - n * SO));
    const int xrow = pc.x_off + (n * CIN + g * CIG) * SI;
    UNROLL for (int e = 0; e < XE; ++e) {
        int p = t / BK + e * XC;
        ivec4 q = p < PP ? ptab[p] : ivec4(-1);
        int off = q.x >= 0 && r < end ? plane_offset(base, q.yzw) : -1;
        rx[e] = off >= 0 ? x_[xrow + q.x + off] : float16_t(0.0);
    }
}

void store_step(int buf, int t) {
    UNROLL for (int e = 0; e < GR; ++e) {
        int v = t + e * NT;
        if (v < GV) {
            int at = buf * G_TILE + (v / (BK / 8)) * LDG + (v % (BK / 8)) * 8;
            UNROLL for (int q = 0; q < 8; ++q) Gs[at + q] = rg[e * 8 + q];
        }
    }
    UNROLL for (int e = 0; e < XE; ++e) {
        int p = t / BK + e * XC;
        if (p < PP) Xs[buf * X_TILE + p * LDX + t % BK] = rx[e];
    }
}

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

void main() {
    const int t = int(gl_LocalInvocationIndex);
    const int sg = t / SGS;
    const int jf = sg % 4, pf0 = sg / 4;
    const int split = int(gl_WorkGroupID.x);
    const int j0 = int(gl_WorkGroupID.y) * BJ;
    const int g = int(gl_WorkGroupID.z);
    const int begin = split * SPLIT_STEPS * BK;
    const int end = min(MROWS, begin + SPLIT_STEPS * BK);
    const int nsteps = max(0, (end - begin + BK - 1) / BK);

    for (int p = t; p < PP; p += NT) {
        int c = p / KP;
        ptab[p] = p < PTOT ? ivec4(c * SI, tap_offsets(p - c * KP)) : ivec4(-1);
    }
    barrier();
    ACC acc[FPS];
    UNROLL for (int i = 0; i < FPS; ++i) acc[i] = ACC(0.0);
    if (nsteps > 0) {
        load_step(begin, end, t, g, j0);
        store_step(0, t);
    }
    barrier();
    LOOP for (int s = 0; s < nsteps; ++s) {
        const int buf = s & 1;
        if (s + 1 < nsteps) load_step(begin + (s + 1) * BK, end, t, g, j0);
        UNROLL for (int kk = 0; kk < BK; kk += 16) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
            coopMatLoad(a, Gs, buf * G_TILE + jf * 16 * LDG + kk, LDG, gl_CooperativeMatrixLayoutRowMajor);
            UNROLL for (int i = 0; i < FPS; ++i) {
                int pf = pf0 + 2 * i;
                if (pf < PF) {
                    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
                    coopMatLoad(b, Xs, buf * X_TILE + pf * 16 * LDX + kk, LDX, gl_CooperativeMatrixLayoutColumnMajor);
                    acc[i] = coopMatMulAdd(a, b, acc[i]);
                }
            }
        }
        if (s + 1 < nsteps) store_step(buf ^ 1, t);
        barrier();
    }
    // Whole fragments into part[split][g][j tile][64][PP] (rows past COG and columns past PTOT
    // hold zeros; FINISH reads only the others).
    const int base = pc.out_off + ((split * GROUPS + g) * JT + int(gl_WorkGroupID.y)) * BJ * PP;
    UNROLL for (int i = 0; i < FPS; ++i) {
        int pf = pf0 + 2 * i;
        if (pf < PF)
            coopMatStore(acc[i], out_, base + jf * 16 * PP + pf * 16, PP, gl_CooperativeMatrixLayoutRowMajor);
    }
}
#endif
