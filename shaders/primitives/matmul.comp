#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#ifndef HALF_IN
#define HALF_IN 0
#endif
#if HALF_IN == 1
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "lib/common.glsl"
#include "lib/tile_order.glsl"
// Tiled SIMT GEMM, float32 (float64 with F64):  C[b] = alpha * op(A[b]) * op(B[b])  (+ beta * C[b]
// with HAS_BETA)
// op(A) is M x K, op(B) is K x N, C is M x N; every matrix is row-major with a leading dimension.
//
// A workgroup computes a BM x BN tile of C and walks K in BK slices, staged through shared memory
// (two buffers: the next slice is fetched into registers while the current one is multiplied, then
// stored to the other buffer; one barrier per slice). Each of the (BM/TM)*(BN/TN) invocations keeps
// a TM x TN block of C in registers. Its rows are TM/4 groups of 4 consecutive rows BM/(TM/4) apart
// (columns likewise), so the operands come from shared memory as vec4 loads, and the invocations
// of a warp-shaped WARP_X x (LANES/WARP_X) block read consecutive vec4s (no bank conflicts).
// Shared tiles are k-major: As[k][m], Bs[k][n]. An operand whose K index is contiguous in memory
// (A not transposed, B transposed) is transposed on its way in; its rows get 4 floats of padding
// so that those scalar stores spread over the banks.
//
// Defines (vkbackend/primitives/matmul.py chooses them):
//   BM BN BK TM TN       tile shape; TM, TN multiples of 4 (4, 8, ...); BK a multiple of 4
//   WARP_X LANES         thread layout: blocks of LANES invocations, WARP_X of them along N
//   TRANS_A TRANS_B      0/1: A is stored K x M / B is stored N x K
//   A_VEC B_VEC C_VEC    0/1: 16-byte aligned vec4 access of that matrix is valid (see matmul.py)
//   HAS_BETA             read C and add beta * C (otherwise C is only written)
//   BATCH_RANK           number of (collapsed) batch dims described in push constants (0..4)
//   EDGE                 0: M, N and K are whole tiles and K steps (no bounds tests; vec4 access)
//   PREFETCH             1: within a slice, step k + 1's operands are read from shared memory
//                        while step k's products run (two sets of operand registers)
//   HALF_IN              A and B are float16 (C stays float32; products and sums in float32):
//                        1 read as float16_t (16-bit storage), 2 as packed words unpacked with
//                        unpackHalf2x16 (any device); 3: bfloat16, as packed words (any device).
//                        Offsets, leading dims, strides in halves.
//   F64                  A, B and C are float64, products and sums in float64 (alpha and beta stay
//                        float32 bits); "vec4" below is then a dvec4 and shared tiles twice the bytes.
// Bindings: 0 A, 1 B, 2 C.
// Push words: 0 M, 1 N, 2 K, 3 lda, 4 ldb, 5 ldc, 6 offA, 7 offB, 8 offC (elements), 9 alpha bits,
//   10 beta bits, 11 batch count, 12 swizzle group (0: none; only when the grid covers every tile),
//   then for BATCH_RANK dims: extents, A strides, B strides, C strides (elements; 0 = broadcast).
// Grid: x column tiles, y row tiles, z batches; each loops when the grid is smaller.

// @variants TRANS_A=0|1 TRANS_B=0|1 BATCH_RANK=0|2
// @variants TRANS_A=0|1 TRANS_B=0|1 A_VEC=0 B_VEC=0 C_VEC=0 HAS_BETA=1
// @variants BM=64 BN=64 BK=16 TM=4 TN=4 ?HAS_BETA
// @variants BM=128 BN=64 BK=16 TM=8 TN=4 WARP_X=4
// @variants BM=128 BN=128 BK=8 TM=8 TN=8 TRANS_A=1
// @variants BM=128 BN=128 BK=8 TM=16 TN=8 WARP_X=4 LANES=16 PREFETCH=1 TRANS_A=0|1 TRANS_B=0|1 EDGE=0|1
// @variants BM=64 BN=64 BK=8 TM=8 TN=4 WARP_X=4 LANES=32 PREFETCH=1 TRANS_A=0|1 EDGE=0|1
// @variants BM=32 BN=32 BK=32 TM=4 TN=4 TRANS_A=0|1 EDGE=0|1
// @variants BM=64 BN=64 BK=16 TM=4 TN=4 HALF_IN=1|2|3 TRANS_A=0|1 TRANS_B=0|1
// @variants BM=64 BN=64 BK=16 TM=4 TN=4 HALF_IN=1|2 A_VEC=0 B_VEC=0 C_VEC=0 HAS_BETA=1 BATCH_RANK=2
// @variants BM=64 BN=64 BK=8 TM=4 TN=4 F64 VK_WIDE TRANS_A=0|1 TRANS_B=0|1 ?HAS_BETA
// Defaults: the NVIDIA "large" tile, aligned, no batch (the runtime always sets every define).
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef WARP_X
#define WARP_X 8
#endif
#ifndef LANES
#define LANES 32
#endif
#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif
#ifndef A_VEC
#define A_VEC 1
#endif
#ifndef B_VEC
#define B_VEC 1
#endif
#ifndef C_VEC
#define C_VEC 1
#endif
#ifndef HAS_BETA
#define HAS_BETA 0
#endif
#ifndef BATCH_RANK
#define BATCH_RANK 0
#endif
#ifndef EDGE
#define EDGE 1
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif
#define PUSH_WORDS (13 + 4 * BATCH_RANK)
layout(push_constant) uniform Push { uint w[PUSH_WORDS]; } p;

