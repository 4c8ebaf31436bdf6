// IEEE special values and numpy-like math: GLSL leaves log/sqrt of negatives and NaN
// propagation through min/max undefined, numpy does not. Past np_max/np_min and FROM_BITS, the
// float32 library of the elementwise functions (shaders/primitives/elementwise.comp).
#ifndef VK_LIB_MATH
#define VK_LIB_MATH
#define NAN uintBitsToFloat(0x7fc00000u)
#define INF uintBitsToFloat(0x7f800000u)

// np.maximum / np.minimum: a NaN in either operand wins.
// Ties (+0.0 and -0.0) give the second operand, as numpy's loops do; GLSL's max/min leave the
// sign of a zero tie to the device (the H200 gave min(-0.0, 0.0) = -0.0; numpy gives 0.0).
float np_max(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : (a > b ? a : b)); }
float np_min(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : (a < b ? a : b)); }
int np_max(int a, int b) { return max(a, b); }
int np_min(int a, int b) { return min(a, b); }
uint np_max(uint a, uint b) { return max(a, b); }
uint np_min(uint a, uint b) { return min(a, b); }

// Scalars arrive as raw 32-bit push-constant words; FROM_BITS(T, w) picks the reading for type T.
float from_bits_float(uint w) { return uintBitsToFloat(w); }
int from_bits_int(uint w) { return int(w); }
uint from_bits_uint(uint w) { return w; }
#define FROM_BITS(T, w) PASTE(from_bits_, T)(w)

// ---------------------------------------------------------------------------------------------
// The float32 library. Vulkan holds only +, -, * (and the conversions) to correct rounding: exp,
// log, sin, division, sqrt and even fma (which may be a separate multiply and add) are allowed
// ulps of error, and subnormals may be flushed. So every function below is built from correctly
// rounded operations only: range reductions on the bits with integer arithmetic (subnormals
// included), double-float arithmetic (a value as hi + lo) where a float loses too much, and
// built-in division/sqrt only as first guesses that a residual then corrects. `precise` keeps the
// compiler from fusing or reassociating the error-free transformations. The measured accuracy
// (ulps against float64, over the whole float32 range) is in tests/primitives/test_elementwise_accuracy.py.

// The built-ins used only as first guesses, and fma. VK_TEST_INEXACT_BUILTINS (tests) makes them
// worse than Vulkan allows (quotients and roots 4-8 ulps off, up or down by the operands' last
// bits; fma a separate multiply and add) to show on lavapipe, whose built-ins are exact, that no
// result depends on them.
#ifdef VK_TEST_INEXACT_BUILTINS
float inexact_(float v, float by) {
    precise float r = v * (((floatBitsToUint(by) & 1u) != 0u) ? 1.00000048 : 0.99999952);
    return r;
}
float div_guess_(float a, float b) { precise float q = a / b; return inexact_(q, a + b); }
float sqrt_guess_(float x) { precise float s = sqrt(x); return inexact_(s, x); }
float fma_(float a, float b, float c) { precise float p = a * b; precise float r = p + c; return r; }
#define DIV_GUESS(a, b) div_guess_(a, b)
#define SQRT_GUESS(x) sqrt_guess_(x)
#define FMA(a, b, c) fma_(a, b, c)
#else
#define DIV_GUESS(a, b) ((a) / (b))
#define SQRT_GUESS(x) sqrt(x)
#define FMA(a, b, c) fma(a, b, c)
#endif

// Straight-line repetition: loops here would need GL_EXT_control_flow_attributes' [[unroll]] in
// every shader that includes this file, and loops left rolled count against the loop budget.
#define REPEAT2(s) s s
#define REPEAT4(s) REPEAT2(s) REPEAT2(s)
#define REPEAT8(s) REPEAT4(s) REPEAT4(s)
#define REPEAT16(s) REPEAT8(s) REPEAT8(s)
#define REPEAT32(s) REPEAT16(s) REPEAT16(s)

// 2^n for n in [-126, 127], exactly.
float pow2i(int n) { return uintBitsToFloat(uint(n + 127) << 23); }
// x * 2^n for n in [-252, 254], rounded once (the first product is exact).
float scale2(float x, int n) {
    int h = n / 2;
    precise float y = x * pow2i(h);
    precise float r = y * pow2i(n - h);
    return r;
}
float copysign_(float x, float s) {
    return uintBitsToFloat((floatBitsToUint(x) & 0x7fffffffu) | (floatBitsToUint(s) & 0x80000000u));
}

// |x| = m * 2^e with the integer significand m in [2^23, 2^24), for finite nonzero x, read off the
// bits (so subnormals work where the device flushes them in arithmetic).
uint significand(float x, out int e) {
    uint u = floatBitsToUint(x) & 0x7fffffffu;
    int be = int(u >> 23);
    if (be == 0) {
        int p = findMSB(u);
        e = p - 172;
        return u << (23 - p);
    }
    e = be - 150;
    return (u & 0x7fffffu) | 0x800000u;
}

// Double-float arithmetic: a value as a vec2 (hi, lo) with |lo| <= ulp(hi) / 2.
vec2 fast_two_sum(float a, float b) {  // |a| >= |b| (or a == 0)
    precise float s = a + b;
    precise float e = b - (s - a);
    return vec2(s, e);
}
vec2 two_sum(float a, float b) {
    precise float s = a + b;
    precise float bb = s - a;
    precise float e = (a - (s - bb)) + (b - bb);
    return vec2(s, e);
}
// Dekker's product: a * b = p + e exactly (|a|, |b| < 2^115, no underflow), without relying on fma.
vec2 split12(float a) {
    precise float c = 4097.0 * a;
    precise float h = c - (c - a);
    precise float l = a - h;
    return vec2(h, l);
}
vec2 two_prod(float a, float b) {
    precise float p = a * b;
    vec2 as = split12(a), bs = split12(b);
    precise float e = ((as.x * bs.x - p) + as.x * bs.y + as.y * bs.x) + as.y * bs.y;
    return vec2(p, e);
}
vec2 df_add(vec2 a, vec2 b) {
    vec2 s = two_sum(a.x, b.x);
    precise float t = s.y + (a.y + b.y);
    return fast_two_sum(s.x, t);
}
vec2 df_mul(vec2 a, vec2 b) {
    vec2 p = two_prod(a.x, b.x);
    precise float t = p.y + (a.x * b.y + a.y * b.x);
    return fast_two_sum(p.x, t);
}
// a / b: the built-in quotient corrected by its exact residual.
vec2 df_div(vec2 a, vec2 b) {
    float q = DIV_GUESS(a.x, b.x);
    vec2 p = two_prod(q, b.x);
    precise float r = (((a.x - p.x) - p.y) + a.y) - q * b.y;
    precise float c = DIV_GUESS(r, b.x);
    return fast_two_sum(q, c);
}
vec2 df_sqrt(vec2 a) {  // a.x > 0
    float s = SQRT_GUESS(a.x);
    vec2 p = two_prod(s, s);
    precise float r = ((a.x - p.x) - p.y) + a.y;
    precise float c = DIV_GUESS(r, 2.0 * s);
    return fast_two_sum(s, c);
}

