// The float64, int64 and uint64 versions of lib/math.glsl's functions, with the same names and
// numpy's semantics. math.glsl includes this file at its end where VK_MATH64 is defined. It
// enables the int64 types, which the float64 functions use too (bits, significands): a kernel
// that includes it needs the Float64 and Int64 capabilities (shaderFloat64, shaderInt64).
//
// The float64 library follows the float32 one's rules. Vulkan asks of double-precision
// instructions only single precision's accuracy; the library takes the doubles' +, -, * and
// conversions to be correctly rounded (as every device with shaderFloat64 has them) and nothing
// more: division and sqrt may be ulps off, fma a separate multiply and add, subnormals flushed,
// and GLSL.std.450's exp, log, sin, pow, ... take no doubles at all. So every function is built
// from +, -, * and integer arithmetic: range reductions on the bits (subnormals included),
// double-double arithmetic (a value as hi + lo) where a double loses too much, Taylor polynomials
// past that, and the built-in division and sqrt only as first guesses that a residual corrects
// (DIV_GUESS, SQRT_GUESS, FMA: math.glsl). Only a result in the subnormal range may be rounded
// twice. Measured accuracy (ulps against long double and numpy): tests/shaders/test_math64.py.
#ifndef VK_LIB_MATH64
#define VK_LIB_MATH64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#ifdef VK_TEST_INEXACT_BUILTINS
// 2^-30 off (as far off as some devices' double division and sqrt are: no bound but
// single precision's is promised), and an unfused fma (see math.glsl)
double div_guess_(double a, double b) { precise double q = a / b; precise double r = q * 1.000000000931322574615478515625lf; return r; }
double sqrt_guess_(double x) { precise double s = sqrt(x); precise double r = s * 0.999999999068677425384521484375lf; return r; }
double fma_(double a, double b, double c) { precise double p = a * b; precise double r = p + c; return r; }
#endif

const uint64_t SIGN64 = 0x8000000000000000ul;
const uint64_t ABS64 = 0x7ffffffffffffffful;
const uint64_t EXP64 = 0x7ff0000000000000ul;   // the bits of +inf
const uint64_t FRAC64 = 0x000ffffffffffffful;
const uint64_t ONE52 = 0x0010000000000000ul;   // the implicit bit, 2^52
#define NAN64 uint64BitsToDouble(0x7ff8000000000000ul)
#define INF64 uint64BitsToDouble(EXP64)

// Classification on the bits: compilers may assume that float comparisons see no NaN or inf.
bool isnan_d(double x) { return (doubleBitsToUint64(x) & ABS64) > EXP64; }
bool isinf_d(double x) { return (doubleBitsToUint64(x) & ABS64) == EXP64; }
bool iszero_d(double x) { return (doubleBitsToUint64(x) & ABS64) == 0ul; }
double copysign_d(double x, double s) {
    return uint64BitsToDouble((doubleBitsToUint64(x) & ABS64) | (doubleBitsToUint64(s) & SIGN64));
}
int msb64(uint64_t u) {
    uint hi = uint(u >> 32);
    return (hi != 0u) ? 32 + findMSB(hi) : findMSB(uint(u));
}

// 2^n for n in [-1022, 1023], exactly.
double pow2i_d(int n) { return uint64BitsToDouble(uint64_t(n + 1023) << 52); }
// x * 2^n for n in [-2044, 2046], rounded once (the first product is exact).
double scale2_d(double x, int n) {
    int h = n / 2;
    precise double y = x * pow2i_d(h);
    precise double r = y * pow2i_d(n - h);
    return r;
}
// |x| = m * 2^e with the integer significand m in [2^52, 2^53), for finite nonzero x, read off
// the bits (so subnormals work where the device flushes them in arithmetic).
uint64_t significand_d(double x, out int e) {
    uint64_t u = doubleBitsToUint64(x) & ABS64;
    int be = int(u >> 52);
    if (be == 0) {
        int p = msb64(u);
        e = p - 1126;
        return u << (52 - p);
    }
    e = be - 1075;
    return (u & FRAC64) | ONE52;
}

// x rounded to an integer (mode 0: trunc, 1: floor, 2: ceil, 3: rint, ties to even) on the bits,
// exactly, subnormals and the sign of a zero result included.
double round_d(double x, int mode) {
    uint64_t u = doubleBitsToUint64(x);
    int be = int((u >> 52) & 0x7fful);
    if (be >= 1075) return x;  // integers already, infinities, NaN
    bool neg = (u & SIGN64) != 0ul, up;
    uint64_t ip;
    if (be < 1023) {  // |x| < 1
        ip = 0ul;
        bool nz = (u & ABS64) != 0ul;
        up = (mode == 1) ? (neg && nz) : ((mode == 2) ? (!neg && nz) : (mode == 3 && be == 1022 && (u & FRAC64) != 0ul));
    } else {
        int sh = 1075 - be;  // fraction bits, 1..52
        uint64_t m = (u & FRAC64) | ONE52;
        ip = m >> sh;
        uint64_t rem = m & ((1ul << sh) - 1ul), half_ = 1ul << (sh - 1);
        up = (mode == 1) ? (neg && rem != 0ul)
           : ((mode == 2) ? (!neg && rem != 0ul) : (mode == 3 && (rem > half_ || (rem == half_ && (ip & 1ul) != 0ul))));
    }
    return copysign_d(double(ip + (up ? 1ul : 0ul)), x);
}

// ---- double-double arithmetic: a value as a dvec2 (hi, lo) with |lo| <= ulp(hi) / 2 ----------
dvec2 fast_two_sum_d(double a, double b) {  // |a| >= |b| (or a == 0)
    precise double s = a + b;
    precise double e = b - (s - a);
    return dvec2(s, e);
}
dvec2 two_sum_d(double a, double b) {
    precise double s = a + b;
    precise double bb = s - a;
    precise double e = (a - (s - bb)) + (b - bb);
    return dvec2(s, e);
}
// Dekker's product: a * b = p + e exactly (|a|, |b| < 2^996, |a b| > 2^-969), without fma.
dvec2 split_d(double a) {
    precise double c = 134217729.0lf * a;
    precise double h = c - (c - a);
    precise double l = a - h;
    return dvec2(h, l);
}
dvec2 two_prod_d(double a, double b) {
    precise double p = a * b;
    dvec2 as = split_d(a), bs = split_d(b);
    precise double e = ((as.x * bs.x - p) + as.x * bs.y + as.y * bs.x) + as.y * bs.y;
    return dvec2(p, e);
}
dvec2 dd_add_d(dvec2 a, dvec2 b) {
    dvec2 s = two_sum_d(a.x, b.x);
    precise double t = s.y + (a.y + b.y);
    return fast_two_sum_d(s.x, t);
}
dvec2 dd_mul_d(dvec2 a, dvec2 b) {
    dvec2 p = two_prod_d(a.x, b.x);
    precise double t = p.y + (a.x * b.y + a.y * b.x);
    return fast_two_sum_d(p.x, t);
}
// a / b and sqrt(x) within about an ulp, for the error-free steps' range (|a|, |b|, |x| < 2^996,
// the products above 2^-969): the built-in's guess, which may be far off (Vulkan promises double
// division and sqrt no more than single precision's accuracy), moved by its exact residual once,
// which squares its relative error e. Later corrections may then assume a guess within an ulp.
double div_refine_d(double a, double b) {
    double q = DIV_GUESS(a, b);
    dvec2 p = two_prod_d(q, b);
    precise double r = (a - p.x) - p.y;
    precise double s = q + DIV_GUESS(r, b);
    return s;
}
double sqrt_refine_d(double x) {
    double s = SQRT_GUESS(x);
    dvec2 p = two_prod_d(s, s);
    precise double r = (x - p.x) - p.y;
    precise double t = s + DIV_GUESS(r, 2.0lf * s);
    return t;
}
// a / b: the refined quotient corrected by its exact residual (relative error about e 2^-53).
dvec2 dd_div_d(dvec2 a, dvec2 b) {
    double q = div_refine_d(a.x, b.x);
    dvec2 p = two_prod_d(q, b.x);
    precise double r = (((a.x - p.x) - p.y) + a.y) - q * b.y;
    precise double c = DIV_GUESS(r, b.x);
    return fast_two_sum_d(q, c);
}
dvec2 dd_sqrt_d(dvec2 a) {  // a.x > 0
    double s = sqrt_refine_d(a.x);
    dvec2 p = two_prod_d(s, s);
    precise double r = ((a.x - p.x) - p.y) + a.y;
    precise double c = DIV_GUESS(r, 2.0lf * s);
    return fast_two_sum_d(s, c);
}