// The arithmetic type (V4: 4 of it) and the operands' element types, and how a V4 (IN4) or one
// element (IN1) of them is read.
#ifdef F64
#define R double
#define V4 dvec4
#else
#define R float
#define V4 vec4
#endif
#if HALF_IN == 1
#define IN4_T f16vec4
#define IN1_T float16_t
#define IN4(x) vec4(x)
#define IN1(buf1, i) float(buf1[i])
#elif HALF_IN == 2     // 4 halves in a uvec2; half i in the low (even i) or high 16 bits of word i/2
#define IN4_T uvec2
#define IN1_T uint
#define IN4(w2) vec4(unpackHalf2x16((w2).x), unpackHalf2x16((w2).y))
#define IN1(buf1, i) unpackHalf2x16(buf1[(i) >> 1])[(i) & 1u]
#elif HALF_IN == 3     // bfloat16 likewise: each half the high 16 bits of a float
#define IN4_T uvec2
#define IN1_T uint
#define BF_LO(w) uintBitsToFloat((w) << 16)
#define BF_HI(w) uintBitsToFloat((w) & 0xFFFF0000u)
#define IN4(w2) vec4(BF_LO((w2).x), BF_HI((w2).x), BF_LO((w2).y), BF_HI((w2).y))
#define IN1(buf1, i) uintBitsToFloat((buf1[(i) >> 1] << (16u * (~(i) & 1u))) & 0xFFFF0000u)
#else
#define IN4_T V4
#define IN1_T R
#define IN4(x) (x)
#define IN1(buf1, i) buf1[i]
#endif
#if A_VEC
layout(std430, binding = 0) restrict readonly buffer A { IN4_T a4[]; };
#else
layout(std430, binding = 0) restrict readonly buffer A { IN1_T a1[]; };
#endif
#if B_VEC
layout(std430, binding = 1) restrict readonly buffer B { IN4_T b4[]; };
#else
layout(std430, binding = 1) restrict readonly buffer B { IN1_T b1[]; };
#endif
#if C_VEC
layout(std430, binding = 2) restrict buffer C { V4 c4[]; };
#else
layout(std430, binding = 2) restrict buffer C { R c1[]; };
#endif

#define RM (TM / 4)          // vec4 row groups per invocation
#define RN (TN / 4)          // vec4 column groups per invocation
#define TY (BM / TM)         // invocations along M
#define TX (BN / TN)         // invocations along N
#define NT (TX * TY)         // invocations per workgroup (== WG_SIZE)
#define WARP_Y (LANES / WARP_X)

#if TRANS_A
#define PA 0                 // A arrives m-contiguous: vec4 stores, no padding
#else
#define PA 4
#endif
#if TRANS_B
#define PB 4
#else
#define PB 0                 // B arrives n-contiguous
#endif
#define SA (BM + PA)         // floats per k row of the A tile
#define SB (BN + PB)
#define SA4 (SA / 4)
#define SB4 (SB / 4)
shared V4 As[2 * BK * SA4];
shared V4 Bs[2 * BK * SB4];

// Operand staging: every invocation fetches LA (LB) vec4s of a slice into registers.
#define VA (BM * BK / 4)     // vec4s in an A slice
#define VB (BN * BK / 4)
#define LA ((VA + NT - 1) / NT)
#define LB ((VB + NT - 1) / NT)
V4 ra[LA];
V4 rb[LB];

uint M, N, K, lda, ldb, ldc;
uint a_base, b_base, c_base;   // element offsets of this batch's matrices
uint m0, n0;                   // this tile's first row / column
uint tid;

