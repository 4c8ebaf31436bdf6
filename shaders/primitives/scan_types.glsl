// Element types and the operator of a scan, shared by scan.comp and scan_strided.comp.
// Defines (from vkbackend/primitives/scan.py):
//   T_IN  GLSL type of the input buffer's elements (bool arrays are uint 0/1)
//   T     the result type: inputs are converted to it on load (numpy's dtype= argument)
//   S     the type the scan runs in: T, except for float max/min, which scan uint keys (KEY)
//   OP    add, mul, min or max (ops.glsl's combine_<op> / identity_<op> over S)
//   KEY   0; 1 = float max, 2 = float min as order-preserving uint keys (see encode)
//   NEG_ZERO  float sums (OP add, S float or double), whose -0.0 scan.comp keeps apart (see there)
//   T_MIN, T_MAX  8/16-bit max/min: T's range (see decode)
//   S4, T_IN4, T4: the 4-vectors of S, T_IN and T
// The types may be any of vkbackend/dtypes.py's: 8/16-bit integers scan as int/uint (S) and wrap
// when stored (T). S64: S is 64-bit (int64_t, uint64_t, double; the uint64_t keys of float64
// max/min), WG_T64 = S (lib/workgroup.glsl's 64-bit instantiation, SG_T64 where subgroups take it).
#ifndef VK_SCAN_TYPES
#define VK_SCAN_TYPES
#include "lib/ops.glsl"

#ifndef KEY
#define KEY 0
#endif

#define COMBINE PASTE(combine_, OP)
#define IDENTITY PASTE(scan_identity_, OP)(S(0))

// ops.glsl's identities, except -0.0 for float sums: -0.0 + x is x for every x, where +0.0 + -0.0
// is +0.0, so a +0.0 identity turned cumsum's leading -0.0 (numpy keeps it) into +0.0. Hence also
// an exclusive float cumsum starts at -0.0.
float scan_identity_add(float t) { return uintBitsToFloat(0x80000000u); }
int scan_identity_add(int t) { return 0; }
uint scan_identity_add(uint t) { return 0u; }
#ifdef S64
#define NEG_ZERO_OF_double packDouble2x32(uvec2(0u, 0x80000000u))
#define NEG_ZERO_OF_int64_t 0L
#define NEG_ZERO_OF_uint64_t 0UL
S scan_identity_add(S t) { return PASTE(NEG_ZERO_OF_, S); }
#endif
#define scan_identity_mul identity_mul
#define scan_identity_min identity_min
#define scan_identity_max identity_max

#if defined(NEG_ZERO) && defined(S64)
bool is_neg_zero(double v) { return unpackDouble2x32(v) == uvec2(0u, 0x80000000u); }
#elif defined(NEG_ZERO)
bool is_neg_zero(float v) { return floatBitsToUint(v) == 0x80000000u; }
#endif

// S in the aux buffer (tile sums and prefixes, by element index), as one or two 32-bit words.
#ifdef S64
#define AUX_PUT(i, v) { uvec2 w_ = WORDS64(S, v); aux[2u * (i)] = w_.x; aux[2u * (i) + 1u] = w_.y; }
#define AUX_GET(i) FROM_WORDS64(S, uvec2(aux[2u * (i)], aux[2u * (i) + 1u]))
#else
#define AUX_PUT(i, v) aux[i] = to_bits(v)
#define AUX_GET(i) FROM_BITS(S, aux[i])
#endif

#if KEY == 0 && defined(T_MIN)
// 8/16-bit max/min (T_MIN, T_MAX: T's range) scan in int/uint, whose identities lie past T's
// range: clamped into it, an exclusive scan starts at T's own extreme (numpy's identity).
S encode(T x) { return S(x); }
T decode(S s) { return T(clamp(s, S(T_MIN), S(T_MAX))); }
#elif KEY == 0
S encode(T x) { return S(x); }
T decode(S s) { return T(s); }
#elif defined(S64)
// float64 max/min as uint64_t keys, as the float32 ones below.
const uint64_t KEY_POS_INF = 0xfff0000000000000UL;
const uint64_t KEY_NEG_INF = 0x000fffffffffffffUL;
uint64_t encode(double x) {
    uint64_t b = doubleBitsToUint64(x);
#if KEY == 1
    if (isnan(x)) return ~0UL;
#else
    if (isnan(x)) return 0UL;
#endif
    return (b >> 63) != 0UL ? ~b : (b | 0x8000000000000000UL);
}
double decode(uint64_t k) {
#if KEY == 1
    k = max(k, KEY_NEG_INF);
#else
    k = min(k, KEY_POS_INF);
#endif
    return uint64BitsToDouble((k >> 63) != 0UL ? (k & 0x7fffffffffffffffUL) : ~k);
}
#else
// Float max/min as uint max/min over keys whose unsigned order is the float order
// (-inf < ... < -0 < +0 < ... < +inf): sign bit set -> flip the sign bit, else flip all bits.
// GLSL's and the subgroup intrinsics' float min/max leave NaN undefined, numpy propagates it;
// every NaN becomes the key that wins (all ones for max, zero for min), which also decodes to a
// NaN. Integer max/min are exact, so every path and the tile state see the same bits.
const uint KEY_POS_INF = 0xff800000u;
const uint KEY_NEG_INF = 0x007fffffu;
uint encode(float x) {
    uint b = floatBitsToUint(x);
#if KEY == 1
    if (isnan(x)) return 0xffffffffu;
#else
    if (isnan(x)) return 0u;
#endif
    return (b & 0x80000000u) != 0u ? ~b : (b | 0x80000000u);
}
float decode(uint k) {
    // The identity of uint max (0) / min (~0) lies beyond the keys of -inf / +inf: an exclusive
    // scan's first element is numpy's identity, -inf / +inf, not the NaN those bits would decode to.
#if KEY == 1
    k = max(k, KEY_NEG_INF);
#else
    k = min(k, KEY_POS_INF);
#endif
    return uintBitsToFloat((k & 0x80000000u) != 0u ? (k & 0x7fffffffu) : ~k);
}
#endif

S load_convert(T_IN x) { return encode(T(x)); }
S4 load_convert(T_IN4 v) { return S4(encode(T(v.x)), encode(T(v.y)), encode(T(v.z)), encode(T(v.w))); }
T4 store_convert(S4 s) { return T4(decode(s.x), decode(s.y), decode(s.z), decode(s.w)); }
#endif
