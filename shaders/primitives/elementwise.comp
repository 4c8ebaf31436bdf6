#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "lib/math.glsl"
// @variants OP_add|OP_subtract|OP_multiply|OP_maximum|OP_minimum|OP_equal|OP_not_equal|OP_less|OP_less_equal|OP_greater|OP_greater_equal NARGS=2 T=float|int|uint T_OUT=uint T_A=float T_B=int ?B_SCALAR RANK=0|4
// @variants OP_divide NARGS=2 T=float T_OUT=float T_A=float|int T_B=int ?B_SCALAR RANK=0|4
// @variants OP_add|OP_less|OP_maximum NARGS=2 T=float|int T_OUT=float|uint T_A=float T_B=float|int ?B_SCALAR VEC4
// @variants OP_negative|OP_absolute|OP_exp|OP_log|OP_sqrt|OP_copy NARGS=1 T=float|int T_OUT=float T_A=int RANK=0|2
// @variants OP_exp2|OP_expm1|OP_log2|OP_log10|OP_log1p|OP_sin|OP_cos|OP_tan|OP_arcsin|OP_arccos|OP_arctan|OP_sinh|OP_cosh|OP_tanh|OP_arcsinh|OP_arccosh|OP_arctanh NARGS=1 T=float T_OUT=float T_A=float
// @variants OP_floor|OP_ceil|OP_trunc|OP_rint|OP_isnan|OP_isinf|OP_isfinite|OP_signbit|OP_sign|OP_square|OP_reciprocal|OP_logical_not NARGS=1 T=float|int|uint T_OUT=uint T_A=float
// @variants OP_invert NARGS=1 T=int|uint T_OUT=uint T_A=int
// @variants OP_power|OP_remainder|OP_fmod|OP_floor_divide|OP_logical_and|OP_logical_or|OP_logical_xor NARGS=2 T=float|int|uint T_OUT=uint T_A=float T_B=int ?B_SCALAR
// @variants OP_arctan2|OP_hypot|OP_logaddexp|OP_copysign|OP_nextafter NARGS=2 T=float T_OUT=float T_A=float T_B=float
// @variants OP_bitwise_and|OP_bitwise_or|OP_bitwise_xor|OP_left_shift|OP_right_shift NARGS=2 T=int|uint T_OUT=uint T_A=int T_B=uint
// @variants OP_clip NARGS=3 T=float|int T_OUT=float T_A=float T_B=int T_C=float ?C_SCALAR RANK=0|3
// @variants OP_where NARGS=3 T=float|uint T_OUT=float T_A=uint T_B=float T_C=int ?C_SCALAR RANK=0|6
// @variants OP_where|OP_copy NARGS=3 T=float T_OUT=float T_A=uint T_B=float T_C=float ?C_SCALAR VEC4
// @variants OP_add|OP_multiply|OP_less|OP_floor_divide|OP_remainder|OP_power|OP_right_shift|OP_maximum NARGS=2 T=int|uint T_OUT=int8_t|uint16_t T_A=int8_t T_B=uint16_t ?B_SCALAR VK_WIDE RANK=0|2
// @variants OP_add|OP_multiply|OP_less|OP_floor_divide|OP_remainder|OP_fmod|OP_power|OP_left_shift|OP_right_shift|OP_maximum|OP_bitwise_xor NARGS=2 T=int64_t|uint64_t T_OUT=int64_t T_A=int8_t T_B=uint64_t ?B_SCALAR WIDE_SCALARS VK_WIDE VK_MATH64
// @variants OP_add|OP_divide|OP_maximum|OP_floor_divide|OP_remainder|OP_fmod|OP_power|OP_arctan2|OP_hypot|OP_logaddexp|OP_copysign|OP_nextafter NARGS=2 T=double T_OUT=double T_A=double T_B=float|int64_t ?B_SCALAR WIDE_SCALARS VK_WIDE VK_MATH64 RANK=0|3
// @variants OP_exp|OP_exp2|OP_expm1|OP_log|OP_log2|OP_log10|OP_log1p|OP_sqrt|OP_sin|OP_cos|OP_tan|OP_arcsin|OP_arccos|OP_arctan|OP_sinh|OP_cosh|OP_tanh|OP_arcsinh|OP_arccosh|OP_arctanh|OP_floor|OP_rint|OP_sign|OP_isnan|OP_signbit|OP_reciprocal|OP_copy NARGS=1 T=double T_OUT=double|uint T_A=double VK_WIDE VK_MATH64
// @variants OP_add|OP_less|OP_where NARGS=3 T=int|uint T_OUT=int8_t|uint16_t|uint T_A=int8_t|uint T_B=uint16_t T_C=int8_t ?B_SCALAR VK_WIDE VEC4
// @variants OP_add|OP_exp|OP_where NARGS=3 T=float T_OUT=float T_A=uint16_t T_B=uint16_t T_C=float A_HALF B_HALF ?OUT_HALF C_SCALAR VK_WIDE RANK=0|2
// @variants OP_less NARGS=2 T=float T_OUT=uint T_A=uint16_t T_B=float A_HALF VK_WIDE
// @variants OP_add|OP_nextafter|OP_maximum NARGS=2 T=float T_OUT=float T_A=uint16_t T_B=uint16_t A_HALF B_HALF A_BF16 ?B_BF16 OUT_HALF OUT_BF16 VK_WIDE RANK=0|2
// @variants OP_add NARGS=2 T=float T_OUT=float T_A=uint16_t T_B=uint16_t A_HALF B_HALF A_BF16 OUT_HALF OUT_BF16 VK_WIDE VEC4
// @variants OP_add|OP_where NARGS=3 T=float T_OUT=float T_A=uint16_t T_B=uint16_t T_C=uint16_t A_HALF B_HALF C_HALF ?OUT_HALF VK_WIDE VEC4
// @variants OP_add|OP_less|OP_where NARGS=3 T=double|int64_t T_OUT=double|int64_t|uint T_A=uint|double T_B=double|uint64_t T_C=int64_t ?B_SCALAR VK_WIDE VK_MATH64 WIDE_SCALARS VEC4
// out = OP(a[, b[, c]]) with numpy broadcasting.
// Defines: OP_<name> (numpy's ufunc names; the numerics are lib/math.glsl's); NARGS (1..3); T_OUT; T_A, T_B, T_C (buffer element types); T (compute type);
//   A_SCALAR / B_SCALAR / C_SCALAR: that operand is a T scalar in push constants;
//   RANK: 0 for the contiguous fast path, else the number of (collapsed) output dims;
//   VEC4 (with RANK 0): 4-vector loads and stores, the length and all offsets multiples of 4.
// Bindings: 0 out, 1 a, 2 b, 3 c (a scalar operand's binding is a dummy).
// Push words: n, out offset, then per operand its offset (or scalar bits), then the output shape
//   [RANK] and each operand's element strides [RANK] (0 where broadcast); WIDE_SCALARS (T is
//   64-bit): then per operand its scalar's high word.
// The types may be any of vkbackend/dtypes.py's (int8_t, uint16_t, int64_t, double, ...): 8/16-bit
//   ones compute as int/uint and wrap when stored. float16: A_HALF / B_HALF / C_HALF (that
//   operand's T_X is uint16_t holding half bits, read as float), OUT_HALF (T_OUT float, stored
//   rounded to half bits in a uint16_t buffer); T is float, as numpy's float16 loops compute.
//   bfloat16 likewise, with X_BF16 / OUT_BF16 beside X_HALF / OUT_HALF.
#ifndef RANK
#define RANK 0
#endif
#define BASE_WORDS (5 + RANK * (1 + NARGS))
#ifdef WIDE_SCALARS  // T is 64-bit: a scalar operand's high word follows the rest, per operand
#define PUSH_WORDS (BASE_WORDS + 3)
#define SCALAR(k) FROM_BITS(T, uvec2(p.w[2 + k], p.w[BASE_WORDS + k]))
#else
#define PUSH_WORDS BASE_WORDS
#define SCALAR(k) FROM_BITS(T, p.w[2 + k])
#endif
layout(push_constant) uniform Push { uint w[PUSH_WORDS]; } p;

