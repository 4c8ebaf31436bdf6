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
//   T_IN, T, T_OUT  element types of x, of the accumulation, of out; IS_FLOAT when T is float or
//              double. Any of vkbackend/dtypes.py's: 8/16-bit integers accumulate as int/uint.
//   T64        T is 64-bit (int64_t, uint64_t, double; WG_T64 = T, see lib/workgroup.glsl): a
//              value is two words in the partial states.
//   The state one invocation accumulates, by operation:
//     RED_OP=add|mul|min|max|and|or  a value of T (NAN_AWARE: float min/max where NaN wins, as numpy)
//     ARG_OP=max|min                 value and index: first NaN, else extreme value, else lowest index
//     DEV                            count and the sums of d and d^2, d = x - pivot[output] (T = T_IN;
//                                    see the DEV section), as double-floats: var and std
//                                    (DEV64: as double-doubles, for float64 results)
//     DD_SUM                         float64 sums (RED_OP add, T double) as double-doubles
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
// DEV: 4 the pivots, from p.piv_off. DD_SUM: p.count, the exact count mean divides by.
layout(constant_id = 2) const uint COLS = 1u;
layout(constant_id = 3) const uint ROW_FAST = 0u;
const uint ROWS = WG_SIZE / COLS;

layout(push_constant) uniform Push {
    uint n; uint inner; uint outputs; uint tiles; uint x_off; uint out_off; uint splits; uint chunk;
    float den; uint piv_off;
#ifdef DD_SUM
    uint count;
#endif
} p;

#define vec4_of_float vec4
#define vec4_of_int ivec4
#define vec4_of_uint uvec4
#define vec4_of_int8_t i8vec4
#define vec4_of_uint8_t u8vec4
#define vec4_of_int16_t i16vec4
#define vec4_of_uint16_t u16vec4
#define vec4_of_int64_t i64vec4
#define vec4_of_uint64_t u64vec4
#define vec4_of_double dvec4
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