// ---- max, min, divide, sqrt ------------------------------------------------------------------
double np_max(double a, double b) { return isnan_d(a) ? a : (isnan_d(b) ? b : (a > b ? a : b)); }
double np_min(double a, double b) { return isnan_d(a) ? a : (isnan_d(b) ? b : (a < b ? a : b)); }

// a / b rounded correctly, subnormal results included: the significands' quotient in integers,
// from the refined built-in quotient as a first guess.
double np_divide(double a, double b) {
    if (isnan_d(a) || isnan_d(b)) return NAN64;
    double sgn = uint64BitsToDouble(((doubleBitsToUint64(a) ^ doubleBitsToUint64(b)) & SIGN64) | 0x3ff0000000000000ul);
    if (isinf_d(a)) return isinf_d(b) ? NAN64 : copysign_d(INF64, sgn);
    if (isinf_d(b) || iszero_d(a)) return iszero_d(b) ? NAN64 : copysign_d(0.0lf, sgn);
    if (iszero_d(b)) return copysign_d(INF64, sgn);
    int ea, eb;
    uint64_t ma = significand_d(a, ea), mb = significand_d(b, eb);
    int k = (ma >= mb) ? 52 : 53;
    int e = ea - eb - k;  // |a / b| = (q + r / mb) 2^e, q = floor(ma 2^k / mb) in [2^52, 2^53)
    if (e > 971) return copysign_d(INF64, sgn);
    uint64_t q = uint64_t(div_refine_d(double(ma) * pow2i_d(k), double(mb)));
    int64_t r = int64_t((ma << k) - q * mb);  // small, so the low 64 bits hold it
    int64_t mbs = int64_t(mb);
    // the guess may be a few units off
    REPEAT8(if (r < 0l) { q -= 1ul; r += mbs; } if (r >= mbs) { q += 1ul; r -= mbs; })
    // round to nearest even, dropping sh bits more where the result is subnormal
    int sh = max(-1074 - e, 0);
    if (sh > 54) return copysign_d(0.0lf, sgn);
    bool up;
    if (sh == 0) {
        up = 2l * r > mbs || (2l * r == mbs && (q & 1ul) != 0ul);
    } else {
        uint64_t low = q & ((1ul << sh) - 1ul), half_ = 1ul << (sh - 1);
        up = low > half_ || (low == half_ && (r != 0l || ((q >> sh) & 1ul) != 0ul));
    }
    uint64_t qr = (q >> sh) + (up ? 1ul : 0ul);
    return copysign_d(scale2_d(double(qr), e + sh), sgn);
}
double np_reciprocal(double x) { return np_divide(1.0lf, x); }

// sqrt rounded correctly: the refined built-in's guess y checked and moved with integer arithmetic.
double np_sqrt(double x) {
    if (!(x > 0.0lf) || isinf_d(x)) return (x < 0.0lf) ? NAN64 : x;  // NaN, +-0, +inf as they are
    int e;
    uint64_t m = significand_d(x, e);
    // sqrt(m 2^e) = sqrt(N) 2^((e - s) / 2) with N = m 2^s, e - s even, sqrt(N) in [2^52, 2^53)
    int s = ((e & 1) != 0) ? 53 : 52;
    uint64_t y = uint64_t(sqrt_refine_d(double(m) * pow2i_d(s)) + 0.5lf);
    // D = N - y^2 (small: the low 64 bits hold it); y is right when y^2 - y < N <= y^2 + y
    int64_t d = int64_t((m << s) - y * y);
    REPEAT8(if (d > int64_t(y)) { d -= int64_t(2ul * y + 1ul); y += 1ul; } if (d <= -int64_t(y)) { y -= 1ul; d += int64_t(2ul * y + 1ul); })
    return scale2_d(double(y), (e - s) / 2);
}

// ---- exp -------------------------------------------------------------------------------------
const double LN2_DD_H = 0.6931471805599453lf;     // ln 2 as a double-double
const double LN2_DD_L = 2.3190468138462996e-17lf;
const double LN2_S_H = 0.6931471805601177lf;      // 41 bits: k * LN2_S_H is exact for |k| < 2^12
const double LN2_S_L = -1.7239444525614835e-13lf;
const double LOG2E_DD_H = 1.4426950408889634lf;
const double LOG2E_DD_L = 2.0355273740931033e-17lf;