uint uabs(int a) { return (a < 0) ? 0u - uint(a) : uint(a); }

// a / b rounded correctly (as numpy's), subnormal results included: the significands' quotient
// in integers, from the built-in quotient as a first guess.
float np_divide(float a, float b) {
    if (isnan(a) || isnan(b)) return NAN;
    float sgn = copysign_(1.0, uintBitsToFloat(floatBitsToUint(a) ^ floatBitsToUint(b)));
    if (isinf(a)) return isinf(b) ? NAN : copysign_(INF, sgn);
    if (isinf(b) || a == 0.0) return (b == 0.0) ? NAN : copysign_(0.0, sgn);
    if (b == 0.0) return copysign_(INF, sgn);
    int ea, eb;
    uint ma = significand(a, ea), mb = significand(b, eb);
    int k = (ma >= mb) ? 23 : 24;
    int e = ea - eb - k;  // |a / b| = (q + r / mb) 2^e, q = floor(ma 2^k / mb) in [2^23, 2^24)
    if (e > 104) return copysign_(INF, sgn);
    uint q = uint(DIV_GUESS(float(ma) * float(1u << k), float(mb)));
    int r = int((ma << k) - q * mb);  // small, so the low 32 bits hold it
    // The guess may be a few units off: one correction step by the remainder's quotient, which
    // leaves q at most one unit off (the step's own error is ~1e-6 units), then that unit.
    int dq = int(floor(DIV_GUESS(float(r), float(mb))));
    q += uint(dq);
    r -= dq * int(mb);
    if (r < 0) { q -= 1u; r += int(mb); } else if (r >= int(mb)) { q += 1u; r -= int(mb); }
    // round to nearest even, dropping sh bits more where the result is subnormal
    int sh = max(-149 - e, 0);
    if (sh > 25) return copysign_(0.0, sgn);
    bool up;
    if (sh == 0) {
        up = 2 * r > int(mb) || (2 * r == int(mb) && (q & 1u) != 0u);
    } else {
        uint low = q & ((1u << sh) - 1u), half_ = 1u << (sh - 1);
        up = low > half_ || (low == half_ && (r != 0 || ((q >> sh) & 1u) != 0u));
    }
    uint qr = (q >> sh) + (up ? 1u : 0u);
    return copysign_(scale2(float(qr), e + sh), sgn);
}

// sqrt rounded correctly: the built-in's guess Y checked and moved with integer arithmetic.
float np_sqrt(float x) {
    if (!(x > 0.0) || isinf(x)) return (x < 0.0) ? NAN : x;  // NaN, +-0, +inf as they are
    int e;
    uint m = significand(x, e);
    // sqrt(m 2^e) = sqrt(N) 2^((e - s) / 2) with N = m 2^s, e - s even, sqrt(N) in [2^23, 2^24)
    int s = ((e & 1) != 0) ? 23 : 24;
    float nf = float(m) * 16777216.0 * ((s == 24) ? 1.0 : 0.5);  // N exactly
    uint y = uint(SQRT_GUESS(nf) + 0.5);
    // D = N - y^2 (it is small: the low 32 bits hold it); y is right when y^2 - y < N <= y^2 + y
    uint nlo = m << s;
    int d = int(nlo - y * y);
    // The guess may be a few units off: one Newton step (y + D / 2y, rounded) leaves it at most
    // one unit off, then that unit.
    y = uint(int(y) + int(round(DIV_GUESS(float(d), 2.0 * float(y)))));
    d = int(nlo - y * y);
    if (d > int(y)) { d -= int(2u * y + 1u); y += 1u; } else if (d <= -int(y)) { y -= 1u; d += int(2u * y + 1u); }
    return scale2(float(y), (e - s) / 2);
}

// ---- exp -------------------------------------------------------------------------------------
const float LN2_H = 0.693145751953125;          // 15 bits: k * LN2_H is exact for |k| < 2^9
const float LN2_L = 1.428606765330187e-06;
const float LN2_DF_H = 0.6931471824645996;       // ln 2 as a double-float
const float LN2_DF_L = -1.9046542121259336e-09;
const float LOG2E_H = 1.4426950216293335;
const float LOG2E_L = 1.925963033500011e-08;

