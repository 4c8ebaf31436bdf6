#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
// @variants NB=8|16|32 RPT=1|2|4|8 ?UNROLL_K
// @variants NB=8|16|32 STREAM
// @variants NB=8|16 RPT=1|2|4|8 ?UNROLL_K F64 VK_WIDE VK_MATH64
// @variants NB=8|16 STREAM F64 VK_WIDE VK_MATH64
// QR panel: one workgroup factorises one tall-skinny panel (m rows x nb <= NB columns, starting at
// element (p0, p0) of a row-major matrix) by Householder reflections, in place, LAPACK's way:
// R on and above the diagonal, the reflectors v (unit diagonal implied) below it, tau[k], and the
// compact-WY factor T (NB x NB upper triangular, Q_panel = I - V T V^T) for the trailing update.
//
// One reduction of NB values per column k, over the rows below the pivot:
//   s_j = sum_{r>k} a_rk a_rj   ->  j == k: sigma (the norm^2 below the pivot)
//                                   j >  k: v_k^T a_j after scaling (the update of column j)
//                                   j <  k: V_j^T v_k (the column of T, a by-product)
// with the pivot row a_k* broadcast through shared memory; then each thread updates its own rows.
// The reduction is NB-wide rather than NB calls of wg_reduce_add: a transposed butterfly of
// NB - 1 subgroup shuffles, one pair of barriers per column (subgroup arithmetic, then shared
// memory, as fallbacks).
//
// Defines: NB (panel width, power of two <= 32), RPT (rows per thread kept in registers: row
// tid + i*WG_SIZE), or STREAM (rows tid, tid+WG_SIZE, ... read and written in memory every step:
// any m, slower); UNROLL_K: unroll the loop over the panel's columns, so that every test against
// the column index folds away and a step updates only the columns right of the pivot (GPUs; a CPU
// JIT would take minutes). QR_NO_UNROLL: [[dont_unroll]] instead of [[unroll]] (faster compiles on
// software rasterizers, slower runs). Batch: gl_WorkGroupID.z. Workgroup size >= NB, whole subgroups.
// F64: float64 matrices (with VK_WIDE VK_MATH64: the device's sqrt and divide, which Vulkan lets be
// only float32-accurate, refined by their exact residual to about an ulp: lib/math64.glsl; the
// correctly rounded np_sqrt/np_divide cost a fifth of the factorization's time on the H200).
#ifdef F64
#include "lib/math.glsl"
#define T double
#define QR_SQRT sqrt_refine_d
#define QR_DIV div_refine_d
#else
#define T float
#define QR_SQRT sqrt
#define QR_DIV(a, b) ((a) / (b))
#endif
#ifdef QR_NO_UNROLL
#define UNROLL [[dont_unroll]]
#else
#define UNROLL [[unroll]]
#endif
#ifndef NB
#error "define NB"
#endif
#if !defined(STREAM) && !defined(RPT)
#error "define RPT or STREAM"
#endif

layout(std430, binding = 0) buffer HBuf { T h[]; };
layout(std430, binding = 1) writeonly buffer TauBuf { T tau_out[]; };
layout(std430, binding = 2) writeonly buffer TBuf { T t_out[]; };

layout(push_constant) uniform Push {
    uint h_off;   // element (p0, p0) of matrix 0
    uint ld;      // row stride (the matrix's N)
    uint h_bs;    // batch stride
    uint m;       // rows of the panel (M - p0)
    uint nb;      // columns of the panel (<= NB)
    uint kk;      // reflectors to compute (min(nb, m, K - p0))
    uint tau_off; // tau[p0] of matrix 0
    uint tau_bs;
    uint t_off;   // this panel's T block of matrix 0
    uint t_bs;
} p;

#if defined(HAS_SUBGROUP_SHUFFLE) || defined(HAS_SUBGROUP_ARITHMETIC)
#define RED_SLOTS SUBGROUP_SLOTS
#else
#define RED_SLOTS WG_SIZE
#endif
shared T red_part[RED_SLOTS * NB];  // per-subgroup (or per-thread) partial sums
shared T red_sh[2 * NB];            // the sums, double-buffered by step parity
shared T rowk_sh[2 * NB];           // the pivot row, double-buffered by step parity
shared T t_sh[NB * NB];             // T transposed: t_sh[l*NB + i] = T[i][l]

