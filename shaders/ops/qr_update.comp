#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
// @variants NB=8|16|32 CW=8|16|32 ?TRANS_T
// @variants NB=8|16|32 CW=8|16|32 FIXED_TRIPS
// @variants NB=8|16 CW=8|16|32 ?TRANS_T F64 VK_WIDE VK_MATH64
// @variants NB=8|16 CW=8|16|32 ?TRANS_T FIXED_TRIPS F64 VK_WIDE VK_MATH64
// QR_NO_UNROLL: [[dont_unroll]] (faster compiles on software rasterizers, slower runs).
// FIXED_TRIPS: the loops inside a row tile run fixed trip counts ([[unroll]], guarded), so that a
// device's loop budget (lavapipe) counts only the row tiles themselves (ops/qr.py: _update_cost).
#ifdef QR_NO_UNROLL
#define UNROLL [[dont_unroll]]
#else
#define UNROLL [[unroll]]
#endif
// Apply one compact-WY block reflector Q_b = I - V T V^T to a strip of columns, fused:
//     C := C - V * op(T) * (V^T * C)        op(T) = T^T (TRANS_T: C := Q_b^T C) or T (C := Q_b C)
// One workgroup owns CW columns of C over all m rows, so the three products need no other
// workgroup and no temporary in memory: W = V^T C (CW x NB, rows split over KSPLIT thread
// groups, reduced in shared memory), W2 = op(T) W, then C -= V W2 as a second pass over the rows.
//
// V: m x NB, unit lower trapezoidal, read from below the diagonal of a row-major matrix (element
// (0, 0) of the panel at v_off); only its first kk columns are reflectors, the rest read as zero.
// C: m x ncols at c_off (row stride c_ld); may be the same buffer as V (disjoint columns).
// Defines: NB, CW (4..32, powers of two), TRANS_T. Workgroup size: 256 (F64: 128). Batch: gl_WorkGroupID.z.
// F64: float64 matrices, in a workgroup of 128 with row tiles of 32 and 64 (RT, RT3), so that the
// shared memory (NB <= 16) stays within 32 KiB (lavapipe's limit) at twice the element size.
#ifndef NB
#error "define NB"
#endif
#ifndef CW
#error "define CW"
#endif

#ifdef F64
#define T double
const uint WGU = 128u;  // the thread mappings below assume it (ops/qr.py: _update_shape)
const uint RT = 32u;    // rows per shared tile (phase 1)
const uint RT3 = 64u;   // rows per tile in phase 3
#else
#define T float
const uint WGU = 256u;
const uint RT = 64u;
const uint RT3 = 128u;
#endif
layout(std430, binding = 0) readonly buffer VBuf { T vbuf[]; };
layout(std430, binding = 1) readonly buffer TBuf { T tbuf[]; };
layout(std430, binding = 2) buffer CBuf { T cbuf[]; };

layout(push_constant) uniform Push {
    uint v_off; uint v_ld; uint v_bs;
    uint m; uint kk;
    uint t_off; uint t_bs;
    uint c_off; uint c_ld; uint c_bs;
    uint ncols;
} p;

const uint TI = NB < 4u ? NB : 4u;   // register tile of W per thread: TI x TJ
const uint TJ = 4u;
const uint NTI = NB / TI;
const uint NTJ = CW / TJ;
const uint KSPLIT = WGU / (NTI * NTJ);  // thread groups splitting the rows of V^T C
const uint NBP = NB + 1u;               // padded row strides against bank conflicts
const uint CWP = CW + 1u;
const uint TI3 = RT3 * CW / (WGU * TJ); // rows per thread in phase 3
const uint A1 = RT * (NBP + CWP);
const uint A2 = KSPLIT * NB * CW;
const uint A3 = RT3 * NBP;
const uint A_SIZE = A1 > A2 ? (A1 > A3 ? A1 : A3) : (A2 > A3 ? A2 : A3);
const uint W_OFF = A_SIZE;
const uint W2_OFF = W_OFF + NB * CW;
const uint T_OFF = W2_OFF + NB * CW;
shared T sm[T_OFF + NB * NB];

