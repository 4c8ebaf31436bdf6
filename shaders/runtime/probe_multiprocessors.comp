#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_shader_sm_builtins : require
#include "lib/common.glsl"
// @variants
// The device's multiprocessor count as NVIDIA's driver reports it (gl_SMCountNV); run only where
// the device lists VK_NV_shader_sm_builtins, enabled when the device is opened (runtime/probe.py).
layout(std430, binding = 0) writeonly buffer Out { uint result[]; };

void main() {
    if (gl_LocalInvocationIndex == 0u) {
        result[0] = gl_SMCountNV;
    }
}