// Each half operand's and the result's conversion: float16 or bfloat16.
#ifdef A_BF16
#define A_TO_FLOAT BF16_TO_FLOAT
#else
#define A_TO_FLOAT HALF_TO_FLOAT
#endif
#ifdef B_BF16
#define B_TO_FLOAT BF16_TO_FLOAT
#else
#define B_TO_FLOAT HALF_TO_FLOAT
#endif
#ifdef C_BF16
#define C_TO_FLOAT BF16_TO_FLOAT
#else
#define C_TO_FLOAT HALF_TO_FLOAT
#endif
#ifdef OUT_BF16
#define FLOAT_TO_OUT FLOAT_TO_BF16
#define OUT_TO_FLOAT BF16_TO_FLOAT
#else
#define FLOAT_TO_OUT FLOAT_TO_HALF
#define OUT_TO_FLOAT HALF_TO_FLOAT
#endif

#ifdef OUT_HALF
layout(std430, binding = 0) writeonly buffer Out { uint16_t out_[]; };
#define STORE_OUT(v) FLOAT_TO_OUT(v)
#else
layout(std430, binding = 0) writeonly buffer Out { T_OUT out_[]; };
#define STORE_OUT(v) (v)
#endif
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
#define VEC_double dvec4
#define VEC_int8_t i8vec4
#define VEC_uint8_t u8vec4
#define VEC_int16_t i16vec4
#define VEC_uint16_t u16vec4
#define VEC_int64_t i64vec4
#define VEC_uint64_t u64vec4
#define VEC(T) PASTE(VEC_, T)
#ifdef OUT_HALF  // half results: four halves (8 bytes) a store
layout(std430, binding = 0) writeonly buffer Out4 { u16vec4 out4_[]; };
#define STORE4_OUT(r) u16vec4(FLOAT_TO_OUT(r.x), FLOAT_TO_OUT(r.y), FLOAT_TO_OUT(r.z), FLOAT_TO_OUT(r.w))
#else
layout(std430, binding = 0) writeonly buffer Out4 { VEC(T_OUT) out4_[]; };
#define STORE4_OUT(r) (r)
#endif
// An operand's 4-vector in T: half ones (u16vec4 of half bits) through their floats.
#define HALF4(v, TO) vec4(TO(v.x), TO(v.y), TO(v.z), TO(v.w))
#ifdef A_HALF
#define CVT4_A(v) VEC(T)(HALF4(v, A_TO_FLOAT))
#else
#define CVT4_A(v) VEC(T)(v)
#endif
#ifdef B_HALF
#define CVT4_B(v) VEC(T)(HALF4(v, B_TO_FLOAT))
#else
#define CVT4_B(v) VEC(T)(v)
#endif
#ifdef C_HALF
#define CVT4_C(v) VEC(T)(HALF4(v, C_TO_FLOAT))
#else
#define CVT4_C(v) VEC(T)(v)
#endif
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