// 2^(rh + rl) - 1 as a double-double (relative error < 2^-60), |rh| <= 1/2, |rl| <= 2^-52:
// with v = (rh + rl) ln2, e^v - 1 = v + v^2/2 + v^3 P(v), the first two terms exactly, P(v) the
// Taylor polynomial to v^11 (the rest is below 2^-56 of P for |v| <= ln2 / 2).
dvec2 exp2m1_small_d(double rh, double rl) {
    dvec2 a = two_prod_d(rh, LN2_DD_H);
    precise double vl = a.y + (rh * LN2_DD_L + rl * LN2_DD_H);
    double v = a.x;
    dvec2 h = two_prod_d(v, 0.5lf * v);
    double p = FMA(FMA(FMA(FMA(FMA(FMA(FMA(FMA(FMA(FMA(FMA(1.1470745597729725e-11lf, v,
        1.6059043836821613e-10lf), v, 2.08767569878681e-09lf), v, 2.505210838544172e-08lf), v,
        2.755731922398589e-07lf), v, 2.7557319223985893e-06lf), v, 2.48015873015873e-05lf), v,
        0.0001984126984126984lf), v, 0.001388888888888889lf), v, 0.008333333333333333lf), v,
        0.041666666666666664lf), v, 0.16666666666666666lf);
    dvec2 s = fast_two_sum_d(v, h.x);
    precise double tail = s.y + ((h.y + vl * (1.0lf + v)) + v * v * v * p);
    return fast_two_sum_d(s.x, tail);
}
// 2^(th + tl) = 2^n (1 + u), u a double-double with |u| < 0.42, for |th| <= 2100.
dvec2 exp2_split_d(double th, double tl, out int n) {
    double fn = roundEven(th);
    n = int(fn);
    precise double rh0 = th - fn;  // exact
    dvec2 r = two_sum_d(rh0, tl);
    return exp2m1_small_d(r.x, r.y);
}
// x * log2(e) as a double-double, |x| < 2^900.
dvec2 mul_log2e_d(double x) {
    dvec2 p = two_prod_d(x, LOG2E_DD_H);
    precise double l = p.y + x * LOG2E_DD_L;
    return dvec2(p.x, l);
}
// 1 + u rounded, u a double-double.
double one_plus_d(dvec2 u) {
    dvec2 s = two_sum_d(1.0lf, u.x);
    precise double r = s.x + (s.y + u.y);
    return r;
}
double np_exp(double x) {
    if (isnan_d(x)) return x;
    if (x > 709.8lf) return INF64;
    if (x < -746.0lf) return 0.0lf;
    int n;
    dvec2 t = mul_log2e_d(x);
    dvec2 u = exp2_split_d(t.x, t.y, n);
    return scale2_d(one_plus_d(u), n);
}
double np_exp2(double x) {
    if (isnan_d(x)) return x;
    if (x >= 1024.0lf) return INF64;
    if (x < -1076.0lf) return 0.0lf;
    int n;
    dvec2 u = exp2_split_d(x, 0.0lf, n);
    return scale2_d(one_plus_d(u), n);
}
// e^x as 2^n (p.x + p.y), for -746 <= x <= 711.
dvec2 exp_dd_d(double x, out int n) {
    dvec2 t = mul_log2e_d(x);
    dvec2 u = exp2_split_d(t.x, t.y, n);
    dvec2 s = two_sum_d(1.0lf, u.x);
    precise double l = s.y + u.y;
    return fast_two_sum_d(s.x, l);
}
// e^x - 1 as a double-double, -746 <= x <= 36 (where 2^n - 1 is exact for the 2^n of e^x).
dvec2 expm1_dd_d(double x) {
    int n;
    dvec2 t = mul_log2e_d(x);
    dvec2 u = exp2_split_d(t.x, t.y, n);
    if (n == 0) return u;
    if (n < -53) {  // -1 + 2^n (1 + u): 2^n - 1 is not a double
        precise double tail = pow2i_d(max(n, -1022)) * (1.0lf + u.x);
        return fast_two_sum_d(-1.0lf, tail);
    }
    // (2^n - 1) + 2^n u, 2^n - 1 exact
    double p = pow2i_d(n);
    precise double a = p - 1.0lf;
    dvec2 s = two_sum_d(a, p * u.x);
    precise double l = s.y + p * u.y;
    return fast_two_sum_d(s.x, l);
}
double np_expm1(double x) {
    double ax = abs(x);
    if (!(ax >= 5.5e-17lf)) return x;  // NaN, +-0, subnormals, tiny: x + x^2/2 rounds to x
    if (x > 709.8lf) return INF64;
    if (x < -38.0lf) return -1.0lf;    // e^x below half an ulp of 1
    if (x <= 36.0lf) return expm1_dd_d(x).x;
    int n;
    dvec2 p = exp_dd_d(x, n);           // 2^n p - 1
    if (n > 110) return scale2_d(p.x, n);  // the -1 is far below the rounding
    double s = pow2i_d(n);
    dvec2 r = two_sum_d(p.x * s, -1.0lf);
    precise double res = r.x + (r.y + p.y * s);
    return res;
}

// ---- log -------------------------------------------------------------------------------------
const double LOG10E_DD_H = 0.4342944819032518lf;
const double LOG10E_DD_L = 1.098319650216765e-17lf;
const double LOG10_2_S_H = 0.3010299956640665lf;  // 41 bits
const double LOG10_2_S_L = -8.532344317057107e-14lf;

// x = 2^k m with m in [sqrt(1/2), sqrt(2)), for finite x > 0 (subnormals included).
double log_reduce_d(double x, out int k) {
    int e;
    uint64_t mi = significand_d(x, e) & FRAC64;
    bool upper = mi >= 0x6a09e667f3bcdul;  // m >= sqrt(2): halve it
    k = e + 52 + (upper ? 1 : 0);
    return uint64BitsToDouble(mi | (upper ? 0x3fe0000000000000ul : 0x3ff0000000000000ul));
}
// log(m) as a double-double (relative error < 2^-70), m in [sqrt(1/2), sqrt(2)).
dvec2 log_m_dd_d(double m) {
    precise double f = m - 1.0lf;  // exact
    // log(1 + f) = 2 atanh(s), s = f / (2 + f) as a double-double
    dvec2 d = fast_two_sum_d(2.0lf, f);
    double sh = div_refine_d(f, d.x);
    dvec2 p = two_prod_d(sh, d.x);
    precise double sl0 = ((f - p.x) - p.y) - sh * d.y;
    double sl = DIV_GUESS(sl0, d.x);
    dvec2 s = fast_two_sum_d(sh, sl);
    // 2 atanh(s) = 2s + (2/3) s^3 + (2/5) s^5 + s^7 (2/7 + 2/9 s^2 + ... + 2/25 s^18), |s| < 0.172:
    // the first three in double-doubles, the rest (below 2^-18 of the sum) in doubles
    dvec2 s2 = dd_mul_d(s, s);
    dvec2 s3 = dd_mul_d(s2, s);
    dvec2 s5 = dd_mul_d(s3, s2);
    dvec2 t3 = dd_mul_d(s3, dvec2(0.6666666666666666lf, 3.700743415417188e-17lf));
    dvec2 t5 = dd_mul_d(s5, dvec2(0.4lf, -2.2204460492503132e-17lf));
    double z = s2.x;
    double q = FMA(FMA(FMA(FMA(FMA(FMA(FMA(FMA(FMA(0.08lf, z, 0.08695652173913043lf), z,
        0.09523809523809523lf), z, 0.10526315789473684lf), z, 0.11764705882352941lf), z,
        0.13333333333333333lf), z, 0.15384615384615385lf), z, 0.18181818181818182lf), z,
        0.2222222222222222lf), z, 0.2857142857142857lf);
    precise double t7 = s5.x * z * q;
    dvec2 a = dd_add_d(dvec2(2.0lf * s.x, 2.0lf * s.y), t3);
    a = dd_add_d(a, t5);
    precise double lo = a.y + t7;
    return fast_two_sum_d(a.x, lo);
}
// log(x) as a double-double, finite x > 0.
dvec2 log_dd_d(double x) {
    int k;
    dvec2 l = log_m_dd_d(log_reduce_d(x, k));
    double fk = double(k);
    dvec2 s = two_sum_d(fk * LN2_S_H, l.x);
    precise double lo = s.y + (l.y + fk * LN2_S_L);
    return fast_two_sum_d(s.x, lo);
}
// log(a) for a double-double a > 0 (finite).
dvec2 log_dd2_d(dvec2 a) {
    dvec2 l = log_dd_d(a.x);
    // log(a.x + a.y) = log(a.x) + t - t^2/2, t = a.y / a.x as a double-double
    dvec2 t = dvec2(DIV_GUESS(a.y, a.x), 0.0lf);
    if (a.x < 1.0e299lf) t = dd_div_d(dvec2(a.y, 0.0lf), dvec2(a.x, 0.0lf));
    dvec2 s = two_sum_d(l.x, t.x);
    precise double lo = s.y + (l.y + (t.y - 0.5lf * t.x * t.x));
    return fast_two_sum_d(s.x, lo);
}
// numpy's specials for the logarithms: NaN, negative -> NaN, +-0 -> -inf, +inf -> +inf.
#define LOG_SPECIALS_D(x) \
    if (!(x > 0.0lf) || isinf_d(x)) return iszero_d(x) ? -INF64 : ((x > 0.0lf || isnan_d(x)) ? x : NAN64)
