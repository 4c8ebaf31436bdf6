#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "lib/math.glsl"
// @variants OP_add|OP_subtract|OP_multiply|OP_divide|OP_maximum|OP_minimum|OP_equal|OP_not_equal|OP_less|OP_less_equal|OP_greater|OP_greater_equal NARGS=2 T=float|int|uint T_OUT=uint T_A=float T_B=int ?B_SCALAR RANK=0|4
// @variants OP_add|OP_less|OP_maximum NARGS=2 T=float|int T_OUT=float|uint T_A=float T_B=float|int ?B_SCALAR VEC4
// @variants OP_negative|OP_absolute|OP_exp|OP_log|OP_sqrt|OP_copy NARGS=1 T=float|int T_OUT=float T_A=int RANK=0|2
// @variants OP_where NARGS=3 T=float|uint T_OUT=float T_A=uint T_B=float T_C=int ?C_SCALAR RANK=0|6
// @variants OP_where|OP_copy NARGS=3 T=float T_OUT=float T_A=uint T_B=float T_C=float ?C_SCALAR VEC4
// out = OP(a[, b[, c]]) with numpy broadcasting.
// Defines: OP_<name>; NARGS (1..3); T_OUT; T_A, T_B, T_C (buffer element types); T (compute type);
//   A_SCALAR / B_SCALAR / C_SCALAR: that operand is a T scalar in push constants;
//   RANK: 0 for the contiguous fast path, else the number of (collapsed) output dims;
//   VEC4 (with RANK 0): 4-vector loads and stores, the length and all offsets multiples of 4.
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

#ifdef VEC4
// The contiguous path moves 16 bytes per load and store: the same buffers seen as 4-vectors
// (Python picks it only when every offset and the length are multiples of 4).
#define VEC_float vec4
#define VEC_int ivec4
#define VEC_uint uvec4
#define VEC(T) PASTE(VEC_, T)
layout(std430, binding = 0) writeonly buffer Out4 { VEC(T_OUT) out4_[]; };
layout(std430, binding = 1) readonly buffer A4 { VEC(T_A) a4_[]; };
#if NARGS >= 2
layout(std430, binding = 2) readonly buffer B4 { VEC(T_B) b4_[]; };
#endif
#if NARGS >= 3
layout(std430, binding = 3) readonly buffer C4 { VEC(T_C) c4_[]; };
#endif
#endif

// The element index of operand k (0-based) for output element i.
uint operand_index(uint i, uint k) {
    uint idx = p.w[2 + k];
#if RANK > 0
    [[unroll]] for (int d = RANK - 1; d >= 0; --d) {
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

T_OUT apply_op(T x, T y, T z) {
#if defined(OP_add)
    return T_OUT(x + y);
#elif defined(OP_subtract)
    return T_OUT(x - y);
#elif defined(OP_multiply)
    return T_OUT(x * y);
#elif defined(OP_divide)
    return T_OUT(x / y);
#elif defined(OP_maximum)
    return T_OUT(np_max(x, y));
#elif defined(OP_minimum)
    return T_OUT(np_min(x, y));
#elif defined(OP_equal)
    return T_OUT(x == y);
#elif defined(OP_not_equal)
    return T_OUT(x != y);
#elif defined(OP_less)
    return T_OUT(x < y);
#elif defined(OP_less_equal)
    return T_OUT(x <= y);
#elif defined(OP_greater)
    return T_OUT(x > y);
#elif defined(OP_greater_equal)
    return T_OUT(x >= y);
#elif defined(OP_negative)
    return T_OUT(-x);
#elif defined(OP_absolute)
    return T_OUT(abs(x));
#elif defined(OP_exp)
    return T_OUT(np_exp(x));
#elif defined(OP_log)
    return T_OUT(np_log(x));
#elif defined(OP_sqrt)
    return T_OUT(np_sqrt(x));
#elif defined(OP_where)
    return T_OUT(x != T(0) ? y : z);
#elif defined(OP_copy)
    return T_OUT(x);
#else
#error "unknown OP_ define"
#endif
}

void main() {
    T y = T(0), z = T(0);
#ifdef VEC4
    uint n4 = p.w[0] / 4u;
    GRID_STRIDE_LOOP(j, n4) {
#ifdef A_SCALAR
        VEC(T) xs = VEC(T)(LOAD_A(0u));
#else
        VEC(T) xs = VEC(T)(a4_[p.w[2] / 4u + j]);
#endif
#if NARGS >= 2
#ifdef B_SCALAR
        VEC(T) ys = VEC(T)(LOAD_B(0u));
#else
        VEC(T) ys = VEC(T)(b4_[p.w[3] / 4u + j]);
#endif
#endif
#if NARGS >= 3
#ifdef C_SCALAR
        VEC(T) zs = VEC(T)(LOAD_C(0u));
#else
        VEC(T) zs = VEC(T)(c4_[p.w[4] / 4u + j]);
#endif
#endif
        VEC(T_OUT) r;
        [[unroll]] for (int c = 0; c < 4; ++c) {
#if NARGS >= 2
            y = ys[c];
#endif
#if NARGS >= 3
            z = zs[c];
#endif
            r[c] = apply_op(xs[c], y, z);
        }
        out4_[p.w[1] / 4u + j] = r;
    }
#else
    GRID_STRIDE_LOOP(i, p.w[0]) {
#if NARGS >= 2
        y = LOAD_B(i);
#endif
#if NARGS >= 3
        z = LOAD_C(i);
#endif
        out_[p.w[1] + i] = apply_op(LOAD_A(i), y, z);
    }
#endif
}
