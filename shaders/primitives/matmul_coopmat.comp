#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#ifndef COOPMAT_EMULATED
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#endif
#include "lib/common.glsl"
#include "lib/tile_order.glsl"
#define STAGED_INDEX uint
#include "lib/staged_steps.glsl"   // STAGES (default 2) and the reduction loop, STAGED_STEPS
// float16 GEMM on cooperative matrices (VK_KHR_cooperative_matrix, 16 x 16 x 16 float16 products
// accumulating in float32):  C[b] = alpha * op(A[b]) * op(B[b])  (+ beta * C[b] with HAS_BETA)
// A, B float16; C float32 (vkbackend/primitives/matmul_half.py rounds it to float16 once, after
// every K slice), or float16 rounded here (OUT_HALF). Same matrices, push constants and grid as
// matmul.comp, whose float16 variants (HALF_IN) run where the device has no cooperative matrices.
//
// A workgroup computes a BM x BN tile of C: SG_M x SG_N subgroups of SGS invocations, each owning
// a (BM / SG_M) x (BN / SG_N) block of 16 x 16 float32 accumulators. K is walked in BK steps
// staged through shared memory; the global loads of step t + 1 are in flight in registers during
// the products of step t: STAGES=2 double-buffers the tiles (one barrier per step, as
// ops/conv_coopmat_packed.comp), STAGES=1 has one copy (two barriers per step; the memory it
// saves buys a deeper BK). A tile's loads test their bounds only where the tile or the K step
// reaches past the matrix (a uniform branch), and not at all with WHOLE (every tile and K step
// whole, both operands in vectors), which leaves the loop one path.
// Each operand's tile keeps its memory layout: rows along the operand's strided axis, 16-byte
// vectors of 8 halves along its contiguous axis, each row padded by one vector against bank
// conflicts; a transposed operand is loaded column-major from it (no shuffle on the way in).
// Out-of-range elements are staged as zeros, so every fragment load reads a whole tile.
// A whole fragment of C goes straight to memory when C's offset and ldc are multiples of 4 (the
// 16-byte alignment cooperative-matrix loads and stores need); edge fragments go through a
// per-subgroup scratch, element by element.
//
// Defines (matmul_half.py chooses them):
//   BM BN      tile; multiples of 16 * SG_M, 16 * SG_N
//   BK         K step, a multiple of 16
//   SG_M SG_N  subgroups along M and N; SGS the subgroup size (fixed: min == max on the device)
//   TRANS_A TRANS_B  0/1: A is stored K x M / B is stored N x K
//   A_VEC B_VEC      0/1: 8 halves at a time (offset, ld, batch strides and the contiguous extent
//                    multiples of 8), else one half at a time
//   HAS_BETA   read C and add beta * C
//   STAGES     1 or 2 shared copies of the tiles (above)
//   WHOLE      M % BM, N % BN, K % BK all 0, A_VEC and B_VEC: loads without bounds tests
//   OUT_HALF   C is float16, written rounded (packHalf2x16, as astype's cast_half.comp) with no
//              float32 copy; N, ldc and C's offsets even, HAS_BETA 0, one K slice
//   BATCH_RANK number of (collapsed) batch dims in push constants (0..4)
//   COOPMAT_EMULATED  tests only: primitives/coopmat_emulated.glsl stands in for the extension
//                     (lavapipe has none), so that the rest of this kernel runs there
// Bindings: 0 A, 1 B (float16), 2 C (float32; float16 with OUT_HALF).
// Push words (matmul.comp's): 0 M, 1 N, 2 K, 3 lda, 4 ldb, 5 ldc, 6 offA, 7 offB, 8 offC
//   (elements), 9 alpha bits, 10 beta bits, 11 batch count, 12 swizzle group (as matmul.comp's),
//   then for BATCH_RANK dims: extents, A strides, B strides, C strides (elements; 0 = broadcast).
// Grid: x column tiles, y row tiles, z batches; each loops when the grid is smaller. Only these
// four loops are counted by a loop budget (the rest is [[unroll]]ed), as in matmul.comp, so
// matmul.py's _k_slices cost model holds for this kernel too.