// (e^v - 1 - v - v^2/2) / v^3, minimax (float32 coefficients) on [-ln2/2, ln2/2].
float expm1_poly(float v) {
    return FMA(FMA(FMA(FMA(FMA(2.526249591e-05, v, 2.000453387e-04), v, 1.388831181e-03), v,
                   8.333143778e-03), v, 4.166666791e-02), v, 1.666666716e-01);
}
// x - k ln2 as a double-float for k = round(x / ln2), |x| <= 150 (Cody and Waite: ln2 split so that
// k ln2_H and the first difference are exact); k in fk.
vec2 reduce_ln2(float x, out float fk) {
    fk = roundEven(x * LOG2E_H);
    precise float rh = x - fk * LN2_H;
    precise float rl = fk * LN2_L;
    return two_sum(rh, -rl);
}
// 2^(rh + rl) - 1 as a double-float (relative error < 2^-27), |rh| <= 1/2, |rl| <= 2^-24:
// with v = (rh + rl) ln2, e^v - 1 = v + v^2/2 + v^3 P(v), the first two terms exactly.
vec2 exp2m1_small(float rh, float rl) {
    vec2 a = two_prod(rh, LN2_DF_H);
    precise float vl = a.y + (rh * LN2_DF_L + rl * LN2_DF_H);
    float v = a.x;
    vec2 h = two_prod(v, 0.5 * v);
    float p = expm1_poly(v);
    vec2 s = fast_two_sum(v, h.x);
    precise float tail = s.y + ((h.y + vl * (1.0 + v)) + v * v * v * p);
    return fast_two_sum(s.x, tail);
}
// 2^(th + tl) = 2^n (1 + u), u a double-float with |u| < 0.42, for |th| <= 160.
vec2 exp2_split(float th, float tl, out int n) {
    float fn = roundEven(th);
    n = int(fn);
    precise float rh0 = th - fn;  // exact
    vec2 r = two_sum(rh0, tl);
    return exp2m1_small(r.x, r.y);
}
// x * log2(e) as a double-float, |x| < 2^100.
vec2 mul_log2e(float x) {
    vec2 p = two_prod(x, LOG2E_H);
    precise float l = p.y + x * LOG2E_L;
    return vec2(p.x, l);
}
// 1 + u rounded, u a double-float.
float one_plus(vec2 u) {
    vec2 s = two_sum(1.0, u.x);
    precise float r = s.x + (s.y + u.y);
    return r;
}
// e^x = 2^k e^r, r = x - k ln2 as a double-float from Cody and Waite's split of ln 2, then
// e^r = (1 + r) + (e^r - 1 - r) with 1 + r exact as a double-float and the rest a polynomial (the
// minimax of exp2m1_small): one rounding at the end plus ~0.15 ulp, in a third of exp_df's work.
float np_exp(float x) {
    if (isnan(x)) return x;
    if (x > 88.8) return INF;
    if (x < -104.0) return 0.0;
    float fk;
    vec2 r = reduce_ln2(x, fk);
    float v = r.x;
    float p = expm1_poly(v);
    precise float q = (v * v) * (0.5 + v * p);  // e^v - 1 - v
    vec2 s = fast_two_sum(1.0, v);
    precise float tail = s.y + (r.y * (1.0 + v) + q);
    precise float m = s.x + tail;
    return scale2(m, int(fk));
}
float np_exp2(float x) {
    if (isnan(x)) return x;
    if (x >= 128.0) return INF;
    if (x < -151.0) return 0.0;
    int n;
    vec2 u = exp2_split(x, 0.0, n);
    return scale2(one_plus(u), n);
}
// e^x as 2^n (p.x + p.y), for -104 <= x <= 89.5.
vec2 exp_df(float x, out int n) {
    vec2 t = mul_log2e(x);
    vec2 u = exp2_split(t.x, t.y, n);
    vec2 s = two_sum(1.0, u.x);
    precise float l = s.y + u.y;
    return fast_two_sum(s.x, l);
}

// e^x - 1 as a double-float, -104 <= x <= 16.5 (where 2^n - 1 is exact for the 2^n of e^x).
vec2 expm1_df(float x) {
    int n;
    vec2 t = mul_log2e(x);
    vec2 u = exp2_split(t.x, t.y, n);
    if (n == 0) return u;
    if (n < -24) {  // -1 + 2^n (1 + u): 2^n - 1 is not a float
        precise float tail = pow2i(n) * (1.0 + u.x);
        return fast_two_sum(-1.0, tail);
    }
    // (2^n - 1) + 2^n u, 2^n - 1 exact
    float p = pow2i(n);
    precise float a = p - 1.0;
    vec2 s = two_sum(a, p * u.x);
    precise float l = s.y + p * u.y;
    return fast_two_sum(s.x, l);
}
float np_expm1(float x) {
    float ax = abs(x);
    if (!(ax >= 2.98e-8)) return x;  // NaN, +-0, subnormals, tiny: x + x^2/2 rounds to x
    if (x > 88.8) return INF;
    if (x < -18.0) return -1.0;      // e^x below half an ulp of 1
    if (x <= 16.5) return expm1_df(x).x;
    int n;
    vec2 p = exp_df(x, n);            // 2^n p - 1
    if (n > 100) return scale2(p.x, n);  // the -1 is far below the rounding
    float s = pow2i(n);
    vec2 r = two_sum(p.x * s, -1.0);
    precise float res = r.x + (r.y + p.y * s);
    return res;
}
// ---- log -------------------------------------------------------------------------------------
const float LOG10E_H = 0.4342944920063019;
const float LOG10E_L = -1.0103049952192578e-08;
const float LOG10_2_H = 0.301025390625;          // 11 bits
const float LOG10_2_L = 4.605039066518657e-06;

// x = 2^k m with m in [sqrt(1/2), sqrt(2)), for finite x > 0 (subnormals included).
float log_reduce(float x, out int k) {
    int e;
    uint mi = significand(x, e);
    bool upper = (mi & 0x7fffffu) >= 0x3504f3u;  // m >= sqrt(2): halve it
    k = e + 23 + (upper ? 1 : 0);
    return uintBitsToFloat((mi & 0x7fffffu) | (upper ? 0x3f000000u : 0x3f800000u));
}
// log(m) as a double-float (relative error < 2^-34), m in [sqrt(1/2), sqrt(2)).
vec2 log_m_df(float m) {
    precise float f = m - 1.0;  // exact
    // log(1 + f) = 2 atanh(s), s = f / (2 + f) as a double-float
    vec2 d = fast_two_sum(2.0, f);
    float sh = DIV_GUESS(f, d.x);
    vec2 p = two_prod(sh, d.x);
    precise float sl = DIV_GUESS(((f - p.x) - p.y) - sh * d.y, d.x);
    // 2 atanh(s) = 2s + (2/3) s^3 + s^5 (2/5 + 2/7 s^2 + ... + 2/13 s^8), |s| < 0.172
    vec2 s2 = two_prod(sh, sh);
    precise float s2l = s2.y + 2.0 * sh * sl;
    vec2 s3 = df_mul(vec2(s2.x, s2l), vec2(sh, sl));
    vec2 t3 = df_mul(s3, vec2(0.6666666865348816, -1.9868215517249155e-08));
    float z = s2.x;
    precise float t5 = s3.x * z * FMA(FMA(FMA(FMA(0.15384615, z, 0.18181818), z, 0.22222222), z, 0.28571429), z, 0.4);
    vec2 a = fast_two_sum(2.0 * sh, t3.x);
    precise float lo = a.y + ((2.0 * sl + t3.y) + t5);
    return fast_two_sum(a.x, lo);
}
// log(x) as a double-float, finite x > 0.
vec2 log_df(float x) {
    int k;
    vec2 l = log_m_df(log_reduce(x, k));
    float fk = float(k);
    vec2 s = two_sum(fk * LN2_H, l.x);
    precise float lo = s.y + (l.y + fk * LN2_L);
    return fast_two_sum(s.x, lo);
}
// log(a) for a double-float a > 0 (finite).
vec2 log_df2(vec2 a) {
    vec2 l = log_df(a.x);
    // log(a.x + a.y) = log(a.x) + t - t^2/2, t = a.y / a.x as a double-float: where a.x = 1
    // (log1p of tiny x) t is all of it
    vec2 t = vec2(DIV_GUESS(a.y, a.x), 0.0);
    if (abs(a.x) < 1.0e30) t = df_div(vec2(a.y, 0.0), vec2(a.x, 0.0));
    vec2 s = two_sum(l.x, t.x);
    precise float lo = s.y + (l.y + (t.y - 0.5 * t.x * t.x));
    return fast_two_sum(s.x, lo);
}
// numpy's specials for the logarithms: NaN, negative -> NaN, +-0 -> -inf, +inf -> +inf.
#define LOG_SPECIALS(x) \
    if (!(x > 0.0) || isinf(x)) return (x == 0.0) ? -INF : ((x > 0.0 || isnan(x)) ? x : NAN)
