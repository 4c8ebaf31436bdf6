// IEEE special values and numpy-like math: GLSL leaves log/sqrt of negatives and NaN
// propagation through min/max undefined, numpy does not.
#define NAN uintBitsToFloat(0x7fc00000u)
#define INF uintBitsToFloat(0x7f800000u)

float np_log(float x) {
    if (isnan(x)) return x;
    if (x < 0.0) return NAN;
    if (x == 0.0) return -INF;
    return log(x);
}
float np_sqrt(float x) { return (x < 0.0) ? NAN : sqrt(x); }
float np_exp(float x) { return isnan(x) ? x : exp(x); }

// np.maximum / np.minimum: a NaN in either operand wins.
float np_max(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : max(a, b)); }
float np_min(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : min(a, b)); }
int np_max(int a, int b) { return max(a, b); }
int np_min(int a, int b) { return min(a, b); }
uint np_max(uint a, uint b) { return max(a, b); }
uint np_min(uint a, uint b) { return min(a, b); }

// Scalars arrive as raw 32-bit push-constant words; FROM_BITS(T, w) picks the reading for type T.
float from_bits_float(uint w) { return uintBitsToFloat(w); }
int from_bits_int(uint w) { return int(w); }
uint from_bits_uint(uint w) { return w; }
#define FROM_BITS(T, w) PASTE(from_bits_, T)(w)
