#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "lib/workgroup.glsl"
// @variants T_IN=float T=float T_OUT=float IS_FLOAT RED_OP=add|mul ?LAYOUT_ROW UNROLL=4 ?DIVIDE
// @variants T_IN=float T=float T_OUT=float IS_FLOAT RED_OP=min|max NAN_AWARE ?LAYOUT_ROW UNROLL=4
// @variants T_IN=int|uint|float T=int T_OUT=int RED_OP=add|and|or ?TRUTH ?LAYOUT_ROW UNROLL=4
// @variants T_IN=float|int T=float|int T_OUT=int ARG_OP=max|min ?LAYOUT_ROW UNROLL=4
// @variants T_IN=float T=float T_OUT=float IS_FLOAT DEV ?LAYOUT_ROW UNROLL=4 DIVIDE ?SQRT
// @variants T_IN=int T=int T_OUT=float DEV ?LAYOUT_ROW UNROLL=4 DIVIDE ?SQRT
// @variants T_IN=uint T=uint T_OUT=float DEV ?LAYOUT_ROW UNROLL=4 DIVIDE ?SQRT
// out[o * inner + i] = REDUCE over j of x[o, j, i], for x C-contiguous of shape (outer, n, inner).
//
// Defines (vkbackend/primitives/reduce.py sets them):
//   T_IN, T, T_OUT  element types of x, of the accumulation, of out; IS_FLOAT when T is float.
//   The state one invocation accumulates, by operation:
//     RED_OP=add|mul|min|max|and|or  a value of T (NAN_AWARE: float min/max where NaN wins, as numpy)
//     ARG_OP=max|min                 value and index: first NaN, else extreme value, else lowest index
//     DEV                            count and the sums of d and d^2, d = x - pivot[output] (T = T_IN;
//                                    see the DEV section), as double-floats: var and std
//   TRUTH      elements enter as T(x != 0) (all/any).
//   DIVIDE     out = value / p.den with numpy's x/0 rules (mean); DEV: var with p.den = ddof. SQRT after.
//   LAYOUT_ROW inner == 1 and one output per workgroup: vec4 loads, lib/workgroup.glsl merge
//              (DEV: the tree below). Otherwise a workgroup takes COLS outputs with ROWS
//              invocations along n each, merged by a shared-memory tree.
//   UNROLL     loads in flight per invocation.
// Spec constants: 2 COLS (outputs per workgroup, a power of two); 3 ROW_FAST (1: consecutive
//   invocations walk n, for rows of inner == 1; 0: they walk outputs, coalesced along inner).
// Grid: x walks tiles of COLS outputs (grid-stride); y splits n into p.splits chunks of p.chunk.
// With p.splits > 1 each workgroup publishes a partial state; the last one to arrive at its tile's
// counter merges them and sets the counter back to 0: one dispatch, no second pass over the data.
// Bindings: 0 x, 1 out, 2 partial states (32-bit words), 3 tile counters (0 between dispatches);
// DEV: 4 the pivots, from p.piv_off.
layout(constant_id = 2) const uint COLS = 1u;
layout(constant_id = 3) const uint ROW_FAST = 0u;
const uint ROWS = WG_SIZE / COLS;

layout(push_constant) uniform Push {
    uint n; uint inner; uint outputs; uint tiles; uint x_off; uint out_off; uint splits; uint chunk;
    float den; uint piv_off;
} p;

#define vec4_of_float vec4
#define vec4_of_int ivec4
#define vec4_of_uint uvec4
#define VEC_IN PASTE(vec4_of_, T_IN)
layout(std430, binding = 0) readonly buffer X { T_IN x_[]; };
layout(std430, binding = 0) readonly buffer XV { VEC_IN xv_[]; };  // the same words, 16 bytes at a time
layout(std430, binding = 1) writeonly buffer Out { T_OUT out_[]; };
layout(std430, binding = 2) coherent buffer Partials { uint part_[]; };
layout(std430, binding = 3) coherent buffer Counters { uint counter_[]; };

#ifdef TRUTH
T elem(T_IN x) { return T(x != T_IN(0)); }
#else
T elem(T_IN x) { return T(x); }
#endif

// numpy's x / 0 for a count of 0: 0/0 and nan/0 -> nan, +-x/0 -> +-inf.
float divide_by_count(float x, float den) {
    if (den > 0.0) return x / den;
    return (x == 0.0 || isnan(x)) ? NAN : (x > 0.0 ? INF : -INF);
}