#if defined(DD_SUM) || defined(DEV64)
// ---- double-doubles (hi, lo): float64 sums as accurate as in twice the precision ----
// hi is the plain double sum along the reduction's tree (inf and NaN propagate through it as
// through any sum) and lo gathers its rounding errors, each exact (Knuth's two-sum): Ogita, Rump
// & Oishi's Sum2, whose error is about one rounding of the result plus n * eps^2 of the sum of
// magnitudes, below numpy's pairwise sum's. (Self-contained: these kernels do not include
// lib/math64.glsl, which needs shaderInt64.)
dvec2 red_two_sum(double a, double b) {
    precise double s = a + b;
    precise double bb = s - a;
    precise double e = (a - (s - bb)) + (b - bb);
    return dvec2(s, e);
}
// a * b = p + e exactly (Dekker, no fma: Vulkan's may be a separate multiply and add), for
// |a|, |b| below 2**996.
dvec2 red_two_prod(double a, double b) {
    precise double ca = 134217729.0LF * a, cb = 134217729.0LF * b;
    precise double ah = ca - (ca - a), bh = cb - (cb - b);
    precise double al = a - ah, bl = b - bh;
    precise double p = a * b;
    precise double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    return dvec2(p, e);
}
// The device's double division and sqrt, which Vulkan holds only to single precision's accuracy;
// VK_TEST_INEXACT_BUILTINS (tests) makes them 2^-30 off, as lib/math64.glsl's guesses, to show on
// exact devices that no result depends on them.
#ifdef VK_TEST_INEXACT_BUILTINS
double red_div(double a, double b) { precise double q = a / b; precise double r = q * 1.000000000931322574615478515625LF; return r; }
double red_sqrt(double x) { precise double s = sqrt(x); precise double r = s * 0.999999999068677425384521484375LF; return r; }
#else
#define red_div(a, b) ((a) / (b))
#define red_sqrt(x) sqrt(x)
#endif
// a / b and sqrt(x) within about an ulp: the device's result moved once by its exact residual,
// which squares its relative error (|a|, |b|, |x| below 2**996).
double div_near(double a, double b) {
    double q = red_div(a, b);
    dvec2 qb = red_two_prod(q, b);
    precise double r = (a - qb.x) - qb.y;
    precise double s = q + red_div(r, b);
    return s;
}
double sqrt_near(double x) {
    double s = red_sqrt(x);
    dvec2 ss = red_two_prod(s, s);
    precise double r = (x - ss.x) - ss.y;
    precise double t = s + red_div(r, 2.0 * s);
    return t;
}
dvec2 dd_accumulate(dvec2 a, dvec2 b) {
    dvec2 s = red_two_sum(a.x, b.x);
    precise double lo = (a.y + b.y) + s.y;
    return dvec2(s.x, lo);
}
#define NAN_D double(NAN)
#define INF_D double(INF)
bool finite_d(double x) { return !(isinf(x) || isnan(x)); }
double dd_value(dvec2 s) { return finite_d(s.x) ? s.x + s.y : s.x; }
double divide_by_count_d(double x, double den) {
    if (den > 0.0) return x / den;
    return (x == 0.0 || isnan(x)) ? NAN_D : (x > 0.0 ? INF_D : -INF_D);
}
// (a.x + a.y) / b for b > 0 with the quotient's residual folded back in: correctly rounded but
// for rare ties, whatever the device's double division (Vulkan allows it ulps of error).
double div_refined(dvec2 a, double b) {
    double q = red_div(a.x, b);
    if (!finite_d(a.x) || !finite_d(q)) return q;
    if (abs(q) > 1e295LF || b > 1e295LF) return q + red_div(a.y, b);
    q = div_near(a.x, b);
    dvec2 qb = red_two_prod(q, b);
    precise double r = ((a.x - qb.x) - qb.y) + a.y;
    return q + red_div(r, b);
}
#ifdef DEV64
// Double-double steps for var's finish (|values| well inside the range: dev_finish scales them).
dvec2 dd_norm(double hi, double lo) {  // |hi| >= |lo| (or hi == 0)
    precise double s = hi + lo;
    precise double e = lo - (s - hi);
    return dvec2(s, e);
}
// a - b, written out: as a + (-b) NVIDIA's driver (580.159, H200) dropped the low half of the
// negated double-double (b from dd_mul), and var of 64-bit integers lost the precision it exists for.
dvec2 dd_sub(dvec2 a, dvec2 b) {
    dvec2 s = red_two_sum(a.x, -b.x);
    precise double lo = (a.y - b.y) + s.y;
    return dd_norm(s.x, lo);
}
dvec2 dd_mul(dvec2 a, dvec2 b) {
    dvec2 p = red_two_prod(a.x, b.x);
    precise double lo = p.y + (a.x * b.y + a.y * b.x);
    return dd_norm(p.x, lo);
}
dvec2 dd_div(dvec2 a, double b) {  // b > 0
    double q = div_near(a.x, b);
    dvec2 qb = red_two_prod(q, b);
    precise double r = ((a.x - qb.x) - qb.y) + a.y;
    return dd_norm(q, red_div(r, b));
}
// sqrt(a.x + a.y) (a.x > 0), rounded once more than a correctly rounded root at most.
double dd_sqrt(dvec2 a) {
    double r = sqrt_near(a.x);
    dvec2 rr = red_two_prod(r, r);
    precise double e = ((a.x - rr.x) - rr.y) + a.y;
    return r + red_div(e, 2.0 * r);
}
#endif
#endif

// ---- states: s_identity, s_single (one element), s_combine (associative), wg_merge (whole
// workgroup, from uniform control flow), s_store / s_load (partials), S_VALUE (what is output) ----
#if defined(ARG_OP)
struct S { T v; uint i; };
#ifdef T64
const uint S_WORDS = 3u;
#else
const uint S_WORDS = 2u;
#endif
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
#ifdef T64
void s_store(uint k, S s) {
    uvec2 w = WORDS64(T, s.v);
    part_[3u * k] = w.x; part_[3u * k + 1u] = w.y; part_[3u * k + 2u] = s.i;
}
S s_load(uint k) { return S(FROM_WORDS64(T, uvec2(part_[3u * k], part_[3u * k + 1u])), part_[3u * k + 2u]); }
#else
void s_store(uint k, S s) { part_[2u * k] = to_bits(s.v); part_[2u * k + 1u] = s.i; }
S s_load(uint k) { return S(FROM_BITS(T, part_[2u * k]), part_[2u * k + 1u]); }
#endif
#define S_VALUE(s) (s).i

