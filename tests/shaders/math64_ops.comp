#version 450
#extension GL_GOOGLE_include_directive : require
#define VK_MATH64
#include "lib/common.glsl"
#include "lib/math.glsl"
// @variants FN=np_exp|np_sin|np_log|np_atan|np_sqrt T=double T_OUT=double UNARY
// @variants FN=np_pow|np_fmod|np_divide T=double T_OUT=double ?B_SCALAR
// @variants FN=np_tan T=double T_OUT=double UNARY VK_TEST_INEXACT_BUILTINS
// @variants FN=np_divide T=double T_OUT=double VK_TEST_INEXACT_BUILTINS
// @variants FN=np_isnan T=double T_OUT=uint UNARY
// @variants FN=np_floor_divide|np_pow|np_left_shift T=int64_t|uint64_t T_OUT=T ?B_SCALAR
// Test kernel: out[i] = FN(a[i]) (UNARY) or FN(a[i], b[i]) for one function of lib/math64.glsl
// over T (double, int64_t or uint64_t); T_OUT its result type (uint for the predicates).
// B_SCALAR: b is one T from push words 1 and 2 (FROM_BITS).
layout(std430, binding = 0) readonly buffer A { T a_[]; };
layout(std430, binding = 1) readonly buffer B { T b_[]; };
layout(std430, binding = 2) writeonly buffer Out { T_OUT out_[]; };
layout(push_constant) uniform Push { uint n; uint b_lo; uint b_hi; } p;

T_OUT apply(T x, T y) {
#ifdef UNARY
    return T_OUT(FN(x));
#else
    return T_OUT(FN(x, y));
#endif
}

void main() {
    GRID_STRIDE_LOOP(i, p.n) {
#ifdef B_SCALAR
        T y = FROM_BITS(T, uvec2(p.b_lo, p.b_hi));
#else
        T y = b_[i];
#endif
        out_[i] = apply(a_[i], y);
    }
}