double np_log(double x) {
    LOG_SPECIALS_D(x);
    return log_dd_d(x).x;
}
// log2(x) as a double-double, finite x > 0.
dvec2 log2_dd_d(double x) {
    int k;
    dvec2 l = dd_mul_d(log_m_dd_d(log_reduce_d(x, k)), dvec2(LOG2E_DD_H, LOG2E_DD_L));
    dvec2 s = two_sum_d(double(k), l.x);
    precise double lo = s.y + l.y;
    return fast_two_sum_d(s.x, lo);
}
double np_log2(double x) {
    LOG_SPECIALS_D(x);
    return log2_dd_d(x).x;
}
double np_log10(double x) {
    LOG_SPECIALS_D(x);
    int k;
    dvec2 l = dd_mul_d(log_m_dd_d(log_reduce_d(x, k)), dvec2(LOG10E_DD_H, LOG10E_DD_L));
    double fk = double(k);
    dvec2 s = two_sum_d(fk * LOG10_2_S_H, l.x);
    precise double r = s.x + (s.y + (l.y + fk * LOG10_2_S_L));
    return r;
}
// log(1 + e) for a double-double e > -1 (finite): 1 + e as 1 + e.x exactly and the rest.
dvec2 log1p_dd_d(dvec2 e) {
    dvec2 s = two_sum_d(1.0lf, e.x);
    dvec2 rest = two_sum_d(s.y, e.y);
    dvec2 l = log_dd_d(s.x);
    // log(s.x + rest) = log(s.x) + t - t^2/2, t = rest / s.x: all of it where s.x = 1
    dvec2 t = rest;  // (past 1e299 it is below the rounding)
    if (s.x != 1.0lf) t = (s.x < 1.0e299lf) ? dd_div_d(rest, dvec2(s.x, 0.0lf)) : dvec2(0.0lf);
    dvec2 r = two_sum_d(l.x, t.x);
    precise double lo = r.y + (l.y + (t.y - 0.5lf * t.x * t.x));
    return fast_two_sum_d(r.x, lo);
}
double np_log1p(double x) {
    if (!(abs(x) >= 5.5e-17lf)) return x;  // NaN, +-0, tiny: x - x^2/2 rounds to x
    if (!(x > -1.0lf) || isinf_d(x)) return (x == -1.0lf) ? -INF64 : (x > 0.0lf ? x : NAN64);
    return log1p_dd_d(dvec2(x, 0.0lf)).x;
}

// ---- pow -------------------------------------------------------------------------------------
// C99's (and numpy's) special cases, then 2^(y log2|x|) with the exponent as a double-double.
double np_pow(double x, double y) {
    if (iszero_d(y) || x == 1.0lf) return 1.0lf;
    if (isnan_d(x) || isnan_d(y)) return NAN64;
    double ax = abs(x), ay = abs(y);
    bool yint = isinf_d(y) || round_d(y, 0) == y;                        // inf counts as an integer
    bool yodd = yint && ay < 9007199254740992.0lf && (int64_t(y) & 1l) != 0l;  // 2^53 and up are even
    if (isinf_d(y)) return (ax == 1.0lf) ? 1.0lf : (((ax > 1.0lf) == (y > 0.0lf)) ? INF64 : 0.0lf);
    if (iszero_d(x) || isinf_d(x)) {
        double r = ((y < 0.0lf) == iszero_d(x)) ? INF64 : 0.0lf;
        return yodd ? copysign_d(r, x) : r;
    }
    if (x < 0.0lf && !yint) return NAN64;
    double sgn = (x < 0.0lf && yodd) ? -1.0lf : 1.0lf;
    if (ax == 1.0lf) return sgn;  // x = -1 (y may be past two_prod's range)
    dvec2 l = log2_dd_d(ax);
    double th = y * l.x;
    if (!(abs(th) < 2200.0lf)) return copysign_d((th > 0.0lf) ? INF64 : 0.0lf, sgn);
    dvec2 t = two_prod_d(y, l.x);
    precise double tl = t.y + y * l.y;
    if (t.x > 1024.0lf || (t.x == 1024.0lf && tl >= 0.0lf)) return copysign_d(INF64, sgn);
    if (t.x < -1080.0lf) return copysign_d(0.0lf, sgn);
    int n;
    dvec2 u = exp2_split_d(t.x, tl, n);
    return copysign_d(scale2_d(one_plus_d(u), n), sgn);
}

// ---- trigonometric ---------------------------------------------------------------------------
const double PIO2_DD_H = 1.5707963267948966lf;
const double PIO2_DD_L = 6.123233995736766e-17lf;
const double PI_DD_H = 3.141592653589793lf;
const double PI_DD_L = 1.2246467991473532e-16lf;
// The bits of 2/pi, 32 at a time, after two zero words (the bits before the binary point):
// enough for the 192 bits from bit e - 1 on that rem_pio2_d takes, for every double.
const uint TWO_OVER_PI64[42] = uint[](0u, 0u,
    0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu,
    0xDEBBC561u, 0xB7246E3Au, 0x424DD2E0u, 0x06492EEAu, 0x09D1921Cu, 0xFE1DEB1Cu, 0xB129A73Eu,
    0xE88235F5u, 0x2EBB4484u, 0xE99C7026u, 0xB45F7E41u, 0x3991D639u, 0x835339F4u, 0x9C845F8Bu,
    0xBDF9283Bu, 0x1FF897FFu, 0xDE05980Fu, 0xEF2F118Bu, 0x5A0A6D1Fu, 0x6D367ECFu, 0x27CB09B7u,
    0x4F463F66u, 0x9E5FEA2Du, 0x7527BAC7u, 0xEBE5F17Bu, 0x3D0739F7u, 0x8A5292EAu, 0x6BFB5FB1u,
    0x1F8D5D08u, 0x56033046u, 0xFC7B6BABu, 0xF0CFBC20u, 0x9AF4361Du);
uint two_over_pi_bits64(int j, int s) {  // 32 bits of 2/pi from word j, bit s (from the top)
    uint w = TWO_OVER_PI64[j] << s;
    return (s == 0) ? w : (w | (TWO_OVER_PI64[j + 1] >> (32 - s)));
}
// Limb i of m W (m = mh 2^32 + ml, W in 32-bit limbs wl[], least significant first): the low
// halves of ml wl[i] and mh wl[i - 1], the high halves of ml wl[i - 1] and mh wl[i - 2], a carry.
#define PH_LIMB(i, a, b, ap, bp) \
    sum = (a & 0xfffffffful) + (ap >> 32) + (b & 0xfffffffful) + (bp >> 32) + carry; \
    p[i] = uint(sum); carry = sum >> 32;