// log(x) as log_df, but past 2s (s as a double-float) in plain float: those terms are below 1% of
// 2s, so their roundings are ~2^-30 of the result (every float32 checked: 0.5x ulp), in half the work.
float np_log(float x) {
    LOG_SPECIALS(x);
    int k;
    precise float f = log_reduce(x, k) - 1.0;  // exact
    vec2 d = fast_two_sum(2.0, f);
    float sh = DIV_GUESS(f, d.x);
    vec2 p = two_prod(sh, d.x);
    precise float sl = DIV_GUESS(((f - p.x) - p.y) - sh * d.y, d.x);
    float s1 = sh + sl;  // s to a float's accuracy (sh alone is the built-in's guess)
    float z = s1 * s1;
    // 2 atanh(s) - 2s = s^3 (2/3 + 2/5 s^2 + ... + 2/13 s^10), |s| < 0.172
    float t = s1 * z * FMA(FMA(FMA(FMA(FMA(0.15384615, z, 0.18181818), z, 0.22222222), z, 0.28571429), z, 0.4), z,
                           0.6666666865348816);
    float fk = float(k);
    vec2 a = two_sum(fk * LN2_H, 2.0 * sh);
    precise float lo = a.y + ((2.0 * sl + t) + fk * LN2_L);
    precise float r = a.x + lo;
    return r;
}
// log2(x) as a double-float, finite x > 0.
vec2 log2_df(float x) {
    int k;
    vec2 l = df_mul(log_m_df(log_reduce(x, k)), vec2(LOG2E_H, LOG2E_L));
    vec2 s = two_sum(float(k), l.x);
    precise float lo = s.y + l.y;
    return fast_two_sum(s.x, lo);
}
float np_log2(float x) {
    LOG_SPECIALS(x);
    return log2_df(x).x;
}
float np_log10(float x) {
    LOG_SPECIALS(x);
    int k;
    vec2 l = df_mul(log_m_df(log_reduce(x, k)), vec2(LOG10E_H, LOG10E_L));
    float fk = float(k);
    vec2 s = two_sum(fk * LOG10_2_H, l.x);
    precise float r = s.x + (s.y + (l.y + fk * LOG10_2_L));
    return r;
}
// log(1 + e) for a double-float e > -1 (finite): 1 + e as 1 + e.x exactly and the rest.
vec2 log1p_df(vec2 e) {
    vec2 s = two_sum(1.0, e.x);
    vec2 rest = two_sum(s.y, e.y);
    vec2 l = log_df(s.x);
    // log(s.x + rest) = log(s.x) + t - t^2/2, t = rest / s.x: all of it where s.x = 1
    vec2 t = rest;  // (past 1e30 it is below the rounding)
    if (s.x != 1.0) t = (s.x < 1.0e30) ? df_div(rest, vec2(s.x, 0.0)) : vec2(0.0);
    vec2 r = two_sum(l.x, t.x);
    precise float lo = r.y + (l.y + (t.y - 0.5 * t.x * t.x));
    return fast_two_sum(r.x, lo);
}
float np_log1p(float x) {
    if (!(abs(x) >= 2.98e-8)) return x;  // NaN, +-0, tiny: x - x^2/2 rounds to x
    if (!(x > -1.0) || isinf(x)) return (x == -1.0) ? -INF : (x > 0.0 ? x : NAN);
    return log1p_df(vec2(x, 0.0)).x;
}

// ---- pow -------------------------------------------------------------------------------------
// C99's (and numpy's) special cases, then 2^(y log2|x|) with the exponent as a double-float.
float np_pow(float x, float y) {
    if (y == 0.0 || x == 1.0) return 1.0;
    if (isnan(x) || isnan(y)) return NAN;
    float ax = abs(x), ay = abs(y);
    bool yint = trunc(y) == y;                                       // inf counts as an integer
    bool yodd = yint && ay < 16777216.0 && fract(0.5 * y) != 0.0;    // 2^24 and up are even
    if (isinf(y)) return (ax == 1.0) ? 1.0 : (((ax > 1.0) == (y > 0.0)) ? INF : 0.0);
    if (x == 0.0 || isinf(x)) {
        float r = ((y < 0.0) == (x == 0.0)) ? INF : 0.0;
        return yodd ? copysign_(r, x) : r;
    }
    if (x < 0.0 && !yint) return NAN;
    float sgn = (x < 0.0 && yodd) ? -1.0 : 1.0;
    if (ax == 1.0) return sgn;  // x = -1 (y may be past two_prod's range)
    vec2 l = log2_df(ax);
    float th = y * l.x;
    if (!(abs(th) < 300.0)) return copysign_((th > 0.0) ? INF : 0.0, sgn);
    vec2 t = two_prod(y, l.x);
    precise float tl = t.y + y * l.y;
    if (t.x > 128.0 || (t.x == 128.0 && tl >= 0.0)) return copysign_(INF, sgn);
    if (t.x < -152.0) return copysign_(0.0, sgn);
    int n;
    vec2 u = exp2_split(t.x, tl, n);
    return copysign_(scale2(one_plus(u), n), sgn);
}

// ---- trigonometric ---------------------------------------------------------------------------
const float PIO2_H = 1.5707963705062866;
const float PIO2_L = -4.371138828673793e-08;
const float PI_H = 3.1415927410125732;
const float PI_L = -8.742277657347586e-08;
// The bits of 2/pi, 32 at a time, after a zero word (the bits before the binary point).
const uint TWO_OVER_PI[9] = uint[](0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u,
                                   0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u);
