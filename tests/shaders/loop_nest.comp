#version 450
// @variants
// Three nested loops, then a fourth after them: what lavapipe's loop limiter leaves of each when
// an invocation passes its budget (the dead pass at each loop's exit runs the nested loops' ends
// too). Counts: innermost body runs, tail body runs.
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) buffer Out { uint counts[]; };
layout(push_constant) uniform Push { uint n1; uint n2; uint n3; uint n4; } p;

void main() {
    uint c = 0u, d = 0u;
    for (uint i = 0u; i < p.n1; ++i)
        for (uint j = 0u; j < p.n2; ++j)
            for (uint k = 0u; k < p.n3; ++k) c += 1u;
    for (uint t = 0u; t < p.n4; ++t) d += 1u;
    counts[2u * gl_GlobalInvocationID.x] = c;
    counts[2u * gl_GlobalInvocationID.x + 1u] = d;
}