T vload(uint vbase, uint r, uint j) {
    if (r >= p.m || j >= p.kk) return T(0.0);
    return r > j ? vbuf[vbase + r * p.v_ld + j] : T(r == j ? 1.0 : 0.0);
}

// Tiles are loaded a step ahead into registers, so global-memory latency overlaps the arithmetic
// of the tile before (one or two workgroups per SM cannot hide it by occupancy).
const uint VPT1 = RT * NB / WGU;   // V values per thread per phase-1 tile
const uint CPT1 = RT * CW / WGU;   // C values per thread per phase-1 tile
const uint VPT3 = RT3 * NB / WGU;  // V values per thread per phase-3 tile
T pv1[VPT1];
T pc1[CPT1];
T pv3[VPT3];
T pc3[TI3][TJ];

void load1(uint vbase, uint cbase, uint ncw, uint r0) {
    UNROLL for (uint q = 0u; q < VPT1; q++) {
        uint e = gl_LocalInvocationIndex + q * WGU;
        pv1[q] = vload(vbase, r0 + e / NB, e % NB);
    }
    UNROLL for (uint q = 0u; q < CPT1; q++) {
        uint e = gl_LocalInvocationIndex + q * WGU;
        uint r = r0 + e / CW, c = e % CW;
        pc1[q] = (r < p.m && c < ncw) ? cbuf[cbase + r * p.c_ld + c] : T(0.0);
    }
}

void load3(uint vbase, uint cbase, uint ncw, uint r0, uint rg, uint cg) {
    UNROLL for (uint q = 0u; q < VPT3; q++) {
        uint e = gl_LocalInvocationIndex + q * WGU;
        pv3[q] = vload(vbase, r0 + e / NB, e % NB);
    }
    UNROLL for (uint i = 0u; i < TI3; i++) {
        uint r = r0 + rg * TI3 + i;
        UNROLL for (uint j = 0u; j < TJ; j++) {
            uint c = cg * TJ + j;
            pc3[i][j] = (r < p.m && c < ncw) ? cbuf[cbase + r * p.c_ld + c] : T(0.0);
        }
    }
}

// Row rr of a phase-1 tile into acc (W = V^T C).
#define W_ROW(rr) {                                                                          \
            T vv[TI], cc[TJ];                                                           \
            UNROLL for (uint i = 0u; i < TI; i++) vv[i] = sm[(rr) * NBP + ti * TI + i];     \
            UNROLL for (uint j = 0u; j < TJ; j++) cc[j] = sm[RT * NBP + (rr) * CWP + tj * TJ + j]; \
            UNROLL for (uint i = 0u; i < TI; i++)                                           \
                UNROLL for (uint j = 0u; j < TJ; j++) acc[i][j] += vv[i] * cc[j];           \
        }
// Column l of V times row l of W2, off acc3 (C -= V W2).
#define C_COL(l) {                                                                           \
            T vv[TI3], ww[TJ];                                                          \
            UNROLL for (uint i = 0u; i < TI3; i++) vv[i] = sm[(rg * TI3 + i) * NBP + (l)];  \
            UNROLL for (uint j = 0u; j < TJ; j++) ww[j] = sm[W2_OFF + (l) * CW + cg * TJ + j]; \
            UNROLL for (uint i = 0u; i < TI3; i++)                                          \
                UNROLL for (uint j = 0u; j < TJ; j++) acc3[i][j] -= vv[i] * ww[j];          \
        }

