// The binary operators of reductions and scans, by name (add, mul, min, max; and, or, xor on
// integers): combine_<op>(a, b), identity_<op>(T) (the argument only picks the type), and the
// subgroup intrinsic of each, sg_reduce_<op> / sg_inclusive_<op> / sg_exclusive_<op>.
// Float min/max here ignore NaN ordering; callers that must propagate NaN track it apart.
#ifndef VK_LIB_OPS
#define VK_LIB_OPS
#include "math.glsl"

#define DEFINE_ARITH_OPS(T, MAXV, MINV) \
    T combine_add(T a, T b) { return a + b; } \
    T combine_mul(T a, T b) { return a * b; } \
    T combine_min(T a, T b) { return min(a, b); } \
    T combine_max(T a, T b) { return max(a, b); } \
    T identity_add(T t) { return T(0); } \
    T identity_mul(T t) { return T(1); } \
    T identity_min(T t) { return MAXV; } \
    T identity_max(T t) { return MINV; }
DEFINE_ARITH_OPS(float, INF, -INF)
DEFINE_ARITH_OPS(int, 0x7fffffff, int(0x80000000))
DEFINE_ARITH_OPS(uint, 0xffffffffu, 0u)

#define DEFINE_BIT_OPS(T) \
    T combine_and(T a, T b) { return a & b; } \
    T combine_or(T a, T b) { return a | b; } \
    T combine_xor(T a, T b) { return a ^ b; } \
    T identity_and(T t) { return ~T(0); } \
    T identity_or(T t) { return T(0); } \
    T identity_xor(T t) { return T(0); }
DEFINE_BIT_OPS(int)
DEFINE_BIT_OPS(uint)

// WG_T64: the kernel's 64-bit type (int64_t, uint64_t or double), defined only where it asks (the
// type needs a device feature), and its values as two 32-bit words (low first) and back.
#ifdef WG_T64
#define MAX_OF_double double(INF)
#define MIN_OF_double double(-INF)
#define MAX_OF_int64_t int64_t(0x7fffffffffffffffUL)
#define MIN_OF_int64_t int64_t(0x8000000000000000UL)
#define MAX_OF_uint64_t uint64_t(0xffffffffffffffffUL)
#define MIN_OF_uint64_t uint64_t(0UL)
DEFINE_ARITH_OPS(WG_T64, PASTE(MAX_OF_, WG_T64), PASTE(MIN_OF_, WG_T64))
#endif
#define WORDS64_double(x) unpackDouble2x32(x)
#define WORDS64_int64_t(x) unpackUint2x32(uint64_t(x))
#define WORDS64_uint64_t(x) unpackUint2x32(x)
#define OF_WORDS64_double(w) packDouble2x32(w)
#define OF_WORDS64_int64_t(w) int64_t(packUint2x32(w))
#define OF_WORDS64_uint64_t(w) packUint2x32(w)
#define WORDS64(T, x) PASTE(WORDS64_, T)(x)
#define FROM_WORDS64(T, w) PASTE(OF_WORDS64_, T)(w)

// Shared scratch holds 32-bit words of any of the three types.
uint to_bits(float x) { return floatBitsToUint(x); }
uint to_bits(int x) { return uint(x); }
uint to_bits(uint x) { return x; }

#ifdef HAS_SUBGROUP_ARITHMETIC
#define sg_reduce_add subgroupAdd
#define sg_reduce_mul subgroupMul
#define sg_reduce_min subgroupMin
#define sg_reduce_max subgroupMax
#define sg_reduce_and subgroupAnd
#define sg_reduce_or subgroupOr
#define sg_reduce_xor subgroupXor
#define sg_inclusive_add subgroupInclusiveAdd
#define sg_inclusive_mul subgroupInclusiveMul
#define sg_inclusive_min subgroupInclusiveMin
#define sg_inclusive_max subgroupInclusiveMax
#define sg_inclusive_and subgroupInclusiveAnd
#define sg_inclusive_or subgroupInclusiveOr
#define sg_inclusive_xor subgroupInclusiveXor
#define sg_exclusive_add subgroupExclusiveAdd
#define sg_exclusive_mul subgroupExclusiveMul
#define sg_exclusive_min subgroupExclusiveMin
#define sg_exclusive_max subgroupExclusiveMax
#define sg_exclusive_and subgroupExclusiveAnd
#define sg_exclusive_or subgroupExclusiveOr
#define sg_exclusive_xor subgroupExclusiveXor
#endif
#endif
