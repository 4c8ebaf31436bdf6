#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "ops/conv_common.glsl"
// @variants ?HAS_BIAS ?NO_UNROLL
// Direct convolution, one output element per invocation (grid-stride): for depthwise and other
// convolutions with very few channels per group, where a GEMM tile would be mostly empty. Any
// geometry of conv_common.glsl (padding, strides, both dilations, flip, strided weights).
// Defines: HAS_BIAS.  Bindings: 0 x, 1 w, 2 b (a dummy without bias), 3 y.
// Push: x, w, b, y element offsets, then the output element count.
#ifndef HAS_BIAS
#define HAS_BIAS 0
#endif

layout(push_constant) uniform Push { int x_off; int w_off; int b_off; int y_off; uint total; } pc;
layout(std430, binding = 0) readonly buffer X { float x_[]; };
layout(std430, binding = 1) readonly buffer W { float w_[]; };
layout(std430, binding = 2) readonly buffer B { float b_[]; };
layout(std430, binding = 3) writeonly buffer Y { float y_[]; };

void main() {
    GRID_STRIDE_LOOP(i, pc.total) {
        int o = int(i % uint(SO));
        int t = int(i / uint(SO));
        int co = t % COUT;
        int n = t / COUT;
        int g = co / COG;
        int j = co - g * COG;
        ivec3 base = window_base(out_coords(o));
#if HAS_BIAS
        float acc = b_[pc.b_off + co];
#else
        float acc = 0.0;
#endif
        int xb = pc.x_off + (n * CIN + g * CIG) * SI;
        int wb = pc.w_off + g * W_G + j * W_J;
        LOOP for (int k0 = 0; k0 < K0; ++k0) {
            int q0 = dim_index(base.x + k0 * KD0, ID0, SI0);
            if (q0 < 0) continue;
            LOOP for (int k1 = 0; k1 < K1; ++k1) {
                int q1 = dim_index(base.y + k1 * KD1, ID1, SI1);
                if (q1 < 0) continue;
                LOOP for (int k2 = 0; k2 < K2; ++k2) {
                    int q2 = dim_index(base.z + k2 * KD2, ID2, SI2);
                    if (q2 < 0) continue;
                    int xo = xb + (q0 * SI1 + q1) * SI2 + q2;
                    int wo = wb + weight_tap((k0 * K1 + k1) * K2 + k2);
                    LOOP for (int c = 0; c < CIG; ++c) acc += x_[xo + c * SI] * w_[wo + c * W_C];
                }
            }
        }
        y_[pc.y_off + int(i)] = acc;
    }
}