void main() {
    uint tid = gl_LocalInvocationIndex;
    uint b = gl_WorkGroupID.z;
    uint c0 = gl_WorkGroupID.x * CW;
    uint vbase = p.v_off + b * p.v_bs;
    uint cbase = p.c_off + b * p.c_bs + c0;
    uint ncw = min(CW, p.ncols - c0);
    uint m = p.m;

    // Phase 1: W = V^T C.
    uint ks = tid % KSPLIT;
    uint tile = tid / KSPLIT;
    uint ti = tile / NTJ, tj = tile % NTJ;
    T acc[TI][TJ];
    UNROLL for (uint i = 0u; i < TI; i++)
        UNROLL for (uint j = 0u; j < TJ; j++) acc[i][j] = 0.0;
    load1(vbase, cbase, ncw, 0u);
    for (uint r0 = 0u; r0 < m; r0 += RT) {
        UNROLL for (uint q = 0u; q < VPT1; q++) {
            uint e = tid + q * WGU;
            sm[(e / NB) * NBP + e % NB] = pv1[q];
        }
        UNROLL for (uint q = 0u; q < CPT1; q++) {
            uint e = tid + q * WGU;
            sm[RT * NBP + (e / CW) * CWP + e % CW] = pc1[q];
        }
        barrier();
        if (r0 + RT < m) load1(vbase, cbase, ncw, r0 + RT);
        uint rows = min(RT, m - r0);
#ifdef FIXED_TRIPS
        [[unroll]] for (uint q = 0u; q < (RT + KSPLIT - 1u) / KSPLIT; q++) {
            uint rr = ks + q * KSPLIT;
            if (rr < rows) W_ROW(rr)
        }
#else
        for (uint rr = ks; rr < rows; rr += KSPLIT) W_ROW(rr)
#endif
        barrier();
    }
    UNROLL for (uint i = 0u; i < TI; i++)
        UNROLL for (uint j = 0u; j < TJ; j++)
            sm[ks * NB * CW + (ti * TI + i) * CW + tj * TJ + j] = acc[i][j];
    for (uint e = tid; e < NB * NB; e += WGU) sm[T_OFF + e] = tbuf[p.t_off + b * p.t_bs + e];
    barrier();
    for (uint e = tid; e < NB * CW; e += WGU) {
        T s = 0.0;
        for (uint g = 0u; g < KSPLIT; g++) s += sm[g * NB * CW + e];
        sm[W_OFF + e] = s;
    }
    barrier();

    // Phase 2: W2 = op(T) W (T upper triangular; rows/columns >= kk are zero).
    uint cg = tid % NTJ, rg = tid / NTJ;
    load3(vbase, cbase, ncw, 0u, rg, cg);  // in flight during phase 2
    for (uint e = tid; e < NB * CW; e += WGU) {
        uint i = e / CW, c = e % CW;
        T s = 0.0;
#ifdef TRANS_T
        for (uint l = 0u; l <= i; l++) s += sm[T_OFF + l * NB + i] * sm[W_OFF + l * CW + c];
#else
        for (uint l = i; l < NB; l++) s += sm[T_OFF + i * NB + l] * sm[W_OFF + l * CW + c];
#endif
        sm[W2_OFF + e] = s;
    }

    // Phase 3: C -= V W2, RT3 rows at a time; each thread a TI3 x TJ block.
    uint kk = p.kk;
    for (uint r0 = 0u; r0 < m; r0 += RT3) {
        UNROLL for (uint q = 0u; q < VPT3; q++) {
            uint e = tid + q * WGU;
            sm[(e / NB) * NBP + e % NB] = pv3[q];
        }
        T acc3[TI3][TJ];
        UNROLL for (uint i = 0u; i < TI3; i++)
            UNROLL for (uint j = 0u; j < TJ; j++) acc3[i][j] = pc3[i][j];
        barrier();
        if (r0 + RT3 < m) load3(vbase, cbase, ncw, r0 + RT3, rg, cg);
#ifdef FIXED_TRIPS
        [[unroll]] for (uint l = 0u; l < NB; l++) {
            if (l < kk) C_COL(l)
        }
#else
        for (uint l = 0u; l < kk; l++) C_COL(l)
#endif
        UNROLL for (uint i = 0u; i < TI3; i++) {
            uint r = r0 + rg * TI3 + i;
            UNROLL for (uint j = 0u; j < TJ; j++) {
                uint c = cg * TJ + j;
                if (r < m && c < ncw) cbuf[cbase + r * p.c_ld + c] = acc3[i][j];
            }
        }
        barrier();
    }
}
