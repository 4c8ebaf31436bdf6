#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "lib/workgroup.glsl"
// @variants T_IN=float T=float T_OUT=float IS_FLOAT RED_OP=add|mul ?LAYOUT_ROW UNROLL=4 ?DIVIDE
// @variants T_IN=float T=float T_OUT=float IS_FLOAT RED_OP=min|max NAN_AWARE ?LAYOUT_ROW UNROLL=4
// @variants T_IN=int|uint|float T=int T_OUT=int RED_OP=add|and|or ?TRUTH ?LAYOUT_ROW UNROLL=4
// @variants T_IN=float|int T=float|int T_OUT=int ARG_OP=max|min ?LAYOUT_ROW UNROLL=4
// @variants T_IN=float T=float T_OUT=float IS_FLOAT WELFORD ?LAYOUT_ROW UNROLL=4 ?DIVIDE ?SQRT
// out[o * inner + i] = REDUCE over j of x[o, j, i], for x C-contiguous of shape (outer, n, inner).
//
// Defines (vkbackend/primitives/reduce.py sets them):
//   T_IN, T, T_OUT  element types of x, of the accumulation, of out; IS_FLOAT when T is float.
//   The state one invocation accumulates, by operation:
//     RED_OP=add|mul|min|max|and|or  a value of T (NAN_AWARE: float min/max where NaN wins, as numpy)
//     ARG_OP=max|min                 value and index: first NaN, else extreme value, else lowest index
//     WELFORD                        count, mean, m2 (Chan's merge: no E[x^2] - mean^2 cancellation)
//   TRUTH      elements enter as T(x != 0) (all/any).
//   DIVIDE     out = value / p.den with numpy's x/0 rules (mean; var with den = n - ddof); SQRT after.
//   LAYOUT_ROW inner == 1 and one output per workgroup: vec4 loads, lib/workgroup.glsl merge.
//              Otherwise a workgroup takes COLS outputs with ROWS invocations along n each, merged
//              by a shared-memory tree.
//   UNROLL     loads in flight per invocation.
// Spec constants: 2 COLS (outputs per workgroup, a power of two); 3 ROW_FAST (1: consecutive
//   invocations walk n, for rows of inner == 1; 0: they walk outputs, coalesced along inner).
// Grid: x walks tiles of COLS outputs (grid-stride); y splits n into p.splits chunks of p.chunk.
// With p.splits > 1 each workgroup publishes a partial state; the last one to arrive at its tile's
// counter merges them and sets the counter back to 0: one dispatch, no second pass over the data.
// Bindings: 0 x, 1 out, 2 partial states (32-bit words), 3 tile counters (0 between dispatches).
layout(constant_id = 2) const uint COLS = 1u;
layout(constant_id = 3) const uint ROW_FAST = 0u;
const uint ROWS = WG_SIZE / COLS;

layout(push_constant) uniform Push {
    uint n; uint inner; uint outputs; uint tiles; uint x_off; uint out_off; uint splits; uint chunk;
    float den;
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

#elif defined(WELFORD)
struct S { uint n; float mean; float m2; };
const uint S_WORDS = 3u;
S s_identity() { return S(0u, 0.0, 0.0); }
// m2 of one element is x - x: 0, or nan for nan and inf as numpy gets (spelled out: compilers may fold x - x).
S s_single(T x, uint i) { return S(1u, x, isnan(x) || isinf(x) ? NAN : 0.0); }
S s_combine(S a, S b) {
    if (a.n == 0u) return b;
    if (b.n == 0u) return a;
    uint n = a.n + b.n;
    float d = b.mean - a.mean, fb = float(b.n) / float(n);
    return S(n, a.mean + d * fb, a.m2 + b.m2 + d * d * float(a.n) * fb);
}
// The exact mean of the whole workgroup first, then every m2 moved onto it.
S wg_merge(S s) {
    uint n = wg_reduce_add(s.n);
    float total = wg_reduce_add(float(s.n) * s.mean);
    float mean = n > 0u ? total / float(n) : 0.0;
    float d = s.mean - mean;
    float m2 = wg_reduce_add(s.n > 0u ? s.m2 + float(s.n) * d * d : 0.0);
    return S(n, mean, m2);
}
void s_store(uint k, S s) {
    part_[3u * k] = s.n; part_[3u * k + 1u] = floatBitsToUint(s.mean); part_[3u * k + 2u] = floatBitsToUint(s.m2);
}
S s_load(uint k) {
    return S(part_[3u * k], uintBitsToFloat(part_[3u * k + 1u]), uintBitsToFloat(part_[3u * k + 2u]));
}
#define S_VALUE(s) (s).m2

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

// numpy's x / 0 for a count of 0: 0/0 and nan/0 -> nan, +-x/0 -> +-inf.
float divide_by_count(float x, float den) {
    if (den > 0.0) return x / den;
    return (x == 0.0 || isnan(x)) ? NAN : (x > 0.0 ? INF : -INF);
}

T_OUT s_finish(S s) {
#ifdef DIVIDE
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
S merge_rows(S s, uint r, uint c) { return wg_merge(s); }

#else
S fold_output(uint col, uint lo, uint hi, uint r) {
    uint o = col / p.inner, i = col - o * p.inner;
    return fold(s_identity(), p.x_off + o * p.n * p.inner + i, p.inner, lo, hi, r);
}

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
