#version 450
#extension GL_GOOGLE_include_directive : require
#if HALF_IN
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#define IN_T float16_t
#else
#define IN_T float
#endif
#include "lib/common.glsl"
// @variants MODE_SPLITS|MODE_BIAS
// @variants MODE_BIAS HALF_IN=1
// The small reductions of the convolution backward pass.
//   MODE_SPLITS: out[i] = sum_{s < count} in[s * n + i] for i < n (the split partial sums of
//     conv_wgrad.comp), grid-stride.  Push: n, count, in offset, out offset.
//   MODE_BIAS: out[c] = sum_{b < batch, o < plane} in[(b * channels + c) * plane + o], one
//     workgroup per channel (grid x = channels; an overflow loops).  Push: batch, channels,
//     plane, in offset, out offset.
// HALF_IN: the input is float16 (summed in float32).
// Bindings: 0 in, 1 out.
layout(std430, binding = 0) readonly buffer In { IN_T in_[]; };
layout(std430, binding = 1) writeonly buffer Out { float out_[]; };

#if defined(MODE_SPLITS)
layout(push_constant) uniform Push { uint n; uint count; uint in_off; uint out_off; } pc;
void main() {
    GRID_STRIDE_LOOP(i, pc.n) {
        float s = 0.0;
        for (uint k = 0u; k < pc.count; ++k) s += in_[pc.in_off + k * pc.n + i];
        out_[pc.out_off + i] = s;
    }
}
#elif defined(MODE_BIAS)
#include "lib/workgroup.glsl"
layout(push_constant) uniform Push { uint batch; uint channels; uint plane; uint in_off; uint out_off; } pc;
void main() {
    for (uint c = gl_WorkGroupID.x; c < pc.channels; c += gl_NumWorkGroups.x) {
        float s = 0.0;
        for (uint b = 0u; b < pc.batch; ++b) {
            uint base = pc.in_off + (b * pc.channels + c) * pc.plane;
            for (uint o = gl_LocalInvocationIndex; o < pc.plane; o += WG_SIZE) s += in_[base + o];
        }
        s = wg_reduce_add(s);
        if (gl_LocalInvocationIndex == 0u) out_[pc.out_off + c] = s;
        barrier();
    }
}
#else
#error "define MODE_SPLITS or MODE_BIAS"
#endif
