#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "ops/conv_common.glsl"
// @variants ?NO_UNROLL
// The input gradient of a convolution (one group, no input dilation, not flipped) from its
// columns: cols[n][c * KP + tap][o] = sum_j w[j][c][tap] * dy[n][j][o] (a batched GEMM before
// this), then
//   dx[n][c][i] = sum over taps k with (i + PL - k * KD) = o * ST, 0 <= o < SO, of cols[n][c * KP + k][o]
// per axis: a gather, each dx element summing its own taps (no atomics). The geometry is the
// forward convolution's (conv_common.glsl's specialization constants).
// Push: dx elements (NB * CIN * SI), cols offset, dx offset.
// Bindings: 0 cols, 1 dx.
layout(std430, binding = 0) restrict readonly buffer Cols { float cols_[]; };
layout(std430, binding = 1) restrict writeonly buffer Dx { float dx_[]; };
layout(push_constant) uniform Push { uint n; uint cols_off; uint dx_off; } p;

// The output index this input index i reads through tap k along one axis, or -1.
int source(int i, int k, int st, int kd, int pl, int so) {
    int v = i + pl - k * kd;
    if (v < 0) return -1;
    int o = v / st;
    return (o * st == v && o < so) ? o : -1;
}

// Without kernel dilation or cropping, along each axis only the taps k = (i + PL) mod ST + j * ST
// read i, from outputs falling by one per tap: (first tap, its output, how many are in range).
ivec3 axis_taps(int i, int st, int pl, int k, int so) {
    int v = i + pl;
    int o = v / st;
    int skip = max(0, o - (so - 1));      // outputs past the end
    int kf = v % st + skip * st;
    int count = kf < k ? min((k - kf + st - 1) / st, o - skip + 1) : 0;
    return ivec3(kf, o - skip, count);
}

void main() {
    const bool strided = KD0 == 1 && KD1 == 1 && KD2 == 1 && PL0 >= 0 && PL1 >= 0 && PL2 >= 0;
    GRID_STRIDE_LOOP(e, p.n) {
        int i2 = int(e % uint(SI2)), i1 = int((e / uint(SI2)) % uint(SI1)), i0 = int((e / uint(SI2 * SI1)) % uint(SI0));
        uint nc = e / uint(SI);                       // n * CIN + c
        uint base = p.cols_off + nc * uint(KP * SO); // cols of (n, c): KP rows of SO
        float s = 0.0;
        if (strided) {
            ivec3 a0 = axis_taps(i0, ST0, PL0, K0, SO0), a1 = axis_taps(i1, ST1, PL1, K1, SO1),
                  a2 = axis_taps(i2, ST2, PL2, K2, SO2);
            LOOP for (int j0 = 0; j0 < a0.z; ++j0) {
                LOOP for (int j1 = 0; j1 < a1.z; ++j1) {
                    int row = (a0.x + j0 * ST0) * K1 + a1.x + j1 * ST1;
                    int col = (a0.y - j0) * SO1 + a1.y - j1;
                    LOOP for (int j2 = 0; j2 < a2.z; ++j2)
                        s += cols_[base + uint((row * K2 + a2.x + j2 * ST2) * SO + col * SO2 + a2.y - j2)];
                }
            }
        } else {
            LOOP for (int k = 0; k < KP; ++k) {
                int k2 = k % K2, k1 = (k / K2) % K1, k0 = k / (K2 * K1);
                int o0 = source(i0, k0, ST0, KD0, PL0, SO0);
                int o1 = source(i1, k1, ST1, KD1, PL1, SO1);
                int o2 = source(i2, k2, ST2, KD2, PL2, SO2);
                if (o0 >= 0 && o1 >= 0 && o2 >= 0)
                    s += cols_[base + uint(k * SO + (o0 * SO1 + o1) * SO2 + o2)];
            }
        }
        dx_[p.dx_off + e] = s;
    }
}