// X_SEXT64: a signed operand narrower than the int64 computation. lavapipe (Mesa) miscompiles
// comparisons of a sign-extended value (int64_t(-1) < 0l came out false), so it is widened
// through its two words instead.
#ifdef VK_MATH64
int64_t widen_s64(int v) { return packInt2x32(ivec2(v, v >> 31)); }
#endif
#ifdef A_SCALAR
#define LOAD_A(i) SCALAR(0)
#elif defined(A_SEXT64)
#define LOAD_A(i) widen_s64(int(a_[operand_index(i, 0u)]))
#elif defined(A_HALF)
#define LOAD_A(i) T(A_TO_FLOAT(a_[operand_index(i, 0u)]))
#else
#define LOAD_A(i) T(a_[operand_index(i, 0u)])
#endif
#ifdef B_SCALAR
#define LOAD_B(i) SCALAR(1)
#elif defined(B_SEXT64)
#define LOAD_B(i) widen_s64(int(b_[operand_index(i, 1u)]))
#elif defined(B_HALF)
#define LOAD_B(i) T(B_TO_FLOAT(b_[operand_index(i, 1u)]))
#else
#define LOAD_B(i) T(b_[operand_index(i, 1u)])
#endif
#ifdef C_SCALAR
#define LOAD_C(i) SCALAR(2)
#elif defined(C_SEXT64)
#define LOAD_C(i) widen_s64(int(c_[operand_index(i, 2u)]))
#elif defined(C_HALF)
#define LOAD_C(i) T(C_TO_FLOAT(c_[operand_index(i, 2u)]))
#else
#define LOAD_C(i) T(c_[operand_index(i, 2u)])
#endif