#elif defined(DEV) && defined(DEV64)
// var and std with float64 results, as DEV below: the pivot is the float64 mean (integer data: rounded
// to an integer, so that d is exact but for one rounding of 64-bit differences), d and d^2 are
// summed as double-doubles, and m2 = sum(d^2) - sum(d)^2 / n.
#define TREE_MERGE
layout(std430, binding = 4) readonly buffer Pivot { double pivot_[]; };
struct S { uint n; dvec2 s1; dvec2 s2; };
const uint S_WORDS = 9u;
S s_identity() { return S(0u, dvec2(0.0), dvec2(0.0)); }
#if defined(IS_FLOAT)
double g_pivot;
void set_pivot(uint col) { g_pivot = pivot_[p.piv_off + col]; }
// an infinite element gives a NaN deviation (numpy's var is NaN then: inf - inf)
double deviation(T x) { double v = double(x); return isinf(v) ? NAN_D : v - g_pivot; }
#elif !defined(T64)
double g_pivot;
void set_pivot(uint col) { double m = pivot_[p.piv_off + col]; g_pivot = isnan(m) ? 0.0 : round(m); }
double deviation(T x) { return double(x) - g_pivot; }  // exact: integers below 2**33
#else
T g_pivot;
// The mean rounded to T, clamped into T's range (the largest doubles below 2**63 and 2**64).
int64_t to_pivot(double m, int64_t t) {
    return isnan(m) ? 0L : int64_t(clamp(round(m), -9223372036854775808.0LF, 9223372036854774784.0LF));
}
uint64_t to_pivot(double m, uint64_t t) {
    return isnan(m) ? 0UL : uint64_t(clamp(round(m), 0.0LF, 18446744073709549568.0LF));
}
void set_pivot(uint col) { g_pivot = to_pivot(pivot_[p.piv_off + col], T(0)); }
// x - pivot exactly in 32-bit halves (each difference fits an int64), rounded once.
double deviation(T x) {
    return double(int64_t(x >> 32) - int64_t(g_pivot >> 32)) * 4294967296.0LF
         + double(int64_t(x & T(0xffffffffUL)) - int64_t(g_pivot & T(0xffffffffUL)));
}
#endif
S s_single(T x, uint i) {
    precise double d = deviation(x);
    precise double d2 = d * d;
    return S(1u, dvec2(d, 0.0), dvec2(d2, 0.0));
}
S s_combine(S a, S b) { return S(a.n + b.n, dd_accumulate(a.s1, b.s1), dd_accumulate(a.s2, b.s2)); }
void s_store(uint k, S s) {
    part_[9u * k] = s.n;
    uvec2 w = unpackDouble2x32(s.s1.x); part_[9u * k + 1u] = w.x; part_[9u * k + 2u] = w.y;
    w = unpackDouble2x32(s.s1.y); part_[9u * k + 3u] = w.x; part_[9u * k + 4u] = w.y;
    w = unpackDouble2x32(s.s2.x); part_[9u * k + 5u] = w.x; part_[9u * k + 6u] = w.y;
    w = unpackDouble2x32(s.s2.y); part_[9u * k + 7u] = w.x; part_[9u * k + 8u] = w.y;
}
double part_double(uint w) { return packDouble2x32(uvec2(part_[w], part_[w + 1u])); }
S s_load(uint k) {
    return S(part_[9u * k], dvec2(part_double(9u * k + 1u), part_double(9u * k + 3u)),
             dvec2(part_double(9u * k + 5u), part_double(9u * k + 7u)));
}
// m2 / (n - ddof), or its square root, from the sums in double-double arithmetic (the pivot may be
// off the mean by more than the spread: 64-bit integers' double mean, or a pivot clamped into
// the range), scaled by a power of two (exact) so that no step overflows.
double dev_finish(S s) {
    if (!(finite_d(s.s1.x) && finite_d(s.s2.x)))
        return isnan(s.s1.x) || isnan(s.s2.x) ? NAN_D : INF_D;  // NaN or inf in the data, or past the range
    double n = double(s.n);
    int e;
    frexp(s.s2.x, e);
    int k = e / 2;  // d scaled by 2**-k: sum(d^2) near 1
    dvec2 m2 = dvec2(0.0);
    if (s.n > 0u) {
        dvec2 s1 = red_two_sum(ldexp(s.s1.x, -k), ldexp(s.s1.y, -k));
        dvec2 s2 = red_two_sum(ldexp(s.s2.x, -2 * k), ldexp(s.s2.y, -2 * k));
        m2 = dd_sub(s2, dd_mul(dd_div(s1, n), s1));
        if (!(m2.x > 0.0)) m2 = dvec2(0.0);  // rounding below an exact 0, and -0.0
    }
    double den = n - double(p.den);
    if (den <= 0.0) return divide_by_count_d(m2.x, 0.0);
    dvec2 v = dd_div(m2, den);
#ifdef SQRT
    return v.x > 0.0 ? ldexp(dd_sqrt(v), k) : 0.0;
#else
    return ldexp(v.x + v.y, 2 * k);
#endif
}

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

