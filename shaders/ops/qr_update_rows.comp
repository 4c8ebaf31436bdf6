#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
// @variants NB=8|16 PHASE=1|2 ?TRANS_T
// @variants NB=8|16 PHASE=1|2 ?TRANS_T F64 VK_WIDE VK_MATH64
// One compact-WY block reflector on a large corner, streamed over row chunks in two dispatches:
//     C := C - V * op(T) * (V^T * C)        op(T) = T^T (TRANS_T: C := Q_b^T C) or T (C := Q_b C)
// qr_update.comp gives one workgroup a strip of columns over all rows, staging row tiles through
// shared memory between barriers: a big corner then runs one workgroup per SM, latency-bound (a
// quarter of the copy's bandwidth on an H200). Here every workgroup (x: a strip of SW columns, y: a
// chunk of rows, z: the matrix) streams its rows straight from memory, each thread CPT columns of
// a row at a time with the row's NB values of V (the same for a whole subgroup: one broadcast
// load), no barrier inside the loop (4 rows a step, their loads together, measured slower there):
//   PHASE=1  W_chunk = V_chunk^T C_chunk (NB x SW), the workgroup's row groups summed in shared
//            memory, stored at p.w_off (NB x ncols per chunk, then the next matrix at p.w_bs);
//   PHASE=2  W = the sum of the chunks' W, W2 = op(T) W, then C_chunk -= V_chunk W2.
// V: m x NB, unit lower trapezoidal below the diagonal of a row-major matrix (element (0, 0) at
// v_off); only its first kk columns are reflectors. C: m x ncols at c_off (row stride c_ld); may be
// the same buffer as V (disjoint columns). Workgroup: a multiple of TX invocations.
// F64: float64 matrices.
#ifndef NB
#error "define NB"
#endif
#ifndef PHASE
#error "define PHASE"
#endif
#ifdef F64
#define T double
#else
#define T float
#endif

const uint TX = 32u;            // invocations along a row (whatever the subgroup size)
const uint CPT = 4u;            // columns per invocation: c0 + j * TX + tx
const uint SW = TX * CPT;       // columns per workgroup
const uint ROWG = WG_SIZE / TX; // row groups: rows r_lo + ty, + ROWG, ...

layout(std430, binding = 0) readonly buffer VBuf { T vbuf[]; };
layout(std430, binding = 1) readonly buffer TBuf { T tbuf[]; };
layout(std430, binding = 2) buffer CBuf { T cbuf[]; };
layout(std430, binding = 3) buffer WBuf { T wbuf[]; };

layout(push_constant) uniform Push {
    uint v_off; uint v_ld; uint v_bs;
    uint m; uint kk;
    uint t_off; uint t_bs;
    uint c_off; uint c_ld; uint c_bs;
    uint ncols;
    uint chunk_rows;
    uint w_off; uint w_bs;
} p;

// V[r][l]: unit diagonal, zeros above it and past the kk reflectors
#define VAL(r, l) ((l) < kk && (r) >= (l) ? ((r) > (l) ? vbuf[vbase + (r) * p.v_ld + (l)] : T(1.0)) : T(0.0))

shared T wsh[NB * SW];
#if PHASE == 2
shared T w2sh[NB * SW];
shared T tsh[NB * NB];
#endif

void main() {
    uint tid = gl_LocalInvocationIndex;
    uint tx = tid % TX, ty = tid / TX;
    uint b = gl_WorkGroupID.z;
    uint c0 = gl_WorkGroupID.x * SW;
    uint chunk = gl_WorkGroupID.y;
    uint r_lo = chunk * p.chunk_rows;
    uint r_hi = min(p.m, r_lo + p.chunk_rows);
    uint kk = p.kk;
    uint vbase = p.v_off + b * p.v_bs;
    uint cbase = p.c_off + b * p.c_bs + c0 + tx;
    uint wbase = p.w_off + b * p.w_bs;
    uint ncw = min(SW, p.ncols - c0);
    bool live[CPT];
    [[unroll]] for (uint j = 0u; j < CPT; j++) live[j] = j * TX + tx < ncw;

#if PHASE == 1
    T acc[NB][CPT];
    [[unroll]] for (uint l = 0u; l < NB; l++)
        [[unroll]] for (uint j = 0u; j < CPT; j++) acc[l][j] = T(0.0);
    for (uint r = r_lo + ty; r < r_hi; r += ROWG) {
        T c[CPT];
        [[unroll]] for (uint j = 0u; j < CPT; j++)
            c[j] = live[j] ? cbuf[cbase + r * p.c_ld + j * TX] : T(0.0);
        [[unroll]] for (uint l = 0u; l < NB; l++) {
            T v = VAL(r, l);
            [[unroll]] for (uint j = 0u; j < CPT; j++) acc[l][j] += v * c[j];
        }
    }
    // The row groups' sums, one group after another (shared memory holds one NB x SW block).
    [[unroll]] for (uint g = 0u; g < ROWG; g++) {
        if (ty == g)
            [[unroll]] for (uint l = 0u; l < NB; l++)
                [[unroll]] for (uint j = 0u; j < CPT; j++) {
                    uint e = l * SW + j * TX + tx;
                    wsh[e] = g == 0u ? acc[l][j] : wsh[e] + acc[l][j];
                }
        barrier();
    }
    for (uint e = tid; e < NB * SW; e += WG_SIZE) {
        uint l = e / SW, c = e % SW;
        if (c < ncw) wbuf[wbase + (chunk * NB + l) * p.ncols + c0 + c] = wsh[e];
    }
#else
    // W = the sum of every chunk's W; op(T) W; then C_chunk -= V W2.
    uint chunks = gl_NumWorkGroups.y;
    for (uint e = tid; e < NB * SW; e += WG_SIZE) {
        uint l = e / SW, c = e % SW;
        T s = T(0.0);
        if (c < ncw && l < kk)
            for (uint g = 0u; g < chunks; g++) s += wbuf[wbase + (g * NB + l) * p.ncols + c0 + c];
        wsh[e] = s;
    }
    for (uint e = tid; e < NB * NB; e += WG_SIZE) tsh[e] = tbuf[p.t_off + b * p.t_bs + e];
    barrier();
    for (uint e = tid; e < NB * SW; e += WG_SIZE) {
        uint i = e / SW, c = e % SW;
        T s = T(0.0);
        [[unroll]] for (uint l = 0u; l < NB; l++) {
#ifdef TRANS_T
            if (l <= i && i < kk) s += tsh[l * NB + i] * wsh[l * SW + c];
#else
            if (l >= i && l < kk) s += tsh[i * NB + l] * wsh[l * SW + c];
#endif
        }
        w2sh[e] = s;
    }
    barrier();
    T w2[NB][CPT];
    [[unroll]] for (uint l = 0u; l < NB; l++)
        [[unroll]] for (uint j = 0u; j < CPT; j++) w2[l][j] = w2sh[l * SW + j * TX + tx];
    for (uint r = r_lo + ty; r < r_hi; r += ROWG) {
        T c[CPT];
        [[unroll]] for (uint j = 0u; j < CPT; j++)
            c[j] = live[j] ? cbuf[cbase + r * p.c_ld + j * TX] : T(0.0);
        [[unroll]] for (uint l = 0u; l < NB; l++) {
            T v = VAL(r, l);
            [[unroll]] for (uint j = 0u; j < CPT; j++) c[j] -= v * w2[l][j];
        }
        [[unroll]] for (uint j = 0u; j < CPT; j++)
            if (live[j]) cbuf[cbase + r * p.c_ld + j * TX] = c[j];
    }
#endif
}