// ---- states: s_identity, s_single (one element), s_combine (associative), wg_merge (whole
// workgroup, from uniform control flow), s_store / s_load (partials), S_VALUE (what is output) ----
#if defined(ARG_OP)
struct S { T v; uint i; };
const uint S_WORDS = 2u;
S s_identity() { return S(PASTE(identity_, ARG_OP)(T(0)), ~0u); }
S s_single(T x, uint i) { return S(x, i); }
#ifdef IS_FLOAT
bool is_nan(T v) { return isnan(v); }
#else
bool is_nan(T v) { return false; }
#endif
S s_combine(S a, S b) {
    bool an = is_nan(a.v), bn = is_nan(b.v);
    T best = PASTE(combine_, ARG_OP)(a.v, b.v);
    bool take_b = (an || bn) ? bn && (!an || b.i < a.i) : b.v == best && (a.v != best || b.i < a.i);
    return take_b ? b : a;
}
S wg_merge(S s) {
    uint nan_any = 0u;
#ifdef IS_FLOAT
    nan_any = wg_reduce_or(uint(isnan(s.v)));
#endif
    T best = PASTE(wg_reduce_, ARG_OP)(is_nan(s.v) ? s_identity().v : s.v);
    bool candidate = nan_any != 0u ? is_nan(s.v) : s.v == best;
    uint i = wg_reduce_min(candidate ? s.i : ~0u);
#ifdef IS_FLOAT
    if (nan_any != 0u) best = NAN;
#endif
    return S(best, i);
}
void s_store(uint k, S s) { part_[2u * k] = to_bits(s.v); part_[2u * k + 1u] = s.i; }
S s_load(uint k) { return S(FROM_BITS(T, part_[2u * k]), part_[2u * k + 1u]); }
#define S_VALUE(s) (s).i

#elif defined(DEV)
// var and std in two passes: reduce.py's first pass writes each output's mean, rounded to an
// integer for integer data (the pivot); this one sums d = x - pivot and d^2 as double-floats and
// finishes with m2 = sum(d^2) - sum(d)^2 / n, also in double-float, which removes what the pivot
// is off the true mean (Chan, Golub & LeVeque's corrected two-pass algorithm). For integers d is
// exact (below 2**24), so var is numpy's float64 result correctly rounded to float32 up to about
// 2**-40 relative; for floats d rounds once (exact where x is within a factor 2 of the pivot).
// Double-float arithmetic: lib/math.glsl's; the sums accumulate unnormalized (df_accumulate).
#define TREE_MERGE  // the states merge in a shared-memory tree: lib/workgroup.glsl sums single floats
layout(std430, binding = 4) readonly buffer Pivot { float pivot_[]; };
struct S { uint n; vec2 s1; vec2 s2; };
const uint S_WORDS = 5u;
S s_identity() { return S(0u, vec2(0.0), vec2(0.0)); }

#ifdef IS_FLOAT
float g_pivot;
void set_pivot(uint col) { g_pivot = pivot_[p.piv_off + col]; }
// An infinite element gives a NaN deviation (numpy's var is NaN then: inf - inf), so that an
// infinite sum can only come from finite data past float32's range.
float deviation(float x) { return isinf(x) ? NAN : x - g_pivot; }
#else
T g_pivot;
// The mean rounded to T, clamped into T's range (a float mean of values near the top of the range
// may round past it; the mean of nothing is NaN).
int to_pivot(float m, int t) { return isnan(m) ? 0 : int(clamp(round(m), -2147483648.0, 2147483520.0)); }
uint to_pivot(float m, uint t) { return isnan(m) ? 0u : uint(clamp(round(m), 0.0, 4294967040.0)); }
void set_pivot(uint col) { g_pivot = to_pivot(pivot_[p.piv_off + col], T(0)); }
// x - pivot exactly in 16-bit halves (each difference fits a float exactly), rounded once: the
// difference of two int32s may not fit one.
float deviation(T x) {
    return float(int(x >> 16) - int(g_pivot >> 16)) * 65536.0 + float(int(x & T(0xffff)) - int(g_pivot & T(0xffff)));
}
#endif

// a + b with hi the plain float32 sum (inf and NaN propagate through it as through any sum) and
// lo gathering the rounding errors: Ogita, Rump & Oishi's Sum2, here along the reduction's tree.
vec2 df_accumulate(vec2 a, vec2 b) {
    vec2 s = two_sum(a.x, b.x);
    precise float lo = (a.y + b.y) + s.y;
    return vec2(s.x, lo);
}