// One vec4 of an operand in row-major storage (rows x cols, leading dimension ld), starting at
// (r, c) along the contiguous axis; zeros outside. The vec4 form needs the 4 elements all in or
// all out (cols % 4 == 0) and 16-byte alignment.
#if EDGE
#define FETCH_VEC(dst, buf4, base, ld, rows, cols, r, c) {                                  \
    dst = V4(0.0);                                                                          \
    if ((r) < (rows) && (c) < (cols)) dst = IN4(buf4[((base) + (r) * (ld) + (c)) >> 2]);    \
}
#else   // every tile and K step whole: no bounds to test
#define FETCH_VEC(dst, buf4, base, ld, rows, cols, r, c) dst = IN4(buf4[((base) + (r) * (ld) + (c)) >> 2]);
#endif
#define FETCH_SCALAR(dst, buf1, base, ld, rows, cols, r, c) {                               \
    dst = V4(0.0);                                                                          \
    if ((r) < (rows)) {                                                                     \
        uint i_ = (base) + (r) * (ld) + (c);                                                \
        [[unroll]] for (uint q_ = 0u; q_ < 4u; ++q_)                                        \
            if ((c) + q_ < (cols)) dst[q_] = IN1(buf1, i_ + q_);                            \
    }                                                                                       \
}

#if A_VEC
#define A_FETCH(dst, r, c, rows, cols) FETCH_VEC(dst, a4, a_base, lda, rows, cols, r, c)
#else
#define A_FETCH(dst, r, c, rows, cols) FETCH_SCALAR(dst, a1, a_base, lda, rows, cols, r, c)
#endif
#if B_VEC
#define B_FETCH(dst, r, c, rows, cols) FETCH_VEC(dst, b4, b_base, ldb, rows, cols, r, c)
#else
#define B_FETCH(dst, r, c, rows, cols) FETCH_SCALAR(dst, b1, b_base, ldb, rows, cols, r, c)
#endif

void fetch_a(uint k0) {
    [[unroll]] for (uint s = 0u; s < LA; ++s) {
        uint v = tid + s * NT;
        if (VA % NT == 0 || v < VA) {
#if TRANS_A   // stored K x M: slice rows are k, the vec4 runs along m
            uint k = v / (BM / 4), x = (v % (BM / 4)) * 4u;
            A_FETCH(ra[s], k0 + k, m0 + x, K, M)
#else         // stored M x K: the vec4 runs along k
            uint x = v / (BK / 4), k = (v % (BK / 4)) * 4u;
            A_FETCH(ra[s], m0 + x, k0 + k, M, K)
#endif
        }
    }
}

void fetch_b(uint k0) {
    [[unroll]] for (uint s = 0u; s < LB; ++s) {
        uint v = tid + s * NT;
        if (VB % NT == 0 || v < VB) {
#if TRANS_B   // stored N x K: the vec4 runs along k
            uint x = v / (BK / 4), k = (v % (BK / 4)) * 4u;
            B_FETCH(rb[s], n0 + x, k0 + k, N, K)
#else         // stored K x N: the vec4 runs along n
            uint k = v / (BN / 4), x = (v % (BN / 4)) * 4u;
            B_FETCH(rb[s], k0 + k, n0 + x, K, N)
#endif
        }
    }
}

void stage(uint buf) {
    [[unroll]] for (uint s = 0u; s < LA; ++s) {
        uint v = tid + s * NT;
        if (VA % NT == 0 || v < VA) {
#if TRANS_A
            uint k = v / (BM / 4), x = (v % (BM / 4)) * 4u;
            As[buf * (BK * SA4) + k * SA4 + x / 4u] = ra[s];
#else
            uint x = v / (BK / 4), k = (v % (BK / 4)) * 4u;
            uint e = buf * (BK * SA) + k * SA + x;
            [[unroll]] for (uint q = 0u; q < 4u; ++q)
                As[(e + q * SA) >> 2][x & 3u] = ra[s][q];
#endif
        }
    }
    [[unroll]] for (uint s = 0u; s < LB; ++s) {
        uint v = tid + s * NT;
        if (VB % NT == 0 || v < VB) {
#if TRANS_B
            uint x = v / (BK / 4), k = (v % (BK / 4)) * 4u;
            uint e = buf * (BK * SB) + k * SB + x;
            [[unroll]] for (uint q = 0u; q < 4u; ++q)
                Bs[(e + q * SB) >> 2][x & 3u] = rb[s][q];
#else
            uint k = v / (BN / 4), x = (v % (BN / 4)) * 4u;
            Bs[buf * (BK * SB4) + k * SB4 + x / 4u] = rb[s];
#endif
        }
    }
}

