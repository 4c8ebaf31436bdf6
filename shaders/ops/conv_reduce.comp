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
//     workgroup per channel (grid x = channels; an overflow loops) and chunk: grid y = batch
//     chunks (bper batches) x plane chunks (oper positions, ochunks of them); chunk y writes
//     out[y * channels + c] (one chunk: out[c]; several keep each invocation's loops within a
//     device's loop budget, their sums then added by MODE_SPLITS).  Push: batch, channels,
//     plane, in offset, out offset, bper, oper, ochunks.
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
layout(push_constant) uniform Push {
    uint batch; uint channels; uint plane; uint in_off; uint out_off; uint bper; uint oper; uint ochunks;
} pc;
void main() {
    const uint bc = gl_WorkGroupID.y / pc.ochunks, oc = gl_WorkGroupID.y - bc * pc.ochunks;
    const uint b0 = bc * pc.bper, b1 = min(pc.batch, b0 + pc.bper);
    const uint o0 = oc * pc.oper, o1 = min(pc.plane, o0 + pc.oper);
    for (uint c = gl_WorkGroupID.x; c < pc.channels; c += gl_NumWorkGroups.x) {
        float s = 0.0;
        for (uint b = b0; b < b1; ++b) {
            uint base = pc.in_off + (b * pc.channels + c) * pc.plane;
            for (uint o = o0 + gl_LocalInvocationIndex; o < o1; o += WG_SIZE) s += in_[base + o];
        }
        s = wg_reduce_add(s);
        if (gl_LocalInvocationIndex == 0u) out_[pc.out_off + gl_WorkGroupID.y * pc.channels + c] = s;
        barrier();
    }
}
#else
#error "define MODE_SPLITS or MODE_BIAS"
#endif