#ifdef OUT_HALF
// numpy's float16 maximum and minimum keep x1 where x1 == x2, +0 and -0 included; nextafter gives
// x2 there (the standard's special cases; numpy 2.5, where 2.4's float16 loop kept x1). The zeros
// told apart by their bits: without SignedZeroInfNanPreserve a compiler may treat them as one
// value and answer a float comparison's tie with either operand.
bool zero_pair(float x, float y) { return ((floatBitsToUint(x) | floatBitsToUint(y)) << 1) == 0u; }

// nextafter on half values (held exactly in floats): their bit patterns stepped by one.
#ifdef OUT_BF16
#define HALF_TINY 0x00010000u  // 2**-133, bfloat16's least subnormal
#else
#define HALF_TINY 0x33800000u  // 2**-24
#endif
float half_nextafter(float x, float y) {
    if (isnan(x) || isnan(y)) return x + y;
    if (zero_pair(x, y) || x == y) return y;  // nextafter(0, -0) is -0
    if (x == 0.0) return uintBitsToFloat((floatBitsToUint(y) & 0x80000000u) | HALF_TINY);
    uint h = uint(FLOAT_TO_OUT(x));
    h = (x < y) == (x > 0.0) ? h + 1u : h - 1u;
    return OUT_TO_FLOAT(h);
}
#endif

