#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
#include "lib/math.glsl"
// @variants STEP|FINISH ?UPPER
// @variants STEP|FINISH ?UPPER F64 VK_WIDE VK_MATH64
// Batched Cholesky in the outer-product (right-looking LDL^T) form, ops/cholesky.py. W holds B
// matrices n x n (row-major, from w_off; only the lower triangle is read or written).
//   STEP (pivot j): W[i][k] -= W[i][j] * W[k][j] / W[j][j] for j < k <= i < n. A pivot that is not
//     > 0 (or is NaN) makes the whole trailing triangle NaN, so that the last pivot carries it.
//   FINISH: out = L (UPPER: L^T), L[i][k] = W[i][k] / sqrt(W[k][k]) for k < i, sqrt(W[k][k]) on the
//     diagonal, 0 elsewhere; every element NaN where the last pivot is not > 0 (not positive
//     definite: numpy raises LinAlgError, which would need a host sync).
// Items are flattened over the batch (batch-major), one per invocation of a grid-stride loop.
// F64: float64 matrices (with VK_WIDE VK_MATH64: lib/math64.glsl's np_sqrt and np_divide).
#ifdef F64
#define T double
#else
#define T float
#endif
layout(std430, binding = 0) buffer WBuf { T w[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { T o[]; };

layout(push_constant) uniform Push {
    uint w_off; uint n; uint j; uint items; uint o_off;
} p;

void main() {
    uint n = p.n;
    GRID_STRIDE_LOOP(e, p.items) {
#ifdef STEP
        uint t = n - p.j - 1u;                 // trailing size
        uint b = e / (t * t), r = e - b * t * t;
        uint i = p.j + 1u + r / t, k = p.j + 1u + r % t;
        if (k > i) continue;
        uint base = p.w_off + b * n * n;
        T d = w[base + p.j * n + p.j];
        T v;
        if (d > 0.0) {
            v = w[base + i * n + k] - w[base + i * n + p.j] * (w[base + k * n + p.j] / d);
        } else {
            v = NAN;
        }
        w[base + i * n + k] = v;
#else
        uint b = e / (n * n), r = e - b * n * n;
        uint i = r / n, k = r % n;
        uint base = p.w_off + b * n * n;
        T last = w[base + n * n - 1u];
        T v = 0.0;
        if (!(last > 0.0)) {
            v = NAN;
        } else if (k == i) {
            v = np_sqrt(w[base + i * n + i]);
        } else if (k < i) {
            v = np_divide(w[base + i * n + k], np_sqrt(w[base + k * n + k]));
        }
#ifdef UPPER
        o[p.o_off + b * n * n + k * n + i] = v;
#else
        o[p.o_off + b * n * n + i * n + k] = v;
#endif
#endif
    }
}