uint two_over_pi_bits(int j, int s) {  // 32 bits of 2/pi from word j, bit s (from the top)
    uint w = TWO_OVER_PI[j] << s;
    return (s == 0) ? w : (w | (TWO_OVER_PI[j + 1] >> (32 - s)));
}
// x = q pi/2 + r with |r| <= pi/4, r a double-float: exact for every float (Payne-Hanek, with
// integer arithmetic on the bits of 2/pi), finite x with |x| > pi/4.
vec2 rem_pio2(float x, out int q) {
    int e;
    uint m = significand(x, e);  // |x| = m 2^e
    // x 2/pi mod 4: the bits of 2/pi from bit e - 1 on (earlier ones give multiples of 4);
    // the 96 of them times m, the 2^0 bit of the product at bit 94
    int i0 = e - 1 + 31;
    int j = i0 >> 5, s = i0 & 31;
    uint w2 = two_over_pi_bits(j, s), w1 = two_over_pi_bits(j + 1, s), w0 = two_over_pi_bits(j + 2, s);
    uint h0, l0, h1, l1, h2, l2, c1, c2;
    umulExtended(m, w0, h0, l0);
    umulExtended(m, w1, h1, l1);
    umulExtended(m, w2, h2, l2);
    uint p1 = uaddCarry(h0, l1, c1);
    uint p2 = uaddCarry(h1, l2, c2) + c1;
    // round to the nearest quadrant: the fraction becomes signed, in [-1/2, 1/2)
    p2 += 0x20000000u;
    q = int(p2 >> 30);
    int fh = int(p2 & 0x3fffffffu) - 0x20000000;
    uint x2 = uint(fh), x1 = p1, x0 = l0;
    bool neg = fh < 0;
    if (neg) {  // two's complement of (x2, x1, x0)
        x0 = ~x0 + 1u;
        x1 = ~x1 + ((x0 == 0u) ? 1u : 0u);
        x2 = ~x2 + ((x0 == 0u && x1 == 0u) ? 1u : 0u);
    }
    // the top 64 bits of the 94-bit magnitude (the fraction is never below 2^-40 for floats)
    int shift;
    uint top, next;
    if (x2 != 0u) {
        int lz = 31 - findMSB(x2);
        top = (lz == 0) ? x2 : ((x2 << lz) | (x1 >> (32 - lz)));
        next = (lz == 0) ? x1 : ((x1 << lz) | (x0 >> (32 - lz)));
        shift = 64 - lz;
    } else {
        int lz = 31 - findMSB(x1);
        top = (lz == 0) ? x1 : ((x1 << lz) | (x0 >> (32 - lz)));
        next = (lz == 0) ? x0 : (x0 << lz);
        shift = 32 - lz;
    }
    // the fraction is (top + next 2^-32) 2^(shift - 94): as a double-float
    float fh_ = float(top & 0xffffff00u);
    precise float fl_ = float(top & 0xffu) + float(next) * 2.3283064365386963e-10;
    vec2 f = fast_two_sum(fh_, fl_);
    float sc = pow2i(shift - 94);
    f *= sc;
    // r = f pi/2
    vec2 r = two_prod(f.x, PIO2_H);
    precise float rl = r.y + (f.x * PIO2_L + f.y * PIO2_H);
    vec2 res = fast_two_sum(r.x, rl);
    if (neg) res = -res;
    if (x < 0.0) { res = -res; q = -q; }
    q &= 3;
    return res;
}
// sin and cos of a double-float r, |r| <= pi/4, as double-floats.
vec2 sin_kernel(vec2 r) {
    float z = r.x * r.x;
    // (sin r - r) / r^3, minimax in r^2 on [0, (pi/4)^2] for sin's relative error (< 2^-32)
    float sp = FMA(FMA(FMA(2.837542752e-06, z, -1.985351264e-04), z, 8.333380334e-03), z, -1.666666716e-01);
    precise float t = r.x * z * sp + r.y * (1.0 - 0.5 * z);
    return fast_two_sum(r.x, t);
}
vec2 cos_kernel(vec2 r) {
    vec2 z = two_prod(r.x, r.x);
    precise float hz = 0.5 * z.x;
    precise float w = 1.0 - hz;
    // (cos r - 1 + r^2/2) / r^4, minimax in r^2 on [0, (pi/4)^2] for cos's error (< 2^-37)
    float cp = FMA(FMA(FMA(-2.897764659e-07, z.x, 2.482298623e-05), z.x, -1.388898236e-03), z.x,
                   4.166666791e-02);
    precise float t = (((1.0 - w) - hz) - 0.5 * z.y) + (z.x * z.x * cp - r.x * r.y);
    return fast_two_sum(w, t);
}
#define TRIG_REDUCE(x, ax, r, q) \
    int q = 0; \
    vec2 r = vec2(x, 0.0); \
    if (ax > 0.78539816) r = rem_pio2(x, q)
float np_sin(float x) {
    float ax = abs(x);
    if (!(ax >= 2.44e-4)) return x;  // NaN, +-0, tiny: sin x rounds to x
    if (isinf(x)) return NAN;
    TRIG_REDUCE(x, ax, r, q);
    vec2 v = ((q & 1) == 0) ? sin_kernel(r) : cos_kernel(r);
    return (q >= 2) ? -v.x : v.x;
}
float np_cos(float x) {
    float ax = abs(x);
    if (!(ax >= 2.44e-4)) return isnan(x) ? x : 1.0;
    if (isinf(x)) return NAN;
    TRIG_REDUCE(x, ax, r, q);
    vec2 v = ((q & 1) == 0) ? cos_kernel(r) : sin_kernel(r);
    return (q == 1 || q == 2) ? -v.x : v.x;
}
float np_tan(float x) {
    float ax = abs(x);
    if (!(ax >= 2.44e-4)) return x;
    if (isinf(x)) return NAN;
    TRIG_REDUCE(x, ax, r, q);
    vec2 s = sin_kernel(r), c = cos_kernel(r);
    return ((q & 1) == 0) ? df_div(s, c).x : -df_div(c, s).x;
}

