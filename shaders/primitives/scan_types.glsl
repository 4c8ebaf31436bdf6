// Element types and the operator of a scan, shared by scan.comp and scan_strided.comp.
// Defines (from vkbackend/primitives/scan.py):
//   T_IN  GLSL type of the input buffer's elements (bool arrays are uint 0/1)
//   T     the result type: inputs are converted to it on load (numpy's dtype= argument)
//   S     the type the scan runs in: T, except for float max/min, which scan uint keys (KEY)
//   OP    add, mul, min or max (ops.glsl's combine_<op> / identity_<op> over S)
//   KEY   0; 1 = float max, 2 = float min as order-preserving uint keys (see encode)
//   NEG_ZERO  float sums (OP add, S float), whose -0.0 scan.comp keeps apart (see there)
//   S4, T_IN4, T4: the 4-vectors of S, T_IN and T
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
#define scan_identity_mul identity_mul
#define scan_identity_min identity_min
#define scan_identity_max identity_max

#ifdef NEG_ZERO
bool is_neg_zero(float v) { return floatBitsToUint(v) == 0x80000000u; }
#endif

#if KEY == 0
S encode(T x) { return x; }
T decode(S s) { return s; }
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
