#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
#include "lib/math.glsl"
#include "lib/workgroup.glsl"
// @variants EIGH_INIT|EIGH_ROUND ?VECS
// @variants SVD_PAIRS
// @variants SVD_APPLY ?VECS
// @variants EIGH_INIT|EIGH_ROUND ?VECS F64 VK_WIDE VK_MATH64
// @variants SVD_PAIRS F64 VK_WIDE VK_MATH64 WG_T64=double ?SG_T64
// @variants SVD_APPLY ?VECS F64 VK_WIDE VK_MATH64
// Batched Jacobi rounds for eigh (two-sided, on the symmetric A) and svd (one-sided, Hestenes, on
// the columns of A), ops/eigen.py. Every round rotates N/2 disjoint index pairs at once, N = n
// rounded up to even (index n, where n is odd, is a dummy that never rotates), paired by the
// round-robin ("circle") schedule: in round r (0 <= r < N - 1), with M = N - 1, index M pairs with
// r and every other i < M with (2r - i) mod M. N - 1 rounds make a sweep that meets every pair once.
// Matrices are row-major, batch-major; items are flattened over the batch, one per invocation of a
// grid-stride loop, except SVD_PAIRS (one workgroup per pair and matrix: x = pair, z = matrix).
//   EIGH_INIT:  A[i][j] = x[max(i,j)][min(i,j)] (the lower triangle, as numpy reads it); V = I (VECS)
//   EIGH_ROUND: A_out = J^T A_in J, V_out = V_in J (VECS) for the round's rotations J, each computed
//     from A_in by every invocation that needs it (so one dispatch per round). A stays exactly
//     symmetric: (i, j) and (j, i) evaluate the same expression. Ping-pong halves of A and V.
//   SVD_PAIRS:  for each pair (p, q): alpha = |a_p|^2, beta = |a_q|^2, gamma = a_p . a_q over A's
//     m rows (a workgroup reduction), and the rotation (c, s) that makes the columns orthogonal.
//   SVD_APPLY:  a_p, a_q := c a_p - s a_q, s a_p + c a_q in place, on A's m rows and (VECS) V's n.
// Rotations: for the 2 x 2 symmetric [[app, apq], [apq, aqq]], t = tan of the angle that
// diagonalizes it (the smaller root, |angle| <= pi/4), c = 1 / sqrt(1 + t^2), s = t c (Rutishauser,
// as Numerical Recipes' jacobi); correctly rounded division and sqrt so that c^2 + s^2 = 1 to the
// last bit or two on every device.
// F64: float64 matrices (with VK_WIDE VK_MATH64: lib/math64.glsl's np_sqrt and np_divide; SVD_PAIRS
// with WG_T64=double for its workgroup sums, and SG_T64 where subgroup arithmetic takes doubles).
#ifdef F64
#define T double
const T EPS = 2.220446049250313e-16LF;
#else
#define T float
const T EPS = 1.1920929e-7;
#endif
layout(std430, binding = 0) buffer ABuf { T a[]; };
#if defined(EIGH_INIT) || defined(EIGH_ROUND) || defined(SVD_APPLY)
layout(std430, binding = 1) buffer VBuf { T v[]; };
#endif
#ifdef EIGH_INIT
layout(std430, binding = 2) readonly buffer XBuf { T x[]; };
#endif
#if defined(SVD_PAIRS) || defined(SVD_APPLY)
layout(std430, binding = 2) buffer CBuf { T cs[]; };  // (c, s) per pair and matrix
#endif

#if defined(EIGH_INIT) || defined(EIGH_ROUND)
layout(push_constant) uniform Push {
    uint a_in; uint a_out; uint v_in; uint v_out; uint n; uint nn; uint r; uint items;
} p;
#else
layout(push_constant) uniform Push {
    uint a_off; uint a_bs; uint v_off; uint c_off; uint c_bs; uint m; uint n; uint nn; uint r; uint items;
} p;
#endif

// The partner of index i in round r (module comment); >= n where it is the dummy.
uint partner(uint i) {
    uint mm = p.nn - 1u;
    if (i == mm) return p.r;
    if (i == p.r) return mm;
    return (2u * p.r + mm - i) % mm;
}

// (c, s, t) of the rotation that zeroes apq; the identity where apq is 0 or negligible beside the
// diagonal (|apq| <= tol sqrt(|app aqq|)), or the angle is below float32's resolution.
void rotation(T app, T aqq, T apq, T tol, out T c, out T s, out T t) {
    c = 1.0; s = 0.0; t = 0.0;
    if (!(abs(apq) > tol * np_sqrt(abs(app)) * np_sqrt(abs(aqq)))) return;
    T theta = np_divide(aqq - app, 2.0 * apq);
    T at = abs(theta);
    // 1 / (|theta| + sqrt(theta^2 + 1)); for |theta| past 2^30, 1 / (2 |theta|) (theta^2 may overflow)
    T root = at < 1073741824.0 ? np_sqrt(at * at + 1.0) : at;
    t = np_divide(1.0, at + root);
    if (theta < 0.0) t = -t;
    c = np_divide(1.0, np_sqrt(t * t + 1.0));
    s = t * c;
}

#if defined(EIGH_INIT)
void main() {
    uint n = p.n, nsq = n * n;
    GRID_STRIDE_LOOP(e, p.items) {
        uint b = e / nsq, rem = e - b * nsq;
        uint i = rem / n, j = rem % n;
        a[p.a_out + e] = x[p.a_in + b * nsq + max(i, j) * n + min(i, j)];
#ifdef VECS
        v[p.v_out + e] = i == j ? 1.0 : 0.0;
#endif
    }
}