// atan(a) as a double-float for a double-float a >= 0 (musl's reduction to |t| <= 7/16).
vec2 atan_df(vec2 a) {
    float x = a.x;
    vec2 t, base;
    if (x < 0.4375) {
        t = a;
        base = vec2(0.0);
    } else if (x < 0.6875) {  // atan(1/2) + atan((2a - 1) / (2 + a))
        vec2 num = two_sum(2.0 * x - 1.0, 2.0 * a.y);
        t = df_div(num, df_add(vec2(2.0, 0.0), a));
        base = vec2(0.46364760398864746, 5.01215868808913e-09);
    } else if (x < 1.1875) {  // atan(1) + atan((a - 1) / (a + 1))
        vec2 num = two_sum(x - 1.0, a.y);
        t = df_div(num, df_add(vec2(1.0, 0.0), a));
        base = vec2(0.7853981852531433, -2.1855694143368964e-08);
    } else if (x < 2.4375) {  // atan(3/2) + atan((a - 3/2) / (1 + 3a/2))
        vec2 num = two_sum(x - 1.5, a.y);
        vec2 den = df_add(vec2(1.0, 0.0), df_mul(vec2(1.5, 0.0), a));
        t = df_div(num, den);
        base = vec2(0.9827937483787537, -2.5131424052915463e-08);
    } else {                  // pi/2 - atan(1/a)
        t = df_div(vec2(-1.0, 0.0), a);
        base = vec2(PIO2_H, PIO2_L);
    }
    float z = t.x * t.x;
    // (atan t - t) / t^3, minimax in t^2 on [0, (7/16)^2] for atan's relative error (< 2^-33)
    float ap = FMA(FMA(FMA(FMA(FMA(4.385280237e-02, z, -8.296116441e-02), z, 1.101127416e-01), z,
                           -1.427921951e-01), z, 1.999980360e-01), z, -3.333333135e-01);
    precise float tail = t.x * z * ap + t.y * (1.0 - z);
    vec2 s = two_sum(base.x, t.x);
    precise float lo = s.y + (base.y + tail);
    return fast_two_sum(s.x, lo);
}
float np_atan(float x) {
    float ax = abs(x);
    if (!(ax >= 2.44e-4)) return x;  // NaN, +-0, tiny
    if (ax > 6.7e7) return copysign_(PIO2_H, x);
    return copysign_(atan_df(vec2(ax, 0.0)).x, x);
}
float np_atan2(float y, float x) {
    if (isnan(x) || isnan(y)) return NAN;
    float ax = abs(x), ay = abs(y);
    float r;
    if (isinf(ax) && isinf(ay)) {
        r = (x > 0.0) ? 0.7853981852531433 : 2.356194496154785;
    } else if (ay == 0.0 || isinf(ax)) {
        r = (floatBitsToUint(x) >> 31 != 0u) ? PI_H : 0.0;  // x = -0 counts as negative
    } else if (ax == 0.0 || isinf(ay)) {
        r = PIO2_H;
    } else {
        // atan(ay / ax) with both scaled to keep the double-float steps in range
        int ex, ey;
        significand(ax, ex);
        significand(ay, ey);
        int sc = -max(ex, ey) - 23;
        float sx = scale2(ax, sc), sy = scale2(ay, sc);
        vec2 t;
        if (sy > sx * 6.7e7) t = vec2(PIO2_H, PIO2_L);
        else if (sx > sy * 1.0e20) t = vec2(np_divide(ay, ax), 0.0);  // unscaled: it may be subnormal
        else t = atan_df(df_div(vec2(sy, 0.0), vec2(sx, 0.0)));
        if (x < 0.0) {  // pi - atan
            vec2 s = two_sum(PI_H, -t.x);
            precise float lo = s.y + (PI_L - t.y);
            r = s.x + lo;
        } else {
            r = t.x;
        }
    }
    return copysign_(r, y);
}

// asin(a) for a double-float a in [0, 1/2] (poly in a^2), as a double-float.
vec2 asin_small(vec2 a) {
    float z = a.x * a.x;
    // (asin a - a) / a^3, minimax in a^2 on [0, 1/4] for asin's relative error (< 2^-35)
    float ap = FMA(FMA(FMA(FMA(FMA(FMA(3.465601057e-02, z, 7.506321650e-03), z, 2.460361831e-02), z,
                               3.011316992e-02), z, 4.465986416e-02), z, 7.499949634e-02), z,
                   1.666666716e-01);
    precise float tail = a.x * z * ap + a.y * (1.0 + 0.5 * z);
    return fast_two_sum(a.x, tail);
}
// asin(sqrt((1 - ax) / 2)) for ax in [1/2, 1]: the half-angle reduction.
vec2 asin_half(float ax) {
    precise float w = (1.0 - ax) * 0.5;  // exact
    if (w == 0.0) return vec2(0.0);
    return asin_small(df_sqrt(vec2(w, 0.0)));
}
float np_asin(float x) {
    float ax = abs(x);
    if (!(ax >= 2.44e-4)) return x;  // NaN, +-0, tiny
    if (ax > 1.0) return NAN;
    if (ax < 0.5) return copysign_(asin_small(vec2(ax, 0.0)).x, x);
    vec2 h = asin_half(ax);  // asin = pi/2 - 2 h
    vec2 s = two_sum(PIO2_H, -2.0 * h.x);
    precise float r = s.x + (s.y + (PIO2_L - 2.0 * h.y));
    return copysign_(r, x);
}
float np_acos(float x) {
    float ax = abs(x);
    if (isnan(x)) return x;
    if (ax > 1.0) return NAN;
    if (ax < 0.5) {  // pi/2 - asin(x)
        vec2 a = asin_small(vec2(x, 0.0));
        vec2 s = two_sum(PIO2_H, -a.x);
        precise float r = s.x + (s.y + (PIO2_L - a.y));
        return r;
    }
    vec2 h = asin_half(ax);
    if (x > 0.0) return 2.0 * h.x;  // 2 asin(sqrt((1 - x) / 2))
    vec2 s = two_sum(PI_H, -2.0 * h.x);    // pi - 2 asin(sqrt((1 + x) / 2))
    precise float r = s.x + (s.y + (PI_L - 2.0 * h.y));
    return r;
}