// x = q pi/2 + r with |r| <= pi/4, r a double-double: exact for every double (Payne-Hanek, with
// integer arithmetic on the bits of 2/pi), finite x with |x| > pi/4.
dvec2 rem_pio2_d(double x, out int q) {
    int e;
    uint64_t m = significand_d(x, e);  // |x| = m 2^e
    // x 2/pi mod 4: the bits of 2/pi from bit e - 1 on (earlier ones give multiples of 4), 192 of
    // them as the integer W; x 2/pi = m W 2^-190 (mod 4), the 2^0 bit of m W at bit 190. The bits
    // left out weigh < 2^-137 against fractions that are never below 2^-62 for doubles.
    int g = e + 62;
    int j = g >> 5, s = g & 31;
    uint w0 = two_over_pi_bits64(j + 5, s), w1 = two_over_pi_bits64(j + 4, s),
         w2 = two_over_pi_bits64(j + 3, s), w3 = two_over_pi_bits64(j + 2, s),
         w4 = two_over_pi_bits64(j + 1, s), w5 = two_over_pi_bits64(j, s);
    uint64_t ml = uint64_t(uint(m)), mh = m >> 32;
    uint64_t a0 = uint64_t(w0) * ml, a1 = uint64_t(w1) * ml, a2 = uint64_t(w2) * ml,
             a3 = uint64_t(w3) * ml, a4 = uint64_t(w4) * ml, a5 = uint64_t(w5) * ml;
    uint64_t b0 = uint64_t(w0) * mh, b1 = uint64_t(w1) * mh, b2 = uint64_t(w2) * mh,
             b3 = uint64_t(w3) * mh, b4 = uint64_t(w4) * mh;
    uint p[6];
    uint64_t sum, carry = 0ul;
    PH_LIMB(0, a0, 0ul, 0ul, 0ul)
    PH_LIMB(1, a1, b0, a0, 0ul)
    PH_LIMB(2, a2, b1, a1, b0)
    PH_LIMB(3, a3, b2, a2, b1)
    PH_LIMB(4, a4, b3, a3, b2)
    PH_LIMB(5, a5, b4, a4, b3)
    // round to the nearest quadrant: the fraction becomes signed, in [-1/2, 1/2)
    uint top5 = p[5] + 0x20000000u;
    q = int(top5 >> 30);
    int fh = int(top5 & 0x3fffffffu) - 0x20000000;
    uint64_t x2 = (uint64_t(uint(fh)) << 32) | uint64_t(p[4]);
    uint64_t x1 = (uint64_t(p[3]) << 32) | uint64_t(p[2]);
    uint64_t x0 = (uint64_t(p[1]) << 32) | uint64_t(p[0]);
    bool neg = fh < 0;
    if (neg) {  // two's complement of (x2, x1, x0)
        x0 = ~x0 + 1ul;
        x1 = ~x1 + ((x0 == 0ul) ? 1ul : 0ul);
        x2 = ~x2 + ((x0 == 0ul && x1 == 0ul) ? 1ul : 0ul);
    }
    // the magnitude as (top + next 2^-64) 2^sc, top's bit 63 set
    uint64_t top, next;
    int sc;
    if (x2 != 0ul) {
        int lz = 63 - msb64(x2);
        top = (lz == 0) ? x2 : ((x2 << lz) | (x1 >> (64 - lz)));
        next = (lz == 0) ? x1 : ((x1 << lz) | (x0 >> (64 - lz)));
        sc = 128 - lz;
    } else if (x1 != 0ul) {
        int lz = 63 - msb64(x1);
        top = (lz == 0) ? x1 : ((x1 << lz) | (x0 >> (64 - lz)));
        next = x0 << lz;
        sc = 64 - lz;
    } else {
        int lz = 63 - msb64(x0);
        top = x0 << lz;
        next = 0ul;
        sc = -lz;
    }
    // the fraction (of a quadrant) as a double-double, then r = f pi/2
    double fhi = double(top & ~0x7fful);
    precise double flo = double(top & 0x7fful) + double(next) * 5.421010862427522e-20lf;  // 2^-64
    dvec2 f = fast_two_sum_d(fhi, flo);
    f *= pow2i_d(sc - 190);
    dvec2 res = dd_mul_d(f, dvec2(PIO2_DD_H, PIO2_DD_L));
    if (neg) res = -res;
    if (x < 0.0lf) { res = -res; q = -q; }
    q &= 3;
    return res;
}
#undef PH_LIMB
// sin and cos of a double-double r, |r| <= pi/4, as double-doubles: Taylor polynomials, the
// r^3/6 term in double-doubles, the rest (below 2^-8 of the sum) in doubles.
dvec2 sin_kernel_d(dvec2 r) {
    dvec2 z = two_prod_d(r.x, r.x);
    dvec2 t3 = dd_mul_d(dd_mul_d(z, dvec2(r.x, 0.0lf)), dvec2(-0.16666666666666666lf, -9.25185853854297e-18lf));
    double w = z.x;
    // (sin r - r + r^3/6) / r^5 to r^12 (the rest is below 2^-63 of sin r)
    double sp = FMA(FMA(FMA(FMA(FMA(FMA(2.8114572543455206e-15lf, w, -7.647163731819816e-13lf), w,
        1.6059043836821613e-10lf), w, -2.505210838544172e-08lf), w, 2.7557319223985893e-06lf), w,
        -0.0001984126984126984lf), w, 0.008333333333333333lf);
    precise double t5 = r.x * w * w * sp;
    dvec2 a = fast_two_sum_d(r.x, t3.x);
    precise double lo = a.y + ((t3.y + t5) + r.y * (1.0lf - 0.5lf * w));
    return fast_two_sum_d(a.x, lo);
}
dvec2 cos_kernel_d(dvec2 r) {
    dvec2 z = two_prod_d(r.x, r.x);
    precise double hz = 0.5lf * z.x;
    precise double w = 1.0lf - hz;
    // (cos r - 1 + r^2/2) / r^4 to r^14 (the rest is below 2^-66)
    double cp = FMA(FMA(FMA(FMA(FMA(FMA(FMA(-1.5619206968586225e-16lf, z.x, 4.779477332387385e-14lf), z.x,
        -1.1470745597729725e-11lf), z.x, 2.08767569878681e-09lf), z.x, -2.755731922398589e-07lf), z.x,
        2.48015873015873e-05lf), z.x, -0.001388888888888889lf), z.x, 0.041666666666666664lf);
    precise double t = (((1.0lf - w) - hz) - 0.5lf * z.y) + (z.x * z.x * cp - r.x * r.y);
    return fast_two_sum_d(w, t);
}
#define TRIG_REDUCE_D(x, ax, r, q) \
    int q = 0; \
    dvec2 r = dvec2(x, 0.0lf); \
    if (ax > 0.7853981633974483lf) r = rem_pio2_d(x, q)
// (below 1e-8, sin x and tan x round to x, cos x to 1)
double np_sin(double x) {
    double ax = abs(x);
    if (!(ax >= 1.0e-8lf)) return x;  // NaN, +-0, tiny
    if (isinf_d(x)) return NAN64;
    TRIG_REDUCE_D(x, ax, r, q);
    dvec2 v = ((q & 1) == 0) ? sin_kernel_d(r) : cos_kernel_d(r);
    return (q >= 2) ? -v.x : v.x;
}
double np_cos(double x) {
    double ax = abs(x);
    if (!(ax >= 1.0e-8lf)) return isnan_d(x) ? x : 1.0lf;
    if (isinf_d(x)) return NAN64;
    TRIG_REDUCE_D(x, ax, r, q);
    dvec2 v = ((q & 1) == 0) ? cos_kernel_d(r) : sin_kernel_d(r);
    return (q == 1 || q == 2) ? -v.x : v.x;
}
double np_tan(double x) {
    double ax = abs(x);
    if (!(ax >= 1.0e-8lf)) return x;
    if (isinf_d(x)) return NAN64;
    TRIG_REDUCE_D(x, ax, r, q);
    dvec2 s = sin_kernel_d(r), c = cos_kernel_d(r);
    return ((q & 1) == 0) ? dd_div_d(s, c).x : -dd_div_d(c, s).x;
}