T part[NB];  // this thread's partial sums of the step

// red_sh[par*NB + j] = sum over the workgroup of part[j] (visible to all on return).
void reduce_nb(uint par) {
    uint tid = gl_LocalInvocationIndex;
#if defined(HAS_SUBGROUP_SHUFFLE)
    // Transposed butterfly: each xor stage halves the values a lane holds, so NB values take
    // NB - 1 shuffles instead of NB * log2(subgroup size).
    uint lane = gl_SubgroupInvocationID;
    uint cnt = NB;
    uint base = 0u;
    UNROLL for (uint st = 0u; (1u << st) < NB; st++) {
        uint o = 1u << st;
        if (o < gl_SubgroupSize) {
            bool up = (lane & o) != 0u;
            uint hh = NB >> (st + 1u);
            UNROLL for (uint i = 0u; i < hh; i++) {
                T send = up ? part[i] : part[i + hh];
                T keep = up ? part[i + hh] : part[i];
                part[i] = keep + subgroupShuffleXor(send, o);
            }
            cnt = hh;
            if (up) base += hh;
        }
    }
    for (uint o = NB; o < gl_SubgroupSize; o <<= 1) part[0] += subgroupShuffleXor(part[0], o);
    if (lane < NB) {
        UNROLL for (uint i = 0u; i < NB; i++)
            if (i < cnt) red_part[gl_SubgroupID * NB + base + i] = part[i];
    }
    barrier();
    if (tid < NB) {
        T s = 0.0;
        for (uint g = 0u; g < gl_NumSubgroups; g++) s += red_part[g * NB + tid];
        red_sh[par * NB + tid] = s;
    }
#elif defined(HAS_SUBGROUP_ARITHMETIC)
    UNROLL for (uint j = 0u; j < NB; j++) {
        T s = subgroupAdd(part[j]);
        if (subgroupElect()) red_part[gl_SubgroupID * NB + j] = s;
    }
    barrier();
    if (tid < NB) {
        T s = 0.0;
        for (uint g = 0u; g < gl_NumSubgroups; g++) s += red_part[g * NB + tid];
        red_sh[par * NB + tid] = s;
    }
#else
    UNROLL for (uint j = 0u; j < NB; j++) red_part[tid * NB + j] = part[j];
    barrier();
    if (tid < NB) {
        T s = 0.0;
        for (uint g = 0u; g < WG_SIZE; g++) s += red_part[g * NB + tid];
        red_sh[par * NB + tid] = s;
    }
#endif
    barrier();
}

#ifdef STREAM
#define ROWS 1
#else
#define ROWS RPT
#endif
T a[ROWS][NB];  // this thread's rows of the panel (STREAM: the row at hand)
// After the step's reduction: u[j] = tau * v_k^T a_j for j > k (the update), V_j^T v_k for j < k (T).
T u[NB];

T pick(uint i, uint k) {
    T x = 0.0;
    UNROLL for (uint j = 0u; j < NB; j++) x = (j == k) ? a[i][j] : x;
    return x;
}

// Accumulate row i's share of the step-k sums; the pivot row goes to shared memory.
void row_accum(uint i, uint rr, uint k, uint par) {
    if (rr > k) {
        T x = pick(i, k);
        UNROLL for (uint j = 0u; j < NB; j++) part[j] += x * a[i][j];
    } else if (rr == k) {
        UNROLL for (uint j = 0u; j < NB; j++) rowk_sh[par * NB + j] = a[i][j];
    }
}

// Apply H_k to row i if it is at or below the pivot: a_j -= c * u_j for j > k, c = v_r (1 on the
// pivot row); column k becomes v_r (beta on the pivot row).
void row_update(uint i, uint rr, uint k, T beta, T scale) {
    if (rr >= k) {
        T c = rr > k ? pick(i, k) * scale : T(1.0);
        T rk = rr > k ? c : beta;
        UNROLL for (uint j = 0u; j < NB; j++)
            a[i][j] = (j == k) ? rk : ((j > k) ? a[i][j] - c * u[j] : a[i][j]);
    }
}

