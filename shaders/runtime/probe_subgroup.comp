#version 450
#extension GL_GOOGLE_include_directive : require
#include "lib/common.glsl"
// @variants
// What the driver actually runs: gl_SubgroupSize and gl_NumSubgroups of this pipeline.
layout(std430, binding = 0) writeonly buffer Out { uint result[]; };

void main() {
    if (gl_LocalInvocationIndex == 0u) {
        result[0] = gl_SubgroupSize;
        result[1] = gl_NumSubgroups;
    }
}