void main() {
    tid = gl_LocalInvocationID.x;
    M = p.w[0]; N = p.w[1]; K = p.w[2];
    lda = p.w[3]; ldb = p.w[4]; ldc = p.w[5];
    R alpha = R(uintBitsToFloat(p.w[9]));
#if HAS_BETA
    R beta = R(uintBitsToFloat(p.w[10]));
#endif
    uint batch = p.w[11], group = p.w[12];

    // Warp-shaped blocks of LANES invocations, WARP_X along N and WARP_Y along M.
    uint blk = tid / LANES, lane = tid % LANES;
    uint tx = (blk % (TX / WARP_X)) * WARP_X + lane % WARP_X;
    uint ty = (blk / (TX / WARP_X)) * WARP_Y + lane / WARP_X;

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
                m0 = tile.x * BM;
                n0 = tile.y * BN;

                V4 acc[TM][RN];
                [[unroll]] for (uint i = 0u; i < TM; ++i)
                    [[unroll]] for (uint j = 0u; j < RN; ++j) acc[i][j] = V4(0.0);

                if (nk > 0u) {
                    fetch_a(0u);
                    fetch_b(0u);
                    stage(0u);
                }
                barrier();
                for (uint t = 0u; t < nk; ++t) {
                    uint cur = t & 1u;
                    bool more = t + 1u < nk;
                    if (more) {
                        fetch_a((t + 1u) * BK);
                        fetch_b((t + 1u) * BK);
                    }
                    uint abase = cur * (BK * SA4) + ty, bbase = cur * (BK * SB4) + tx;
#if PREFETCH  // step k + 1's operands are read while step k's products run
                    V4 a[2][RM], b[2][RN];
                    [[unroll]] for (uint i = 0u; i < RM; ++i) a[0][i] = As[abase + i * TY];
                    [[unroll]] for (uint j = 0u; j < RN; ++j) b[0][j] = Bs[bbase + j * TX];
                    [[unroll]] for (uint k = 0u; k < BK; ++k) {
                        uint f = k & 1u;
                        if (k + 1u < BK) {
                            uint an = abase + (k + 1u) * SA4, bn = bbase + (k + 1u) * SB4;
                            [[unroll]] for (uint i = 0u; i < RM; ++i) a[f ^ 1u][i] = As[an + i * TY];
                            [[unroll]] for (uint j = 0u; j < RN; ++j) b[f ^ 1u][j] = Bs[bn + j * TX];
                        }
                        [[unroll]] for (uint i = 0u; i < RM; ++i)
                            [[unroll]] for (uint q = 0u; q < 4u; ++q)
                                [[unroll]] for (uint j = 0u; j < RN; ++j)
                                    acc[i * 4u + q][j] += a[f][i][q] * b[f][j];
                    }
#else
                    [[unroll]] for (uint k = 0u; k < BK; ++k) {
                        V4 a[RM], b[RN];
                        [[unroll]] for (uint i = 0u; i < RM; ++i) a[i] = As[abase + k * SA4 + i * TY];
                        [[unroll]] for (uint j = 0u; j < RN; ++j) b[j] = Bs[bbase + k * SB4 + j * TX];
                        [[unroll]] for (uint i = 0u; i < RM; ++i)
                            [[unroll]] for (uint q = 0u; q < 4u; ++q)
                                [[unroll]] for (uint j = 0u; j < RN; ++j)
                                    acc[i * 4u + q][j] += a[i][q] * b[j];
                    }
#endif
                    if (more) stage(cur ^ 1u);
                    barrier();
                }

                // Epilogue: row i*4*TY + ty*4 + q, columns j*4*TX + tx*4 .. +3 of the tile.
                [[unroll]] for (uint i = 0u; i < RM; ++i) {
                    [[unroll]] for (uint q = 0u; q < 4u; ++q) {
                        uint r = m0 + i * (4u * TY) + ty * 4u + q;
                        if (r >= M) continue;
                        [[unroll]] for (uint j = 0u; j < RN; ++j) {
                            uint c = n0 + j * (4u * TX) + tx * 4u;
                            uint e = c_base + r * ldc + c;
                            V4 v = alpha * acc[i * 4u + q][j];
#if C_VEC
                            if (c < N) {
#if HAS_BETA
                                v += beta * c4[e >> 2];
#endif
                                c4[e >> 2] = v;
                            }
#else
                            [[unroll]] for (uint s = 0u; s < 4u; ++s) {
                                if (c + s < N) {
#if HAS_BETA
                                    c1[e + s] = v[s] + beta * c1[e + s];
#else
                                    c1[e + s] = v[s];
#endif
                                }
                            }
#endif
                        }
                    }
                }
            }
        }
    }
}
