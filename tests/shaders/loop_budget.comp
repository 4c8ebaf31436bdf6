#version 450
// @variants
// Three loops one invocation runs in turn (an outer one around an inner one, then a do-while),
// each counting its iterations, plus an [[unroll]] loop that lavapipe unrolls: what the loop
// budget tests count against lavapipe's limiter and against loop_guard's copy of it.
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer Out { uint counts[]; };
layout(push_constant) uniform Push { uint outer; uint inner; uint tail; } p;

void main() {
    uint a = 0u, b = 0u, c = 0u, u = 0u;
    for (uint i = 0u; i < p.outer; ++i) {
        a += 1u;
        for (uint j = 0u; j < p.inner; ++j) b += 1u;
    }
    uint k = 0u;
    if (p.tail > 0u) {
        do { c += 1u; k += 1u; } while (k < p.tail);
    }
    [[unroll]] for (uint q = 0u; q < 8u; ++q) u += 1u;
    uint base = 4u * gl_GlobalInvocationID.x;
    counts[base] = a; counts[base + 1u] = b; counts[base + 2u] = c; counts[base + 3u] = u;
}