T_OUT apply_op(T x, T y, T z) {
#if defined(OP_add)
    return T_OUT(x + y);
#elif defined(OP_subtract)
    return T_OUT(x - y);
#elif defined(OP_multiply)
    return T_OUT(x * y);
#elif defined(OP_divide)
    return T_OUT(np_divide(x, y));
#elif defined(OP_maximum) && defined(OUT_HALF) && !defined(OUT_BF16)  // numpy's float16 loops: x1 where equal (+0 and -0)
    return (zero_pair(x, y) || x >= y || isnan(x)) ? x : y;
#elif defined(OP_maximum)
    return T_OUT(np_max(x, y));
#elif defined(OP_minimum) && defined(OUT_HALF) && !defined(OUT_BF16)
    return (zero_pair(x, y) || x <= y || isnan(x)) ? x : y;
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
#elif defined(OP_exp2)
    return T_OUT(np_exp2(x));
#elif defined(OP_expm1)
    return T_OUT(np_expm1(x));
#elif defined(OP_log2)
    return T_OUT(np_log2(x));
#elif defined(OP_log10)
    return T_OUT(np_log10(x));
#elif defined(OP_log1p)
    return T_OUT(np_log1p(x));
#elif defined(OP_sin)
    return T_OUT(np_sin(x));
#elif defined(OP_cos)
    return T_OUT(np_cos(x));
#elif defined(OP_tan)
    return T_OUT(np_tan(x));
#elif defined(OP_arcsin)
    return T_OUT(np_asin(x));
#elif defined(OP_arccos)
    return T_OUT(np_acos(x));
#elif defined(OP_arctan)
    return T_OUT(np_atan(x));
#elif defined(OP_sinh)
    return T_OUT(np_sinh(x));
#elif defined(OP_cosh)
    return T_OUT(np_cosh(x));
#elif defined(OP_tanh)
    return T_OUT(np_tanh(x));
#elif defined(OP_arcsinh)
    return T_OUT(np_asinh(x));
#elif defined(OP_arccosh)
    return T_OUT(np_acosh(x));
#elif defined(OP_arctanh)
    return T_OUT(np_atanh(x));
#elif defined(OP_floor)
    return T_OUT(np_floor(x));
#elif defined(OP_ceil)
    return T_OUT(np_ceil(x));
#elif defined(OP_trunc)
    return T_OUT(np_trunc(x));
#elif defined(OP_rint)
    return T_OUT(np_rint(x));
#elif defined(OP_isnan)
    return T_OUT(np_isnan(x));
#elif defined(OP_isinf)
    return T_OUT(np_isinf(x));
#elif defined(OP_isfinite)
    return T_OUT(np_isfinite(x));
#elif defined(OP_signbit)
    return T_OUT(np_signbit(x));
#elif defined(OP_sign)
    return T_OUT(np_sign(x));
#elif defined(OP_reciprocal)
    return T_OUT(np_reciprocal(x));
#elif defined(OP_square)
    return T_OUT(x * x);
#elif defined(OP_logical_not)
    return T_OUT(x == T(0));
#elif defined(OP_invert)
    return T_OUT(~x);
#elif defined(OP_power)
    return T_OUT(np_pow(x, y));
#elif defined(OP_remainder)
    return T_OUT(np_remainder(x, y));
#elif defined(OP_fmod)
    return T_OUT(np_fmod(x, y));
#elif defined(OP_floor_divide)
    return T_OUT(np_floor_divide(x, y));
#elif defined(OP_arctan2)
    return T_OUT(np_atan2(x, y));
#elif defined(OP_hypot)
    return T_OUT(np_hypot(x, y));
#elif defined(OP_logaddexp)
    return T_OUT(np_logaddexp(x, y));
#elif defined(OP_copysign)
    return T_OUT(np_copysign(x, y));
#elif defined(OP_nextafter) && defined(OUT_HALF)  // the next float16, not the next float32
    return half_nextafter(x, y);
#elif defined(OP_nextafter)
    return T_OUT(np_nextafter(x, y));
#elif defined(OP_left_shift)
    return T_OUT(np_left_shift(x, y));
#elif defined(OP_right_shift)
    return T_OUT(np_right_shift(x, y));
#elif defined(OP_logical_and)
    return T_OUT(x != T(0) && y != T(0));
#elif defined(OP_logical_or)
    return T_OUT(x != T(0) || y != T(0));
#elif defined(OP_logical_xor)
    return T_OUT((x != T(0)) != (y != T(0)));
#elif defined(OP_bitwise_and)
    return T_OUT(x & y);
#elif defined(OP_bitwise_or)
    return T_OUT(x | y);
#elif defined(OP_bitwise_xor)
    return T_OUT(x ^ y);
#elif defined(OP_clip)  // numpy: minimum(maximum(x, lo), hi), NaNs included
    return T_OUT(np_min(np_max(x, y), z));
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
        VEC(T) xs = CVT4_A(a4_[p.w[2] / 4u + j]);
#endif
#if NARGS >= 2
#ifdef B_SCALAR
        VEC(T) ys = VEC(T)(LOAD_B(0u));
#else
        VEC(T) ys = CVT4_B(b4_[p.w[3] / 4u + j]);
#endif
#endif
#if NARGS >= 3
#ifdef C_SCALAR
        VEC(T) zs = VEC(T)(LOAD_C(0u));
#else
        VEC(T) zs = CVT4_C(c4_[p.w[4] / 4u + j]);
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
        out4_[p.w[1] / 4u + j] = STORE4_OUT(r);
    }
#else
    GRID_STRIDE_LOOP(i, p.w[0]) {
#if NARGS >= 2
        y = LOAD_B(i);
#endif
#if NARGS >= 3
        z = LOAD_C(i);
#endif
        out_[p.w[1] + i] = STORE_OUT(apply_op(LOAD_A(i), y, z));
    }
#endif
}
