#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
#include "lib/math.glsl"
// @variants OP_add|OP_subtract|OP_multiply|OP_divide|OP_maximum|OP_minimum|OP_equal|OP_not_equal|OP_less|OP_less_equal|OP_greater|OP_greater_equal NARGS=2 T=float|int|uint T_OUT=uint T_A=float T_B=int ?B_SCALAR RANK=0|4
// @variants OP_negative|OP_absolute|OP_exp|OP_log|OP_sqrt|OP_copy NARGS=1 T=float|int T_OUT=float T_A=int RANK=0|2
// @variants OP_where NARGS=3 T=float|uint T_OUT=float T_A=uint T_B=float T_C=int ?C_SCALAR RANK=0|6
// out = OP(a[, b[, c]]) with numpy broadcasting.
// Defines: OP_<name>; NARGS (1..3); T_OUT; T_A, T_B, T_C (buffer element types); T (compute type);
//   A_SCALAR / B_SCALAR / C_SCALAR: that operand is a T scalar in push constants;
//   RANK: 0 for the contiguous fast path, else the number of (collapsed) output dims.
// Bindings: 0 out, 1 a, 2 b, 3 c (a scalar operand's binding is a dummy).
// Push words: n, out offset, then per operand its offset (or scalar bits), then the output shape
//   [RANK] and each operand's element strides [RANK] (0 where broadcast).
#ifndef RANK
#define RANK 0
#endif
#define PUSH_WORDS (5 + RANK * (1 + NARGS))
layout(push_constant) uniform Push { uint w[PUSH_WORDS]; } p;

layout(std430, binding = 0) writeonly buffer Out { T_OUT out_[]; };
layout(std430, binding = 1) readonly buffer A { T_A a_[]; };
#if NARGS >= 2
layout(std430, binding = 2) readonly buffer B { T_B b_[]; };
#endif
#if NARGS >= 3
layout(std430, binding = 3) readonly buffer C { T_C c_[]; };
#endif

// The element index of operand k (0-based) for output element i.
uint operand_index(uint i, uint k) {
    uint idx = p.w[2 + k];
#if RANK > 0
    for (int d = RANK - 1; d >= 0; --d) {
        uint extent = p.w[5 + d];
        idx += (i % extent) * p.w[5 + RANK * (1 + k) + d];
        i /= extent;
    }
#else
    idx += i;
#endif
    return idx;
}

#ifdef A_SCALAR
#define LOAD_A(i) FROM_BITS(T, p.w[2])
#else
#define LOAD_A(i) T(a_[operand_index(i, 0u)])
#endif
#ifdef B_SCALAR
#define LOAD_B(i) FROM_BITS(T, p.w[3])
#else
#define LOAD_B(i) T(b_[operand_index(i, 1u)])
#endif
#ifdef C_SCALAR
#define LOAD_C(i) FROM_BITS(T, p.w[4])
#else
#define LOAD_C(i) T(c_[operand_index(i, 2u)])
#endif

void main() {
    GRID_STRIDE_LOOP(i, p.w[0]) {
        T x = LOAD_A(i);
#if NARGS >= 2
        T y = LOAD_B(i);
#endif
#if NARGS >= 3
        T z = LOAD_C(i);
#endif
#if defined(OP_add)
        T_OUT r = T_OUT(x + y);
#elif defined(OP_subtract)
        T_OUT r = T_OUT(x - y);
#elif defined(OP_multiply)
        T_OUT r = T_OUT(x * y);
#elif defined(OP_divide)
        T_OUT r = T_OUT(x / y);
#elif defined(OP_maximum)
        T_OUT r = T_OUT(np_max(x, y));
#elif defined(OP_minimum)
        T_OUT r = T_OUT(np_min(x, y));
#elif defined(OP_equal)
        T_OUT r = T_OUT(x == y);
#elif defined(OP_not_equal)
        T_OUT r = T_OUT(x != y);
#elif defined(OP_less)
        T_OUT r = T_OUT(x < y);
#elif defined(OP_less_equal)
        T_OUT r = T_OUT(x <= y);
#elif defined(OP_greater)
        T_OUT r = T_OUT(x > y);
#elif defined(OP_greater_equal)
        T_OUT r = T_OUT(x >= y);
#elif defined(OP_negative)
        T_OUT r = T_OUT(-x);
#elif defined(OP_absolute)
        T_OUT r = T_OUT(abs(x));
#elif defined(OP_exp)
        T_OUT r = T_OUT(np_exp(x));
#elif defined(OP_log)
        T_OUT r = T_OUT(np_log(x));
#elif defined(OP_sqrt)
        T_OUT r = T_OUT(np_sqrt(x));
#elif defined(OP_where)
        T_OUT r = T_OUT(x != T(0) ? y : z);
#elif defined(OP_copy)
        T_OUT r = T_OUT(x);
#else
#error "unknown OP_ define"
#endif
        out_[p.w[1] + i] = r;
    }
}