#elif defined(DD_SUM)  // float64 sums: a double-double (hi, lo), merged in the shared-memory tree
#define TREE_MERGE
#define S dvec2
const uint S_WORDS = 4u;
S s_identity() { return dvec2(0.0); }
S s_single(T x, uint i) { return dvec2(x, 0.0); }
S s_combine(S a, S b) { return dd_accumulate(a, b); }
void s_store(uint k, S s) {
    uvec2 hi = unpackDouble2x32(s.x), lo = unpackDouble2x32(s.y);
    part_[4u * k] = hi.x; part_[4u * k + 1u] = hi.y; part_[4u * k + 2u] = lo.x; part_[4u * k + 3u] = lo.y;
}
S s_load(uint k) {
    return dvec2(packDouble2x32(uvec2(part_[4u * k], part_[4u * k + 1u])),
                 packDouble2x32(uvec2(part_[4u * k + 2u], part_[4u * k + 3u])));
}

#else  // RED_OP: the state is the running value
#define S T
S s_identity() { return PASTE(identity_, RED_OP)(T(0)); }
S s_single(T x, uint i) { return x; }
#ifdef NAN_AWARE
#ifdef T64
// np.maximum / np.minimum on doubles (lib/math.glsl's np_max / np_min): a NaN in either operand
// wins; ties give the second operand.
double nan_max_d(double a, double b) { return isnan(a) ? a : (isnan(b) ? b : (a > b ? a : b)); }
double nan_min_d(double a, double b) { return isnan(a) ? a : (isnan(b) ? b : (a < b ? a : b)); }
S s_combine(S a, S b) { return PASTE(PASTE(nan_, RED_OP), _d)(a, b); }
#else
S s_combine(S a, S b) { return PASTE(np_, RED_OP)(a, b); }
#endif
S wg_merge(S s) {
    uint nan_any = wg_reduce_or(uint(isnan(s)));
    S r = PASTE(wg_reduce_, RED_OP)(isnan(s) ? s_identity() : s);
    return nan_any != 0u ? S(NAN) : r;
}
#else
S s_combine(S a, S b) { return PASTE(combine_, RED_OP)(a, b); }
S wg_merge(S s) { return PASTE(wg_reduce_, RED_OP)(s); }
#endif
#ifdef T64
const uint S_WORDS = 2u;
void s_store(uint k, S s) { uvec2 w = WORDS64(T, s); part_[2u * k] = w.x; part_[2u * k + 1u] = w.y; }
S s_load(uint k) { return FROM_WORDS64(T, uvec2(part_[2u * k], part_[2u * k + 1u])); }
#else
const uint S_WORDS = 1u;
void s_store(uint k, S s) { part_[k] = to_bits(s); }
S s_load(uint k) { return FROM_BITS(T, part_[k]); }
#endif
#define S_VALUE(s) (s)
#endif

T_OUT s_finish(S s) {
#if defined(DEV)
    return T_OUT(dev_finish(s));
#elif defined(DD_SUM) && defined(DIVIDE)
    return T_OUT(p.count > 0u ? div_refined(s, double(p.count)) : divide_by_count_d(dd_value(s), 0.0));
#elif defined(DD_SUM)
    return T_OUT(dd_value(s));
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