S s_single(T x, uint i) {
    precise float d = deviation(x);
    precise float d2 = d * d;
    return S(1u, vec2(d, 0.0), vec2(d2, 0.0));
}
S s_combine(S a, S b) { return S(a.n + b.n, df_accumulate(a.s1, b.s1), df_accumulate(a.s2, b.s2)); }
void s_store(uint k, S s) {
    part_[5u * k] = s.n;
    part_[5u * k + 1u] = floatBitsToUint(s.s1.x); part_[5u * k + 2u] = floatBitsToUint(s.s1.y);
    part_[5u * k + 3u] = floatBitsToUint(s.s2.x); part_[5u * k + 4u] = floatBitsToUint(s.s2.y);
}
S s_load(uint k) {
    return S(part_[5u * k], uintBitsToFloat(uvec2(part_[5u * k + 1u], part_[5u * k + 2u])),
             uintBitsToFloat(uvec2(part_[5u * k + 3u], part_[5u * k + 4u])));
}

// m2 / (n - ddof), or its square root, from the sums; scaled by a power of two (exact) so that the
// double-float steps neither overflow (Veltkamp's split multiplies by 4097) nor lose bits.
float dev_finish(S s) {
    float n = float(s.n);
    float ddof = p.den;
    if (!(isinf(s.s1.x) || isnan(s.s1.x) || isinf(s.s2.x) || isnan(s.s2.x))) {
        int e;
        frexp(s.s2.x, e);
        int k = e / 2;  // d scaled by 2**-k: sum(d^2) near 1
        vec2 s1 = two_sum(ldexp(s.s1.x, -k), ldexp(s.s1.y, -k));
        vec2 s2 = two_sum(ldexp(s.s2.x, -2 * k), ldexp(s.s2.y, -2 * k));
        vec2 nn = vec2(n, float(int(s.n - uint(n))));  // the count exactly
        vec2 m2 = df_add(s2, -df_mul(df_div(s1, nn), s1));
        vec2 den = df_add(nn, vec2(-ddof, 0.0));
        if (!(m2.x > 0.0)) m2 = vec2(0.0);  // rounding below an exact 0, and -0.0
        if (den.x <= 0.0) return divide_by_count(m2.x, 0.0);
        vec2 v = df_div(m2, den);
#ifdef SQRT
        return v.x > 0.0 ? ldexp(df_sqrt(v).x, k) : 0.0;
#else
        return ldexp(v.x, 2 * k);
#endif
    }
    // NaN or inf in the data: NaN; finite data whose deviations or their squares pass float32's
    // range: inf (numpy's float64 var may still be finite when n * var is past 3.4e38)
    return isnan(s.s1.x) || isnan(s.s2.x) ? NAN : INF;
}

#else  // RED_OP: the state is the running value
#define S T
const uint S_WORDS = 1u;
S s_identity() { return PASTE(identity_, RED_OP)(T(0)); }
S s_single(T x, uint i) { return x; }
#ifdef NAN_AWARE
S s_combine(S a, S b) { return PASTE(np_, RED_OP)(a, b); }
S wg_merge(S s) {
    uint nan_any = wg_reduce_or(uint(isnan(s)));
    S r = PASTE(wg_reduce_, RED_OP)(isnan(s) ? s_identity() : s);
    return nan_any != 0u ? NAN : r;
}
#else
S s_combine(S a, S b) { return PASTE(combine_, RED_OP)(a, b); }
S wg_merge(S s) { return PASTE(wg_reduce_, RED_OP)(s); }
#endif
void s_store(uint k, S s) { part_[k] = to_bits(s); }
S s_load(uint k) { return FROM_BITS(T, part_[k]); }
#define S_VALUE(s) (s)
#endif

T_OUT s_finish(S s) {
#if defined(DEV)
    return dev_finish(s);
#elif defined(DIVIDE)
    float r = divide_by_count(S_VALUE(s), p.den);
#ifdef SQRT
    r = np_sqrt(r);
#endif
    return T_OUT(r);
#else
    return T_OUT(S_VALUE(s));
#endif
}

// ---- per-invocation accumulation ----
// Folds x[base + j * stride] into s for j = lo + r, lo + r + ROWS, ... < hi (element index j).
S fold(S s, uint base, uint stride, uint lo, uint hi, uint r) {
    uint j = lo + r;
    for (; j + (UNROLL - 1u) * ROWS < hi; j += UNROLL * ROWS) {
        T v[UNROLL];
        [[unroll]] for (uint u = 0u; u < UNROLL; ++u) v[u] = elem(x_[base + (j + u * ROWS) * stride]);
        [[unroll]] for (uint u = 0u; u < UNROLL; ++u) s = s_combine(s, s_single(v[u], j + u * ROWS));
    }
    for (; j < hi; j += ROWS) s = s_combine(s, s_single(elem(x_[base + j * stride]), j));
    return s;
}