// @variants TRANS_A=0|1 TRANS_B=0|1 A_VEC=0|1 B_VEC=0|1
// @variants BM=128 BN=128 BK=64 SG_M=2 SG_N=4 STAGES=1 WHOLE=1 A_VEC=1 B_VEC=1 TRANS_A=0|1 TRANS_B=0|1 OUT_HALF=0|1
// @variants BM=128 BN=128 SG_M=2 SG_N=2 STAGES=1 TRANS_A=0|1 TRANS_B=0|1 A_VEC=0|1 B_VEC=0|1
// @variants BK=64 STAGES=1 HAS_BETA=1 BATCH_RANK=2
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
#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif
#ifndef A_VEC
#define A_VEC 0
#endif
#ifndef B_VEC
#define B_VEC 0
#endif
#ifndef HAS_BETA
#define HAS_BETA 0
#endif
#ifndef WHOLE
#define WHOLE 0
#endif
#ifndef OUT_HALF
#define OUT_HALF 0
#endif
#ifndef BATCH_RANK
#define BATCH_RANK 0
#endif
#define PUSH_WORDS (13 + 4 * BATCH_RANK)
layout(push_constant) uniform Push { uint w[PUSH_WORDS]; } p;

#if A_VEC
layout(std430, binding = 0) restrict readonly buffer A { uvec4 a8[]; };
#else
layout(std430, binding = 0) restrict readonly buffer A { float16_t a1[]; };
#endif
#if B_VEC
layout(std430, binding = 1) restrict readonly buffer B { uvec4 b8[]; };
#else
layout(std430, binding = 1) restrict readonly buffer B { float16_t b1[]; };
#endif
#if OUT_HALF   // C float16 (its words: two halves each; N, ldc and C's offsets even)
layout(std430, binding = 2) restrict writeonly buffer C { uint c2[]; };
#else
layout(std430, binding = 2) restrict buffer C { float c1[]; };
#endif

#define NSUBGROUPS (SG_M * SG_N)
#define NT (NSUBGROUPS * SGS)   // invocations per workgroup (== WG_SIZE)
#define WTM (BM / SG_M)         // rows of one subgroup's block
#define WTN (BN / SG_N)         // columns of one subgroup's block
#define FM (WTM / 16)
#define FN (WTN / 16)

// Shared tiles in stored layout: A_R rows of A_C halves (likewise B), rows padded by one vector.
#if TRANS_A
#define A_R BK
#define A_C BM
#else
#define A_R BM
#define A_C BK
#endif
#if TRANS_B
#define B_R BN
#define B_C BK
#else
#define B_R BK
#define B_C BN
#endif
#define AV_ROW (A_C / 8)        // vectors per tile row
#define BV_ROW (B_C / 8)
#define AV ((A_R * AV_ROW + NT - 1) / NT)   // vectors per invocation and step
#define BV ((B_R * BV_ROW + NT - 1) / NT)
#define LDA (AV_ROW + 1)        // shared row strides, in vectors
#define LDB (BV_ROW + 1)
#define A_TILE (A_R * LDA)
#define B_TILE (B_R * LDB)
shared uvec4 As[STAGES * A_TILE];
shared uvec4 Bs[STAGES * B_TILE];
shared float Cs[NSUBGROUPS * 256];   // one 16 x 16 scratch per subgroup (row-major)

#ifdef COOPMAT_EMULATED
#include "primitives/coopmat_emulated.glsl"
#else
#define FRAG_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
ACC acc_zero() { return ACC(0.0); }
ACC acc_scale(ACC x, float s) { return x * s; }
ACC acc_add_scaled(ACC x, ACC y, float s) { return x + y * s; }
#endif

uint M, N, K, lda, ldb, ldc;
uint a_base, b_base, c_base;   // element offsets of this batch's matrices

// 8 halves of a stored operand (rows x cols, leading dimension ld) at row r, columns c .. c + 7,
// zeros outside; the vector form needs cols % 8 == 0 and 16-byte alignment (A_VEC, B_VEC).
uvec4 pack8(float16_t h[8]) {
    return uvec4(packFloat2x16(f16vec2(h[0], h[1])), packFloat2x16(f16vec2(h[2], h[3])),
                 packFloat2x16(f16vec2(h[4], h[5])), packFloat2x16(f16vec2(h[6], h[7])));
}

uvec4 load_a(uint r, uint c, uint rows, uint cols, bool edge) {
#if A_VEC
    if (!edge) return a8[(a_base + r * lda + c) >> 3];
#endif
    uvec4 v = uvec4(0u);
    if (r < rows) {
        uint e = a_base + r * lda + c;
#if A_VEC
        if (c < cols) v = a8[e >> 3];
#else
        float16_t h[8];
        [[unroll]] for (uint q = 0u; q < 8u; ++q) {
            h[q] = float16_t(0.0);
            if (c + q < cols) h[q] = a1[e + q];
        }
        v = pack8(h);
#endif
    }
    return v;
}