// ---- hyperbolic ------------------------------------------------------------------------------
// e^y - 1 as a double-float for 0 <= y <= 18 (relative error ~2^-28), as np_exp: r = y - k ln2
// as a double-float, e^r - 1 = v + v^2/2 + v^3 P(v) (v = r.x; v^2/2 exactly), then
// (2^k - 1) + 2^k (e^r - 1) with 2^k - 1 exact. For tanh, sinh and cosh; expm1 itself uses expm1_df.
vec2 expm1_pos_df(float y) {
    float fk;
    vec2 r = reduce_ln2(y, fk);
    float v = r.x;
    vec2 h = two_prod(v, 0.5 * v);
    float p = expm1_poly(v);
    precise float c = h.y + (v * v * v * p + r.y * (1.0 + v));  // all of e^r - 1 but v + h.x
    float pk = pow2i(int(fk));
    precise float a = pk - 1.0;  // exact (0 for k = 0)
    vec2 s1 = two_sum(a, pk * v);
    vec2 s2 = two_sum(s1.x, pk * h.x);
    precise float lo = (s1.y + s2.y) + pk * c;
    return fast_two_sum(s2.x, lo);
}
// e^|x| / 2 for |x| >= 12 (e^-|x| is below the rounding), up to overflow.
float half_exp(float ax) {
    if (ax > 89.5) return INF;
    int n;
    vec2 p = exp_df(ax, n);
    return scale2(p.x, n - 1);
}
float np_sinh(float x) {
    float ax = abs(x);
    if (!(ax >= 2.44e-4)) return x;  // NaN, +-0, tiny: x + x^3/6 rounds to x
    if (ax >= 12.0) return copysign_(half_exp(ax), x);
    vec2 e = expm1_pos_df(ax);  // sinh = (E + E / (E + 1)) / 2
    vec2 s = df_add(e, df_div(e, df_add(e, vec2(1.0, 0.0))));
    return copysign_(0.5 * s.x, x);
}
float np_cosh(float x) {
    float ax = abs(x);
    if (isnan(x)) return x;
    if (ax >= 12.0) return half_exp(ax);
    vec2 p = df_add(vec2(1.0, 0.0), expm1_pos_df(ax));  // P = e^|x| = 1 + E; (P + 1/P) / 2
    vec2 s = df_add(p, df_div(vec2(1.0, 0.0), p));
    return 0.5 * s.x;
}
float np_tanh(float x) {
    float ax = abs(x);
    if (!(ax >= 2.44e-4)) return x;  // NaN, +-0, tiny
    if (ax > 9.1) return copysign_(1.0, x);
    if (ax < 4.0) {
        vec2 e = expm1_pos_df(2.0 * ax);  // E / (E + 2)
        return copysign_(df_div(e, df_add(e, vec2(2.0, 0.0))).x, x);
    }
    // 1 - 2 / (e^2|x| + 1): the quotient is below 2^-10.5, so a float's accuracy does for it
    precise float r = 1.0 - DIV_GUESS(2.0, np_exp(2.0 * ax) + 1.0);
    return copysign_(r, x);
}
float np_asinh(float x) {
    float ax = abs(x);
    if (!(ax >= 2.44e-4)) return x;  // NaN, +-0, tiny
    if (isinf(x)) return x;
    vec2 l;
    if (ax > 4096.0) {  // log(2|x|): the 1 under the root is below the rounding
        l = df_add(log_df(ax), vec2(LN2_DF_H, LN2_DF_L));
    } else {            // log(|x| + sqrt(x^2 + 1))
        vec2 z = two_prod(ax, ax);
        vec2 w = df_add(vec2(1.0, 0.0), z);
        l = log_df2(df_add(vec2(ax, 0.0), df_sqrt(w)));
    }
    return copysign_(l.x, x);
}
float np_acosh(float x) {
    if (!(x >= 1.0)) return NAN;  // NaN too
    if (isinf(x)) return x;
    if (x > 4096.0) return df_add(log_df(x), vec2(LN2_DF_H, LN2_DF_L)).x;
    // log(x + sqrt(x^2 - 1)) with x^2 - 1 = (x - 1)(x + 1) exactly as a double-float
    vec2 z = two_prod(x, x);
    vec2 w = df_add(z, vec2(-1.0, 0.0));
    if (w.x == 0.0) return 0.0;
    return log_df2(df_add(vec2(x, 0.0), df_sqrt(w))).x;
}
float np_atanh(float x) {
    float ax = abs(x);
    if (!(ax >= 2.44e-4)) return x;  // NaN, +-0, tiny: x + x^3/3 rounds to x
    if (ax >= 1.0) return (ax == 1.0) ? copysign_(INF, x) : NAN;
    // log((1 + |x|) / (1 - |x|)) / 2
    vec2 q = df_div(two_sum(1.0, ax), two_sum(1.0, -ax));
    return copysign_(0.5 * log_df2(q).x, x);
}

// ---- the rest --------------------------------------------------------------------------------
float np_hypot(float x, float y) {
    float ax = abs(x), ay = abs(y);
    if (isinf(ax) || isinf(ay)) return INF;  // even with a NaN (C99)
    if (isnan(x) || isnan(y)) return NAN;
    float a = max(ax, ay), b = min(ax, ay);
    if (b == 0.0) return a;
    int e;
    significand(a, e);
    int sc = -e - 23;  // a scaled into [1, 2)
    float sa = scale2(a, sc), sb = scale2(b, sc);
    vec2 s = df_add(two_prod(sa, sa), two_prod(sb, sb));
    return scale2(df_sqrt(s).x, -sc);
}
// numpy's logaddexp: log(e^x + e^y) = max + log1p(e^-(|x - y|)).
float np_logaddexp(float x, float y) {
    if (x == y) {  // infinities of one sign too
        if (isinf(x)) return x;
        vec2 s = two_sum(x, LN2_DF_H);
        precise float r = s.x + (s.y + LN2_DF_L);
        return r;
    }
    if (isnan(x) || isnan(y)) return NAN;
    float m = max(x, y);
    vec2 d = two_sum(min(x, y), -m);  // <= 0
    // m + log1p(0) as numpy's: -0.0 becomes +0.0 (in bits: compilers may drop a + 0.0)
    if (isinf(m) || d.x < -104.0) return uintBitsToFloat(floatBitsToUint(m) & ((m == 0.0) ? 0x7fffffffu : ~0u));
    // e^d as 2^n (1 + u); log1p of it
    int n;
    vec2 t = mul_log2e(d.x);
    precise float tl = t.y + d.y * LOG2E_H;
    vec2 u = exp2_split(t.x, tl, n);
    vec2 ed = fast_two_sum(1.0, u.x);
    ed.y += u.y;
    vec2 l = log1p_df(vec2(scale2(ed.x, n), scale2(ed.y, n)));
    vec2 s = two_sum(m, l.x);
    precise float r = s.x + (s.y + l.y);
    return r;
}
float np_nextafter(float x, float y) {
    if (isnan(x) || isnan(y)) return NAN;
    if (x == y) return y;
    if (x == 0.0) return uintBitsToFloat((floatBitsToUint(y) & 0x80000000u) | 1u);
    uint u = floatBitsToUint(x);
    return uintBitsToFloat(((x < y) == (x > 0.0)) ? u + 1u : u - 1u);
}
// Rounding, classification and sign bits; integers (and bools, as uint) are their own floor.
float np_floor(float x) { return floor(x); }
float np_ceil(float x) { return ceil(x); }
float np_trunc(float x) { return trunc(x); }
float np_rint(float x) { return roundEven(x); }
bool np_isnan(float x) { return isnan(x); }
bool np_isinf(float x) { return isinf(x); }
bool np_isfinite(float x) { return !isnan(x) && !isinf(x); }
bool np_signbit(float x) { return floatBitsToUint(x) >= 0x80000000u; }
float np_copysign(float x, float y) { return copysign_(x, y); }
#define DEFINE_INTEGER_ROUNDING(T) \
    T np_floor(T x) { return x; } \
    T np_ceil(T x) { return x; } \
    T np_trunc(T x) { return x; } \
    T np_rint(T x) { return x; } \
    bool np_isnan(T x) { return false; } \
    bool np_isinf(T x) { return false; } \
    bool np_isfinite(T x) { return true; } \
    bool np_signbit(T x) { return x < T(0); }