// atan(j/8), j = 0..8, as double-doubles: the bits of hi and lo (low word first). (NVIDIA's driver
// 580 gives arcsin/arccos/arctan 0.95 ulp, as if lo read as 0, with a const double array and with
// these words alike: the cause is not found; tests/shaders/test_math64.py holds them to 1 ulp.)
const uint ATAN_J8[36] = uint[](0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u,
    0x9aac2f6eu, 0x3fbfd5bau, 0x86760c17u, 0xbc4cd376u, 0xf92c80ddu, 0x3fcf5b75u, 0x3cf7afbdu, 0x3c68ab6eu,
    0x41e4def1u, 0x3fd6f619u, 0xe6f6e918u, 0xbc7c63aau, 0x0561bb4fu, 0x3fddac67u, 0x222f65e2u, 0x3c7a2b7fu,
    0xabdefeb4u, 0x3fe1e00bu, 0x287a668fu, 0xbc5928dfu, 0xa3269ee1u, 0x3fe4978fu, 0x87f2a458u, 0x3c72419au,
    0xc5784634u, 0x3fe700a7u, 0x25aadef6u, 0xbc78c34du, 0x54442d18u, 0x3fe921fbu, 0x33145c07u, 0x3c81a626u);
double atan_j8_d(int j, int part) { return packDouble2x32(uvec2(ATAN_J8[4 * j + 2 * part], ATAN_J8[4 * j + 2 * part + 1])); }
// atan(a) as a double-double for a double-double a >= 0, a.x < 2^996: for a > 1, pi/2 -
// atan(1/a); then atan(j/8) + atan(t), t = (a - j/8) / (1 + a j/8) with |t| <= 1/16.
dvec2 atan_dd_d(dvec2 a) {
    bool inv = a.x > 1.0lf;
    dvec2 b = inv ? dd_div_d(dvec2(1.0lf, 0.0lf), a) : a;
    int j = int(b.x * 8.0lf + 0.5lf);
    dvec2 t = b;
    if (j > 0) {
        double c = double(j) * 0.125lf;
        dvec2 num = dd_add_d(b, dvec2(-c, 0.0lf));
        dvec2 den = dd_add_d(dvec2(1.0lf, 0.0lf), dd_mul_d(b, dvec2(c, 0.0lf)));
        t = dd_div_d(num, den);
    }
    double z = t.x * t.x;
    // (atan t - t) / t^3 to t^14 (the rest is below 2^-68)
    double ap = FMA(FMA(FMA(FMA(FMA(FMA(FMA(0.058823529411764705lf, z, -0.06666666666666667lf), z,
        0.07692307692307693lf), z, -0.09090909090909091lf), z, 0.1111111111111111lf), z,
        -0.14285714285714285lf), z, 0.2lf), z, -0.3333333333333333lf);
    precise double tail = t.x * z * ap + t.y * (1.0lf - z);
    dvec2 s = two_sum_d(atan_j8_d(j, 0), t.x);
    precise double lo = s.y + (atan_j8_d(j, 1) + tail);
    dvec2 res = fast_two_sum_d(s.x, lo);
    if (inv) res = dd_add_d(dvec2(PIO2_DD_H, PIO2_DD_L), -res);
    return res;
}
double np_atan(double x) {
    double ax = abs(x);
    if (!(ax >= 1.0e-8lf)) return x;  // NaN, +-0, tiny
    if (ax > 1.0e17lf) return copysign_d(PIO2_DD_H, x);  // pi/2 - 1/x rounds to pi/2
    return copysign_d(atan_dd_d(dvec2(ax, 0.0lf)).x, x);
}
double np_atan2(double y, double x) {
    if (isnan_d(x) || isnan_d(y)) return NAN64;
    double ax = abs(x), ay = abs(y);
    double r;
    if (isinf_d(ax) && isinf_d(ay)) {
        r = (x > 0.0lf) ? 0.7853981633974483lf : 2.356194490192345lf;
    } else if (iszero_d(ay) || isinf_d(ax)) {
        r = ((doubleBitsToUint64(x) & SIGN64) != 0ul) ? PI_DD_H : 0.0lf;  // x = -0 counts as negative
    } else if (iszero_d(ax) || isinf_d(ay)) {
        r = PIO2_DD_H;
    } else {
        // atan(ay / ax) with both scaled to keep the double-double steps in range
        int ex, ey;
        significand_d(ax, ex);
        significand_d(ay, ey);
        int sc = -max(ex, ey) - 52;
        double sx = scale2_d(ax, sc), sy = scale2_d(ay, sc);
        dvec2 t;
        if (sy > sx * 1.0e18lf) t = dvec2(PIO2_DD_H, PIO2_DD_L);
        else if (sx > sy * 1.0e18lf) t = dvec2(np_divide(ay, ax), 0.0lf);  // unscaled: it may be subnormal
        else t = atan_dd_d(dd_div_d(dvec2(sy, 0.0lf), dvec2(sx, 0.0lf)));
        if (x < 0.0lf) {  // pi - atan
            dvec2 s = two_sum_d(PI_DD_H, -t.x);
            precise double lo = s.y + (PI_DD_L - t.y);
            r = s.x + lo;
        } else {
            r = t.x;
        }
    }
    return copysign_d(r, y);
}
// asin x = atan(x / sqrt((1 - x)(1 + x))), acos x = 2 atan(sqrt((1 - x) / (1 + x))), the
// arguments as double-doubles (exact where the cancellation is).
double np_asin(double x) {
    double ax = abs(x);
    if (!(ax >= 1.0e-8lf)) return x;  // NaN, +-0, tiny: x + x^3/6 rounds to x
    if (ax >= 1.0lf) return (ax == 1.0lf) ? copysign_d(PIO2_DD_H, x) : NAN64;
    dvec2 w = dd_mul_d(two_sum_d(1.0lf, -ax), two_sum_d(1.0lf, ax));
    dvec2 t = dd_div_d(dvec2(ax, 0.0lf), dd_sqrt_d(w));
    return copysign_d(atan_dd_d(t).x, x);
}
double np_acos(double x) {
    if (isnan_d(x)) return x;
    double ax = abs(x);
    if (ax >= 1.0lf) return (ax > 1.0lf) ? NAN64 : ((x > 0.0lf) ? 0.0lf : PI_DD_H);
    dvec2 q = dd_div_d(two_sum_d(1.0lf, -x), two_sum_d(1.0lf, x));
    return 2.0lf * atan_dd_d(dd_sqrt_d(q)).x;
}