uvec4 load_b(uint r, uint c, uint rows, uint cols, bool edge) {
#if B_VEC
    if (!edge) return b8[(b_base + r * ldb + c) >> 3];
#endif
    uvec4 v = uvec4(0u);
    if (r < rows) {
        uint e = b_base + r * ldb + c;
#if B_VEC
        if (c < cols) v = b8[e >> 3];
#else
        float16_t h[8];
        [[unroll]] for (uint q = 0u; q < 8u; ++q) {
            h[q] = float16_t(0.0);
            if (c + q < cols) h[q] = b1[e + q];
        }
        v = pack8(h);
#endif
    }
    return v;
}

struct Regs { uvec4 a[AV]; uvec4 b[BV]; };

// This invocation's vectors of step k0 (vector e of A is tile vector tid + e * NT; likewise B).
void load_step(uint k0, uint m0, uint n0, uint tid, inout Regs rg, bool edge_tile) {
#if WHOLE
    const bool edge = false;
#else
    bool edge = edge_tile || k0 + BK > K;
#endif
    [[unroll]] for (uint e = 0u; e < AV; ++e) {
        uint idx = tid + e * NT;
        uint r = idx / AV_ROW, c = (idx % AV_ROW) * 8u;
        rg.a[e] = uvec4(0u);
        if (idx < A_R * AV_ROW) {
#if TRANS_A   // stored K x M
            rg.a[e] = load_a(k0 + r, m0 + c, K, M, edge);
#else         // stored M x K
            rg.a[e] = load_a(m0 + r, k0 + c, M, K, edge);
#endif
        }
    }
    [[unroll]] for (uint e = 0u; e < BV; ++e) {
        uint idx = tid + e * NT;
        uint r = idx / BV_ROW, c = (idx % BV_ROW) * 8u;
        rg.b[e] = uvec4(0u);
        if (idx < B_R * BV_ROW) {
#if TRANS_B   // stored N x K
            rg.b[e] = load_b(n0 + r, k0 + c, N, K, edge);
#else         // stored K x N
            rg.b[e] = load_b(k0 + r, n0 + c, K, N, edge);
#endif
        }
    }
}

void store_step(uint buf, uint tid, Regs rg) {
    [[unroll]] for (uint e = 0u; e < AV; ++e) {
        uint idx = tid + e * NT;
        if (idx < A_R * AV_ROW) As[buf * A_TILE + (idx / AV_ROW) * LDA + idx % AV_ROW] = rg.a[e];
    }
    [[unroll]] for (uint e = 0u; e < BV; ++e) {
        uint idx = tid + e * NT;
        if (idx < B_R * BV_ROW) Bs[buf * B_TILE + (idx / BV_ROW) * LDB + idx % BV_ROW] = rg.b[e];
    }
}

void multiply(uint buf, uint sm, uint sn, inout ACC acc[FM * FN]) {
    [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
        FRAG_A a[FM];
        [[unroll]] for (uint i = 0u; i < FM; ++i) {
            uint mi = sm * WTM + i * 16u;
#if TRANS_A   // As[k][m]: element (m, k) of op(A) at k * LDA + m: column-major
            coopMatLoad(a[i], As, buf * A_TILE + kk * LDA + mi / 8u, LDA, gl_CooperativeMatrixLayoutColumnMajor);
#else         // As[m][k]
            coopMatLoad(a[i], As, buf * A_TILE + mi * LDA + kk / 8u, LDA, gl_CooperativeMatrixLayoutRowMajor);
#endif
        }
        [[unroll]] for (uint j = 0u; j < FN; ++j) {
            uint nj = sn * WTN + j * 16u;
            FRAG_B b;
#if TRANS_B   // Bs[n][k]: element (k, n) of op(B) at n * LDB + k: column-major
            coopMatLoad(b, Bs, buf * B_TILE + nj * LDB + kk / 8u, LDB, gl_CooperativeMatrixLayoutColumnMajor);
#else         // Bs[k][n]
            coopMatLoad(b, Bs, buf * B_TILE + kk * LDB + nj / 8u, LDB, gl_CooperativeMatrixLayoutRowMajor);
#endif
            [[unroll]] for (uint i = 0u; i < FM; ++i) acc[i * FN + j] = coopMatMulAdd(a[i], b, acc[i * FN + j]);
        }
    }
}