DEFINE_INTEGER_ROUNDING(int)
DEFINE_INTEGER_ROUNDING(uint)
// (copysign, not a select between constants: compilers fold those into -0.0 for +0.0)
float np_sign(float x) { return isnan(x) ? x : ((x == 0.0) ? abs(x) : copysign_(1.0, x)); }
int np_sign(int x) { return (x > 0) ? 1 : ((x < 0) ? -1 : 0); }
uint np_sign(uint x) { return (x > 0u) ? 1u : 0u; }

// One step of fmod's long division: r = (r 2^k) mod my for k = min(d, 20) more bits.
void fmod_step(inout uint r, inout int d, uint my, float inv) {
    if (d > 0) {
        int k = min(d, 20);
        d -= k;
        // r 2^k - g my for the float guess g is in [-my, 2 my): the low 32 bits hold it
        uint g = uint(float(r) * float(1u << k) * inv);
        int rr = int((r << k) - g * my);
        if (rr < 0) rr += int(my);
        if (rr < 0) rr += int(my);
        if (rr >= int(my)) rr -= int(my);
        if (rr >= int(my)) rr -= int(my);
        r = uint(rr);
    }
}
// fmod(x, y) exactly (C's, and numpy's for floats): the significands' remainder by long
// division, 20 bits a step, each step's quotient guessed in float and corrected.
float np_fmod(float x, float y) {
    float ax = abs(x), ay = abs(y);
    if (isnan(x) || isnan(y) || isinf(x) || y == 0.0) return NAN;
    if (ax < ay || isinf(y)) return x;
    int ex, ey;
    uint mx = significand(ax, ex), my = significand(ay, ey);
    int d = ex - ey;
    uint r = (mx >= my) ? mx - my : mx;  // mx < 2 my
    float inv = DIV_GUESS(1.0, float(my));
    REPEAT16(fmod_step(r, d, my, inv);)  // 14 would do: d <= 276
    return copysign_(scale2(float(r), ey), x);
}
// numpy's divmod for floats (npy_divmod): the remainder has the divisor's sign, the quotient is
// (a - mod) / b snapped to an integer.
float np_remainder(float a, float b) {
    float mod = np_fmod(a, b);
    if (b == 0.0) return mod;
    if (mod != 0.0) {
        if ((b < 0.0) != (mod < 0.0)) {
            precise float m2 = mod + b;
            mod = m2;
        }
    } else {
        mod = copysign_(0.0, b);
    }
    return mod;
}
// One operand infinite, the other finite (or 0): floor(a / b), an infinity or a zero of a / b's
// sign, as the array API standard specifies (2024.12, floor_divide's special cases), where
// numpy's (a - fmod) / b gives NaN (inf // 2) or -1 (-1 // inf). Both infinite or a NaN: NaN below.
float np_floor_divide(float a, float b) {
    float sgn = uintBitsToFloat(floatBitsToUint(a) ^ floatBitsToUint(b));  // a / b's sign
    if (b == 0.0) return (a == 0.0 || isnan(a)) ? NAN : copysign_(INF, sgn);
    if (isinf(a) != isinf(b) && !isnan(a) && !isnan(b)) return copysign_(isinf(a) ? INF : 0.0, sgn);
    float mod = np_fmod(a, b);
    precise float am = a - mod;
    float div = np_divide(am, b);
    if (mod != 0.0 && ((b < 0.0) != (mod < 0.0))) {
        precise float d1 = div - 1.0;
        div = d1;
    }
    if (div == 0.0) return copysign_(0.0, sgn);
    float fl = floor(div);
    precise float frac = div - fl;
    if (frac > 0.5) fl += 1.0;
    return fl;
}
// numpy's integer floor division and remainder: by zero gives 0; INT_MIN // -1 wraps.
int np_floor_divide(int a, int b) {
    if (b == 0) return 0;
    uint ua = uabs(a), ub = uabs(b);
    uint uq = ua / ub, ur = ua % ub;
    bool neg = (a < 0) != (b < 0);
    int q = neg ? -int(uq) : int(uq);
    return (neg && ur != 0u) ? q - 1 : q;
}
int np_remainder(int a, int b) {
    if (b == 0) return 0;
    uint ur = uabs(a) % uabs(b);
    int r = (a < 0) ? -int(ur) : int(ur);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
uint np_floor_divide(uint a, uint b) { return (b == 0u) ? 0u : a / b; }
uint np_remainder(uint a, uint b) { return (b == 0u) ? 0u : a % b; }
int np_fmod(int a, int b) {  // C's %: the dividend's sign
    if (b == 0) return 0;
    uint ur = uabs(a) % uabs(b);
    return (a < 0) ? -int(ur) : int(ur);
}
uint np_fmod(uint a, uint b) { return (b == 0u) ? 0u : a % b; }

// Integer powers by squaring (wrapping, as numpy's; the same bits for int and uint); negative
// exponents: 1 / x^|n| truncated.
uint np_pow(uint x, uint n) {
    uint r = 1u;
    REPEAT32(r *= ((n & 1u) != 0u) ? x : 1u; x *= x; n >>= 1;)
    return r;
}
int np_pow(int x, int n) {
    if (n < 0) return (x == 1) ? 1 : ((x == -1) ? (((n & 1) != 0) ? -1 : 1) : 0);
    return int(np_pow(uint(x), uint(n)));
}
// numpy's shifts: counts of 32 or more (or negative) shift everything out.
int np_left_shift(int x, int n) { return (uint(n) < 32u) ? (x << n) : 0; }
uint np_left_shift(uint x, uint n) { return (n < 32u) ? (x << n) : 0u; }
int np_right_shift(int x, int n) { return (uint(n) < 32u) ? (x >> n) : ((x < 0) ? -1 : 0); }
uint np_right_shift(uint x, uint n) { return (n < 32u) ? (x >> n) : 0u; }

// numpy's integer reciprocal (x86): 1 / x truncated, 1 / 0 -> INT_MIN (int32), 0 (uint32).
float np_reciprocal(float x) { return np_divide(1.0, x); }
int np_reciprocal(int x) { return (x == 1 || x == -1) ? x : ((x == 0) ? int(0x80000000u) : 0); }
uint np_reciprocal(uint x) { return (x == 1u) ? 1u : 0u; }
#ifdef VK_MATH64  // the float64, int64 and uint64 versions
#include "math64.glsl"
#endif
#endif