#ifdef LAYOUT_ROW
// One state per vec4 lane: four independent chains.
void fold_vec(inout S acc[4], VEC_IN v, uint j) {
    [[unroll]] for (uint k = 0u; k < 4u; ++k) acc[k] = s_combine(acc[k], s_single(elem(v[k]), j + k));
}

// Folds x[base + j] for j in [lo, hi): scalar up to a 16-byte boundary, vec4 loads (UNROLL in
// flight), then the scalar tail.
S fold_row(uint base, uint lo, uint hi, uint r) {
    uint v_lo = lo + min((4u - ((base + lo) & 3u)) & 3u, hi - lo);  // first element of the vec4 body
    uint nv = (hi - v_lo) >> 2;
    uint vbase = (base + v_lo) >> 2;
    S acc[4] = S[4](s_identity(), s_identity(), s_identity(), s_identity());
    acc[0] = fold(acc[0], base, 1u, lo, v_lo, r);
    uint j = r;
    for (; j + (UNROLL - 1u) * ROWS < nv; j += UNROLL * ROWS) {
        VEC_IN v[UNROLL];
        [[unroll]] for (uint u = 0u; u < UNROLL; ++u) v[u] = xv_[vbase + j + u * ROWS];
        [[unroll]] for (uint u = 0u; u < UNROLL; ++u) fold_vec(acc, v[u], v_lo + 4u * (j + u * ROWS));
    }
    for (; j < nv; j += ROWS) fold_vec(acc, xv_[vbase + j], v_lo + 4u * j);
    acc[1] = fold(acc[1], base, 1u, v_lo + 4u * nv, hi, r);
    return s_combine(s_combine(acc[0], acc[1]), s_combine(acc[2], acc[3]));
}

S fold_output(uint col, uint lo, uint hi, uint r) { return fold_row(p.x_off + col * p.n, lo, hi, r); }
#else
S fold_output(uint col, uint lo, uint hi, uint r) {
    uint o = col / p.inner, i = col - o * p.inner;
    return fold(s_identity(), p.x_off + o * p.n * p.inner + i, p.inner, lo, hi, r);
}
#endif

#if defined(LAYOUT_ROW) && !defined(TREE_MERGE)
S merge_rows(S s, uint r, uint c) { return wg_merge(s); }
#else
shared S tree[WG_SIZE];
// Merges the ROWS states of each output column; the result is valid where r == 0.
S merge_rows(S s, uint r, uint c) {
    tree[r * COLS + c] = s;
    for (uint step = ROWS >> 1; step > 0u; step >>= 1) {
        barrier();
        if (r < step) {
            s = s_combine(s, tree[(r + step) * COLS + c]);
            tree[r * COLS + c] = s;
        }
    }
    barrier();
    return s;
}
#endif

// ---- split reductions: publish a partial; true in the last workgroup of the tile to arrive ----
shared bool arrived_last;

bool publish(uint tile, uint col, S s, bool writer) {
    if (writer) s_store(gl_WorkGroupID.y * p.outputs + col, s);
    memoryBarrierBuffer();
    barrier();
    if (gl_LocalInvocationIndex == 0u)
        arrived_last = atomicAdd(counter_[tile], 1u) == p.splits - 1u;
    barrier();
    memoryBarrierBuffer();
    return arrived_last;
}

S merge_partials(uint col, uint r) {
    S s = s_identity();
    for (uint k = r; k < p.splits; k += ROWS) s = s_combine(s, s_load(k * p.outputs + col));
    return s;
}

void main() {
    uint tid = gl_LocalInvocationIndex;
    uint r = ROW_FAST != 0u ? tid % ROWS : tid / COLS;
    uint c = ROW_FAST != 0u ? tid / ROWS : tid % COLS;
    uint lo = gl_WorkGroupID.y * p.chunk, hi = min(p.n, lo + p.chunk);
    for (uint tile = gl_WorkGroupID.x; tile < p.tiles; tile += gl_NumWorkGroups.x) {
        uint col = tile * COLS + c;
        bool live = col < p.outputs;
#ifdef DEV
        if (live) set_pivot(col);
#endif
        S s = merge_rows(live ? fold_output(col, lo, hi, r) : s_identity(), r, c);
        bool writer = live && r == 0u;
        if (p.splits > 1u) {
            if (!publish(tile, col, s, writer)) continue;
            s = merge_rows(live ? merge_partials(col, r) : s_identity(), r, c);
            if (tid == 0u) counter_[tile] = 0u;
        }
        if (writer) out_[p.out_off + col] = s_finish(s);
    }
}