// ---- hyperbolic ------------------------------------------------------------------------------
// e^|x| / 2 for |x| >= 22 (e^-|x| is below the rounding), up to overflow.
double half_exp_d(double ax) {
    if (ax > 710.5lf) return INF64;
    int n;
    dvec2 p = exp_dd_d(ax, n);
    return scale2_d(p.x, n - 1);
}
double np_sinh(double x) {
    double ax = abs(x);
    if (!(ax >= 1.0e-8lf)) return x;  // NaN, +-0, tiny: x + x^3/6 rounds to x
    if (ax >= 22.0lf) return copysign_d(half_exp_d(ax), x);
    dvec2 e = expm1_dd_d(ax);  // sinh = (E + E / (E + 1)) / 2
    dvec2 s = dd_add_d(e, dd_div_d(e, dd_add_d(e, dvec2(1.0lf, 0.0lf))));
    return copysign_d(0.5lf * s.x, x);
}
double np_cosh(double x) {
    double ax = abs(x);
    if (isnan_d(x)) return x;
    if (ax >= 22.0lf) return half_exp_d(ax);
    int n;
    dvec2 p = exp_dd_d(ax, n);  // (P + 1/P) / 2
    p *= pow2i_d(n);
    dvec2 s = dd_add_d(p, dd_div_d(dvec2(1.0lf, 0.0lf), p));
    return 0.5lf * s.x;
}
double np_tanh(double x) {
    double ax = abs(x);
    if (!(ax >= 1.0e-8lf)) return x;  // NaN, +-0, tiny
    if (ax > 19.5lf) return copysign_d(1.0lf, x);  // 1 - 2 e^-2|x| rounds to 1
    if (ax <= 18.0lf) {
        dvec2 e = expm1_dd_d(2.0lf * ax);  // E / (E + 2)
        return copysign_d(dd_div_d(e, dd_add_d(e, dvec2(2.0lf, 0.0lf))).x, x);
    }
    int n;
    dvec2 p = exp_dd_d(2.0lf * ax, n);  // 1 - 2 / (e^2|x| + 1)
    p *= pow2i_d(n);
    dvec2 t = dd_div_d(dvec2(2.0lf, 0.0lf), dd_add_d(p, dvec2(1.0lf, 0.0lf)));
    precise double r = (1.0lf - t.x) - t.y;
    return copysign_d(r, x);
}
double np_asinh(double x) {
    double ax = abs(x);
    if (!(ax >= 1.0e-8lf)) return x;  // NaN, +-0, tiny
    if (isinf_d(x)) return x;
    dvec2 l;
    if (ax > 268435456.0lf) {  // log(2|x|): the 1 under the root is below the rounding
        l = dd_add_d(log_dd_d(ax), dvec2(LN2_DD_H, LN2_DD_L));
    } else {                   // log(|x| + sqrt(x^2 + 1))
        dvec2 w = dd_add_d(dvec2(1.0lf, 0.0lf), two_prod_d(ax, ax));
        l = log_dd2_d(dd_add_d(dvec2(ax, 0.0lf), dd_sqrt_d(w)));
    }
    return copysign_d(l.x, x);
}
double np_acosh(double x) {
    if (!(x >= 1.0lf)) return NAN64;  // NaN too
    if (isinf_d(x)) return x;
    if (x > 268435456.0lf) return dd_add_d(log_dd_d(x), dvec2(LN2_DD_H, LN2_DD_L)).x;
    // log(x + sqrt(x^2 - 1)) with x^2 - 1 as a double-double
    dvec2 w = dd_add_d(two_prod_d(x, x), dvec2(-1.0lf, 0.0lf));
    if (w.x == 0.0lf) return 0.0lf;
    return log_dd2_d(dd_add_d(dvec2(x, 0.0lf), dd_sqrt_d(w))).x;
}
double np_atanh(double x) {
    double ax = abs(x);
    if (!(ax >= 1.0e-8lf)) return x;  // NaN, +-0, tiny: x + x^3/3 rounds to x
    if (ax >= 1.0lf) return (ax == 1.0lf) ? copysign_d(INF64, x) : NAN64;
    // log((1 + |x|) / (1 - |x|)) / 2
    dvec2 q = dd_div_d(two_sum_d(1.0lf, ax), two_sum_d(1.0lf, -ax));
    return copysign_d(0.5lf * log_dd2_d(q).x, x);
}

// ---- the rest --------------------------------------------------------------------------------
double np_hypot(double x, double y) {
    double ax = abs(x), ay = abs(y);
    if (isinf_d(ax) || isinf_d(ay)) return INF64;  // even with a NaN (C99)
    if (isnan_d(x) || isnan_d(y)) return NAN64;
    double a = max(ax, ay), b = min(ax, ay);
    if (iszero_d(b)) return a;
    int e;
    significand_d(a, e);
    int sc = -e - 52;  // a scaled into [1, 2)
    double sa = scale2_d(a, sc), sb = scale2_d(b, sc);
    dvec2 s = dd_add_d(two_prod_d(sa, sa), two_prod_d(sb, sb));
    return scale2_d(dd_sqrt_d(s).x, -sc);
}
// numpy's logaddexp: log(e^x + e^y) = max + log1p(e^-(|x - y|)).
double np_logaddexp(double x, double y) {
    if (x == y) {  // infinities of one sign too
        if (isinf_d(x)) return x;
        dvec2 s = two_sum_d(x, LN2_DD_H);
        precise double r = s.x + (s.y + LN2_DD_L);
        return r;
    }
    if (isnan_d(x) || isnan_d(y)) return NAN64;
    double m = max(x, y);
    dvec2 d = two_sum_d(min(x, y), -m);  // <= 0
    // m + log1p(0) as numpy's: -0.0 becomes +0.0 (in bits: compilers may drop a + 0.0)
    if (isinf_d(m) || d.x < -746.0lf) return uint64BitsToDouble(doubleBitsToUint64(m) & (iszero_d(m) ? ABS64 : ~0ul));
    // e^d as 2^n (1 + u); log1p of it
    int n;
    dvec2 t = mul_log2e_d(d.x);
    precise double tl = t.y + d.y * LOG2E_DD_H;
    dvec2 u = exp2_split_d(t.x, tl, n);
    dvec2 ed = fast_two_sum_d(1.0lf, u.x);
    ed.y += u.y;
    dvec2 l = log1p_dd_d(dvec2(scale2_d(ed.x, n), scale2_d(ed.y, n)));
    dvec2 s = two_sum_d(m, l.x);
    precise double r = s.x + (s.y + l.y);
    return r;
}
double np_nextafter(double x, double y) {
    if (isnan_d(x) || isnan_d(y)) return NAN64;
    if (x == y) return y;
    if (iszero_d(x)) return uint64BitsToDouble((doubleBitsToUint64(y) & SIGN64) | 1ul);
    uint64_t u = doubleBitsToUint64(x);
    return uint64BitsToDouble(((x < y) == (x > 0.0lf)) ? u + 1ul : u - 1ul);
}
double np_trunc(double x) { return round_d(x, 0); }
double np_floor(double x) { return round_d(x, 1); }
double np_ceil(double x) { return round_d(x, 2); }
double np_rint(double x) { return round_d(x, 3); }
bool np_isnan(double x) { return isnan_d(x); }
bool np_isinf(double x) { return isinf_d(x); }
bool np_isfinite(double x) { return (doubleBitsToUint64(x) & ABS64) < EXP64; }
bool np_signbit(double x) { return (doubleBitsToUint64(x) & SIGN64) != 0ul; }
double np_copysign(double x, double y) { return copysign_d(x, y); }
double np_sign(double x) { return isnan_d(x) ? x : (iszero_d(x) ? abs(x) : copysign_d(1.0lf, x)); }

