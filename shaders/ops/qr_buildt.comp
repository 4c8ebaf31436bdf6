#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
// @variants NB=8|16|32 ?FIXED_TRIPS
// @variants NB=8|16 ?FIXED_TRIPS F64 VK_WIDE VK_MATH64
// FIXED_TRIPS: the loops inside a row tile and over the 4 entries of G run fixed trip counts
// ([[unroll]], guarded), so that a device's loop budget (lavapipe) counts only the row tiles and
// T's recurrence (ops/qr.py: _buildt_cost).
#ifdef FIXED_TRIPS
#define FIXED [[unroll]]
#else
#define FIXED
#endif
// The compact-WY factor T of every NB-column block of given reflectors (apply_q and
// householder_product get only h and tau): workgroup x = block, z = batch.
//   G = V^T V (upper part), then row i of T by thread i:
//   T[i][i] = tau_i,  T[i][k] = -tau_k * sum_{l=i}^{k-1} T[i][l] G[l][k]   (k > i)
// V: M x K reflectors below the diagonal of a row-major matrix (unit diagonal implied).
#ifndef NB
#error "define NB"
#endif

// F64: float64 reflectors (NB <= 16: shared memory within 32 KiB).
#ifdef F64
#define T double
#else
#define T float
#endif
layout(std430, binding = 0) readonly buffer HBuf { T h[]; };
layout(std430, binding = 1) readonly buffer TauBuf { T tau_in[]; };
layout(std430, binding = 2) writeonly buffer TBuf { T t_out[]; };

layout(push_constant) uniform Push {
    uint h_off; uint ld; uint h_bs;
    uint rows;     // M
    uint k_total;  // K reflectors
    uint tau_off; uint tau_bs;
    uint t_off; uint t_bs;  // T blocks of NB*NB, one per block, then the next matrix
} p;

const uint RT = 64u;
const uint NBP = NB + 1u;
shared T vs[RT * NBP];
shared T g_sh[NB * NB];
shared T t_sh[NB * NB];

// Element e of the row tile at r0 (RT x NB) of V into shared memory.
#define V_LOAD(e) {                                                                          \
            uint rr = (e) / NB, j = (e) % NB;                                               \
            uint r = r0 + rr;                                                               \
            T v = T(0.0);                                                                   \
            if (r < m && j < kk) v = r > j ? h[base + r * p.ld + j] : T(r == j ? 1.0 : 0.0); \
            vs[rr * NBP + j] = v;                                                           \
        }

void main() {
    uint tid = gl_LocalInvocationIndex;
    uint b = gl_WorkGroupID.z;
    uint p0 = gl_WorkGroupID.x * NB;
    uint kk = min(NB, p.k_total - p0);
    uint m = p.rows - p0;
    uint base = p.h_off + b * p.h_bs + p0 * p.ld + p0;

    // Each thread accumulates the entries e = tid + q * WG_SIZE (q < 4: NB*NB <= 4 * WG_SIZE) of G.
    T acc[4];
    FIXED for (uint q = 0u; q < 4u; q++) acc[q] = 0.0;
    for (uint r0 = 0u; r0 < m; r0 += RT) {
#ifdef FIXED_TRIPS
        [[unroll]] for (uint q = 0u; q < (RT * NB + WG_SIZE - 1u) / WG_SIZE; q++) {
            uint e = tid + q * WG_SIZE;
            if (e < RT * NB) V_LOAD(e)
        }
#else
        for (uint e = tid; e < RT * NB; e += WG_SIZE) V_LOAD(e)
#endif
        barrier();
        uint rows = min(RT, m - r0);
        FIXED for (uint q = 0u; q < 4u; q++) {
            uint e = tid + q * WG_SIZE;
            if (e < NB * NB) {
                uint i = e / NB, j = e % NB;
                T s = acc[q];
#ifdef FIXED_TRIPS
                [[unroll]] for (uint rr = 0u; rr < RT; rr++)
                    if (rr < rows) s += vs[rr * NBP + i] * vs[rr * NBP + j];
#else
                for (uint rr = 0u; rr < rows; rr++) s += vs[rr * NBP + i] * vs[rr * NBP + j];
#endif
                acc[q] = s;
            }
        }
        barrier();
    }
    FIXED for (uint q = 0u; q < 4u; q++) {
        uint e = tid + q * WG_SIZE;
        if (e < NB * NB) { g_sh[e] = acc[q]; t_sh[e] = 0.0; }
    }
    barrier();
    if (tid < kk) {
        uint i = tid;
        t_sh[i * NB + i] = tau_in[p.tau_off + b * p.tau_bs + p0 + i];
        for (uint k = i + 1u; k < kk; k++) {
            T s = 0.0;
            for (uint l = i; l < k; l++) s += t_sh[i * NB + l] * g_sh[l * NB + k];
            t_sh[i * NB + k] = -tau_in[p.tau_off + b * p.tau_bs + p0 + k] * s;
        }
    }
    barrier();
    uint tb = p.t_off + b * p.t_bs + gl_WorkGroupID.x * NB * NB;
    for (uint e = tid; e < NB * NB; e += WG_SIZE) t_out[tb + e] = t_sh[e];
}