#elif defined(EIGH_ROUND)
// Index i's column rotation: A J's column i = c A[:, i] + sg A[:, pi] (pi = i, sg = 0 where i does
// not rotate); t and whether i is the pair's first index, for the diagonal.
void coef(uint base, uint i, out T c, out T sg, out uint pi, out T t, out bool first) {
    pi = partner(i);
    first = i < pi;
    if (pi >= p.n) { c = 1.0; sg = 0.0; t = 0.0; pi = i; return; }
    uint lo = min(i, pi), hi = max(i, pi);
    T s;
    rotation(a[base + lo * p.n + lo], a[base + hi * p.n + hi], a[base + lo * p.n + hi], 0.0, c, s, t);
    sg = first ? -s : s;
}

void main() {
    uint n = p.n, nsq = n * n;
    GRID_STRIDE_LOOP(e, p.items) {
        uint b = e / nsq, rem = e - b * nsq;
        uint i = rem / n, j = rem % n;
        uint base = p.a_in + b * nsq;
        T ci, si, ti, cj, sj, tj;
        uint pi, pj;
        bool fi, fj;
        coef(base, i, ci, si, pi, ti, fi);
        coef(base, j, cj, sj, pj, tj, fj);
        // A' = J^T A J on the canonical (hi, lo) element, so that (i, j) and (j, i) agree bitwise
        uint hi = max(i, j), lo = min(i, j);
        T ch = i == hi ? ci : cj, sh = i == hi ? si : sj, cl = i == hi ? cj : ci, sl = i == hi ? sj : si;
        uint ph = i == hi ? pi : pj, pl = i == hi ? pj : pi;
        T out_;
        if (i == j) {      // the pair's diagonal: app - t apq, aqq + t apq
            T apq = a[base + i * n + pi];
            out_ = a[base + i * n + i] + (fi ? -ti : ti) * apq;
        } else if (pi == j) {
            out_ = 0.0;    // the element the rotation zeroes
        } else {
            out_ = ch * (cl * a[base + hi * n + lo] + sl * a[base + hi * n + pl])
                 + sh * (cl * a[base + ph * n + lo] + sl * a[base + ph * n + pl]);
        }
        a[p.a_out + e] = out_;
#ifdef VECS
        uint vb = p.v_in + b * nsq + i * n;
        v[p.v_out + e] = cj * v[vb + j] + sj * v[vb + pj];
#endif
    }
}

#elif defined(SVD_PAIRS)
void main() {
    uint k = gl_WorkGroupID.x, b = gl_WorkGroupID.z;
    uint mm = p.nn - 1u;
    uint i0 = k == 0u ? p.r : (p.r + k) % mm;
    uint i1 = k == 0u ? mm : (p.r + mm - k) % mm;
    uint lo = min(i0, i1), hi = max(i0, i1);
    uint cbase = p.c_off + b * p.c_bs + 2u * k;
    if (hi >= p.n) {  // the dummy: uniform over the workgroup
        if (gl_LocalInvocationID.x == 0u) { cs[cbase] = 1.0; cs[cbase + 1u] = 0.0; }
        return;
    }
    uint base = p.a_off + b * p.a_bs;
    T al = 0.0, be = 0.0, ga = 0.0;
    for (uint i = gl_LocalInvocationID.x; i < p.m; i += WG_SIZE) {
        T xl = a[base + i * p.n + lo], xh = a[base + i * p.n + hi];
        al += xl * xl;
        be += xh * xh;
        ga += xl * xh;
    }
    al = wg_reduce_add(al);
    be = wg_reduce_add(be);
    ga = wg_reduce_add(ga);
    if (gl_LocalInvocationID.x == 0u) {
        T c, s, t;
        rotation(al, be, ga, EPS, c, s, t);
        cs[cbase] = c;
        cs[cbase + 1u] = s;
    }
}

#elif defined(SVD_APPLY)
void main() {
    uint half_ = p.nn / 2u;
#ifdef VECS
    uint rows = p.m + p.n;
#else
    uint rows = p.m;
#endif
    uint per = rows * half_;
    uint mm = p.nn - 1u;
    GRID_STRIDE_LOOP(e, p.items) {
        uint b = e / per, rem = e - b * per;
        uint i = rem / half_, k = rem % half_;
        uint i0 = k == 0u ? p.r : (p.r + k) % mm;
        uint i1 = k == 0u ? mm : (p.r + mm - k) % mm;
        uint lo = min(i0, i1), hi = max(i0, i1);
        if (hi >= p.n) continue;
        uint cb = p.c_off + b * p.c_bs + 2u * k;
        T c = cs[cb], s = cs[cb + 1u];
        if (s == 0.0) continue;
        if (i < p.m) {
            uint row = p.a_off + b * p.a_bs + i * p.n;
            T xl = a[row + lo], xh = a[row + hi];
            a[row + lo] = c * xl - s * xh;
            a[row + hi] = s * xl + c * xh;
        }
#ifdef VECS
        else {
            uint row = p.v_off + b * p.n * p.n + (i - p.m) * p.n;
            T xl = v[row + lo], xh = v[row + hi];
            v[row + lo] = c * xl - s * xh;
            v[row + hi] = s * xl + c * xh;
        }
#endif
    }
}
#endif