void load_row(uint i, uint base, uint rr) {
    UNROLL for (uint j = 0u; j < NB; j++) a[i][j] = (rr < p.m && j < p.nb) ? h[base + rr * p.ld + j] : 0.0;
}

// One column of the panel: Householder vector, tau, the update of the columns to its right, and
// column k of T.
void panel_step(uint k, uint tid, uint base, uint b) {
    uint par = k & 1u;
    UNROLL for (uint j = 0u; j < NB; j++) part[j] = 0.0;
#ifdef STREAM
    for (uint rr = tid; rr < p.m; rr += WG_SIZE) {
        if (rr < k) continue;
        load_row(0u, base, rr);
        row_accum(0u, rr, k, par);
    }
#else
    UNROLL for (uint i = 0u; i < RPT; i++) {
        uint rr = tid + i * WG_SIZE;
        if (rr < p.m) row_accum(i, rr, k, par);
    }
#endif
    reduce_nb(par);

    T alpha = rowk_sh[par * NB + k];
    T sigma = red_sh[par * NB + k];
    T tau, beta, scale;
    if (sigma == 0.0) {
        // Nothing below the pivot: H = I (LAPACK's tau = 0; R keeps alpha with its sign).
        tau = 0.0;
        beta = alpha;
        scale = 1.0;
    } else {
        T xnorm = QR_SQRT(alpha * alpha + sigma);
        beta = alpha >= 0.0 ? -xnorm : xnorm;
        tau = QR_DIV(beta - alpha, beta);
        scale = QR_DIV(T(1.0), alpha - beta);
    }
    UNROLL for (uint j = 0u; j < NB; j++) {
        T w = rowk_sh[par * NB + j] + red_sh[par * NB + j] * scale;
        u[j] = (j > k) ? tau * w : w;
    }

#ifdef STREAM
    for (uint rr = tid; rr < p.m; rr += WG_SIZE) {
        if (rr < k) continue;
        load_row(0u, base, rr);
        row_update(0u, rr, k, beta, scale);
        UNROLL for (uint j = 0u; j < NB; j++)
            if (j < p.nb && j >= k) h[base + rr * p.ld + j] = a[0][j];
    }
#else
    UNROLL for (uint i = 0u; i < RPT; i++) {
        uint rr = tid + i * WG_SIZE;
        if (rr < p.m) row_update(i, rr, k, beta, scale);
    }
#endif

    // Column k of T: T[i][k] = -tau * sum_{l=i}^{k-1} T[i][l] * (V_l^T v_k), thread i for row i
    // (row i of T is only ever written and read by thread i: no barrier of its own). With UNROLL_K
    // the loop has a constant length and its loads go out together.
    if (tid < k) {
        T s = 0.0;
        UNROLL for (uint l = 0u; l < NB; l++)
            if (l < k && l >= tid) s += t_sh[l * NB + tid] * u[l];
        t_sh[k * NB + tid] = -tau * s;
    } else if (tid == k) {
        t_sh[k * NB + k] = tau;
        tau_out[p.tau_off + b * p.tau_bs + k] = tau;
    }
}

void main() {
    uint tid = gl_LocalInvocationIndex;
    uint b = gl_WorkGroupID.z;
    uint base = p.h_off + b * p.h_bs;

    for (uint e = tid; e < NB * NB; e += WG_SIZE) t_sh[e] = 0.0;
#ifndef STREAM
    UNROLL for (uint i = 0u; i < RPT; i++) load_row(i, base, tid + i * WG_SIZE);
#endif
    barrier();

#ifdef UNROLL_K
    [[unroll]] for (uint k = 0u; k < NB; k++)
        if (k < p.kk) panel_step(k, tid, base, b);
#else
    for (uint k = 0u; k < p.kk; k++) panel_step(k, tid, base, b);
#endif

#ifndef STREAM
    UNROLL for (uint i = 0u; i < RPT; i++) {
        uint rr = tid + i * WG_SIZE;
        if (rr < p.m) {
            UNROLL for (uint j = 0u; j < NB; j++)
                if (j < p.nb) h[base + rr * p.ld + j] = a[i][j];
        }
    }
#endif
    barrier();
    for (uint e = tid; e < NB * NB; e += WG_SIZE) t_out[p.t_off + b * p.t_bs + e] = t_sh[(e % NB) * NB + e / NB];
}