// Fragment `acc` (rows r0.., columns c0.. of C) into C as alpha * acc (+ beta * C).
void store_fragment(ACC acc, uint sg, uint lane, uint r0, uint c0, float alpha, float beta) {
#if OUT_HALF   // through the scratch, two neighbours a word, rounded as the cast of a float32 C is
    coopMatStore(acc, Cs, sg * 256u, 16u, gl_CooperativeMatrixLayoutRowMajor);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint s = 0u; s < 128u / SGS; ++s) {
        uint e = 2u * (lane + s * SGS);
        uint r = r0 + (e >> 4), c = c0 + (e & 15u);
        if (r < M && c < N)
            c2[(c_base + r * ldc + c) >> 1] = packHalf2x16(vec2(alpha * Cs[sg * 256u + e], alpha * Cs[sg * 256u + e + 1u]));
    }
    subgroupBarrier();
    return;
#else
    if (r0 + 16u <= M && c0 + 16u <= N && c_base % 4u == 0u && ldc % 4u == 0u) {
        ACC v = acc_scale(acc, alpha);
#if HAS_BETA
        ACC old;
        coopMatLoad(old, c1, c_base + r0 * ldc + c0, ldc, gl_CooperativeMatrixLayoutRowMajor);
        v = acc_add_scaled(v, old, beta);
#endif
        coopMatStore(v, c1, c_base + r0 * ldc + c0, ldc, gl_CooperativeMatrixLayoutRowMajor);
        return;
    }
    coopMatStore(acc, Cs, sg * 256u, 16u, gl_CooperativeMatrixLayoutRowMajor);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (uint s = 0u; s < 256u / SGS; ++s) {
        uint e = lane + s * SGS;
        uint r = r0 + (e >> 4), c = c0 + (e & 15u);
        if (r < M && c < N) {
            uint i = c_base + r * ldc + c;
            float v = alpha * Cs[sg * 256u + e];
#if HAS_BETA
            v += beta * c1[i];
#endif
            c1[i] = v;
        }
    }
    subgroupBarrier();  // the scratch is read before the next fragment overwrites it
#endif
}

void main() {
    uint tid = gl_LocalInvocationIndex;
    uint sg = tid / SGS, lane = tid % SGS;
    uint sm = sg % SG_M, sn = sg / SG_M;
    M = p.w[0]; N = p.w[1]; K = p.w[2];
    lda = p.w[3]; ldb = p.w[4]; ldc = p.w[5];
    float alpha = uintBitsToFloat(p.w[9]);
    float beta = uintBitsToFloat(p.w[10]);
    uint batch = p.w[11], group = p.w[12];
    uint tiles_x = (N + BN - 1u) / BN, tiles_y = (M + BM - 1u) / BM;
    uint nk = (K + BK - 1u) / BK;

    for (uint bz = gl_WorkGroupID.z; bz < batch; bz += gl_NumWorkGroups.z) {
        a_base = p.w[6]; b_base = p.w[7]; c_base = p.w[8];
#if BATCH_RANK > 0
        uint rest = bz;
        [[unroll]] for (int d = BATCH_RANK - 1; d >= 0; --d) {
            uint extent = p.w[13 + d];
            uint i = rest % extent;
            rest /= extent;
            a_base += i * p.w[13 + BATCH_RANK + d];
            b_base += i * p.w[13 + 2 * BATCH_RANK + d];
            c_base += i * p.w[13 + 3 * BATCH_RANK + d];
        }
#endif
        for (uint by = gl_WorkGroupID.y; by < tiles_y; by += gl_NumWorkGroups.y) {
            for (uint bx = gl_WorkGroupID.x; bx < tiles_x; bx += gl_NumWorkGroups.x) {
                uvec2 tile = swizzled_tile(by, bx, tiles_x, tiles_y, group);
                uint m0 = tile.x * BM, n0 = tile.y * BN;
                bool edge_tile = m0 + BM > M || n0 + BN > N;  // uniform: whole tiles load unchecked
                ACC acc[FM * FN];
                [[unroll]] for (uint f = 0u; f < FM * FN; ++f) acc[f] = acc_zero();

                Regs rg;
#define LOAD(s) load_step((s) * BK, m0, n0, tid, rg, edge_tile)
#define STORE(buf) store_step(buf, tid, rg)
#define MULTIPLY(buf) multiply(buf, sm, sn, acc)
                STAGED_STEPS(nk, LOAD, STORE, MULTIPLY)
                [[unroll]] for (uint i = 0u; i < FM; ++i)
                    [[unroll]] for (uint j = 0u; j < FN; ++j)
                        store_fragment(acc[i * FN + j], sg, lane, m0 + sm * WTM + i * 16u,
                                       n0 + sn * WTN + j * 16u, alpha, beta);
            }
        }
    }
}