// One step of fmod's long division: r = (r 2^k) mod my for k = min(d, 48) more bits.
void fmod_step_d(inout uint64_t r, inout int d, uint64_t my, double inv) {
    if (d > 0) {
        int k = min(d, 48);
        d -= k;
        // r 2^k - g my for the double guess g is in [-my, 2 my): the low 64 bits hold it
        uint64_t g = uint64_t(double(r) * pow2i_d(k) * inv);
        int64_t rr = int64_t((r << k) - g * my), mys = int64_t(my);
        if (rr < 0l) rr += mys;
        if (rr < 0l) rr += mys;
        if (rr >= mys) rr -= mys;
        if (rr >= mys) rr -= mys;
        r = uint64_t(rr);
    }
}
// fmod(x, y) exactly (C's, and numpy's for floats): the significands' remainder by long
// division, 48 bits a step, each step's quotient guessed in double and corrected.
double np_fmod(double x, double y) {
    double ax = abs(x), ay = abs(y);
    if (isnan_d(x) || isnan_d(y) || isinf_d(x) || iszero_d(y)) return NAN64;
    if (ax < ay || isinf_d(y)) return x;
    int ex, ey;
    uint64_t mx = significand_d(ax, ex), my = significand_d(ay, ey);
    int d = ex - ey;  // <= 2097
    uint64_t r = (mx >= my) ? mx - my : mx;  // mx < 2 my
    double inv = div_refine_d(1.0lf, double(my));
    REPEAT32(fmod_step_d(r, d, my, inv);) REPEAT8(fmod_step_d(r, d, my, inv);) REPEAT4(fmod_step_d(r, d, my, inv);)
    return copysign_d(scale2_d(double(r), ey), x);
}
// numpy's divmod for floats (npy_divmod), as math.glsl's float32 versions.
double np_remainder(double a, double b) {
    double mod = np_fmod(a, b);
    if (iszero_d(b)) return mod;
    if (!iszero_d(mod)) {
        if ((b < 0.0lf) != (mod < 0.0lf)) {
            precise double m2 = mod + b;
            mod = m2;
        }
    } else {
        mod = copysign_d(0.0lf, b);
    }
    return mod;
}
// One operand infinite, the other finite (or 0): floor(a / b), an infinity or a zero of a / b's
// sign, as the array API standard specifies (see math.glsl's float32 version).
double np_floor_divide(double a, double b) {
    double sgn = uint64BitsToDouble(((doubleBitsToUint64(a) ^ doubleBitsToUint64(b)) & SIGN64) | 0x3ff0000000000000ul);
    if (iszero_d(b)) return (iszero_d(a) || isnan_d(a)) ? NAN64 : copysign_d(INF64, sgn);
    if (isinf_d(a) != isinf_d(b) && !isnan_d(a) && !isnan_d(b)) return copysign_d(isinf_d(a) ? INF64 : 0.0lf, sgn);
    double mod = np_fmod(a, b);
    precise double am = a - mod;
    double div = np_divide(am, b);
    if (!iszero_d(mod) && ((b < 0.0lf) != (mod < 0.0lf))) {
        precise double d1 = div - 1.0lf;
        div = d1;
    }
    if (iszero_d(div)) return copysign_d(0.0lf, sgn);
    double fl = round_d(div, 1);
    precise double frac = div - fl;
    if (frac > 0.5lf) {
        precise double f1 = fl + 1.0lf;
        fl = f1;
    }
    return fl;
}

// ---- int64 and uint64 ------------------------------------------------------------------------
int64_t np_max(int64_t a, int64_t b) { return (a > b) ? a : b; }
int64_t np_min(int64_t a, int64_t b) { return (a < b) ? a : b; }
uint64_t np_max(uint64_t a, uint64_t b) { return (a > b) ? a : b; }
uint64_t np_min(uint64_t a, uint64_t b) { return (a < b) ? a : b; }
DEFINE_INTEGER_ROUNDING(int64_t)
DEFINE_INTEGER_ROUNDING(uint64_t)
int64_t np_sign(int64_t x) { return (x > 0l) ? 1l : ((x < 0l) ? -1l : 0l); }
uint64_t np_sign(uint64_t x) { return (x > 0ul) ? 1ul : 0ul; }

uint64_t uabs64(int64_t a) { return (a < 0l) ? 0ul - uint64_t(a) : uint64_t(a); }
// numpy's integer floor division and remainder: by zero gives 0; INT64_MIN // -1 wraps.
int64_t np_floor_divide(int64_t a, int64_t b) {
    if (b == 0l) return 0l;
    uint64_t ua = uabs64(a), ub = uabs64(b);
    uint64_t uq = ua / ub, ur = ua % ub;
    bool neg = (a < 0l) != (b < 0l);
    int64_t q = neg ? -int64_t(uq) : int64_t(uq);
    return (neg && ur != 0ul) ? q - 1l : q;
}
int64_t np_remainder(int64_t a, int64_t b) {
    if (b == 0l) return 0l;
    uint64_t ur = uabs64(a) % uabs64(b);
    int64_t r = (a < 0l) ? -int64_t(ur) : int64_t(ur);
    return (r != 0l && ((r < 0l) != (b < 0l))) ? r + b : r;
}
uint64_t np_floor_divide(uint64_t a, uint64_t b) { return (b == 0ul) ? 0ul : a / b; }
uint64_t np_remainder(uint64_t a, uint64_t b) { return (b == 0ul) ? 0ul : a % b; }
int64_t np_fmod(int64_t a, int64_t b) {  // C's %: the dividend's sign
    if (b == 0l) return 0l;
    uint64_t ur = uabs64(a) % uabs64(b);
    return (a < 0l) ? -int64_t(ur) : int64_t(ur);
}
uint64_t np_fmod(uint64_t a, uint64_t b) { return (b == 0ul) ? 0ul : a % b; }

// Integer powers by squaring (wrapping, as numpy's); negative exponents: 1 / x^|n| truncated.
uint64_t np_pow(uint64_t x, uint64_t n) {
    uint64_t r = 1ul;
    REPEAT32(r *= ((n & 1ul) != 0ul) ? x : 1ul; x *= x; n >>= 1;)
    REPEAT32(r *= ((n & 1ul) != 0ul) ? x : 1ul; x *= x; n >>= 1;)
    return r;
}
int64_t np_pow(int64_t x, int64_t n) {
    if (n < 0l) return (x == 1l) ? 1l : ((x == -1l) ? (((n & 1l) != 0l) ? -1l : 1l) : 0l);
    return int64_t(np_pow(uint64_t(x), uint64_t(n)));
}
// numpy's shifts: counts of 64 or more (or negative) shift everything out.
int64_t np_left_shift(int64_t x, int64_t n) { return (uint64_t(n) < 64ul) ? (x << n) : 0l; }
uint64_t np_left_shift(uint64_t x, uint64_t n) { return (n < 64ul) ? (x << n) : 0ul; }
int64_t np_right_shift(int64_t x, int64_t n) { return (uint64_t(n) < 64ul) ? (x >> n) : ((x < 0l) ? -1l : 0l); }
uint64_t np_right_shift(uint64_t x, uint64_t n) { return (n < 64ul) ? (x >> n) : 0ul; }

// numpy's integer reciprocal (x86): 1 / x truncated, 1 / 0 -> INT64_MIN (int64), 0 (uint64).
int64_t np_reciprocal(int64_t x) { return (x == 1l || x == -1l) ? x : ((x == 0l) ? int64_t(SIGN64) : 0l); }
uint64_t np_reciprocal(uint64_t x) { return (x == 1ul) ? 1ul : 0ul; }

// Scalars of 64-bit types arrive as two push-constant words (low, high): FROM_BITS(T, w), w a uvec2.
double from_bits_double(uvec2 w) { return packDouble2x32(w); }
uint64_t from_bits_uint64_t(uvec2 w) { return (uint64_t(w.y) << 32) | uint64_t(w.x); }
int64_t from_bits_int64_t(uvec2 w) { return int64_t(from_bits_uint64_t(w)); }
#endif
