#version 450
// @variants
// A single invocation adding 1 to counter[0] `iterations` times: a submission whose length the
// test controls and whose result it can check exactly (lavapipe caps a loop at 65535 iterations).
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Counter { uint counter[]; };
layout(push_constant) uniform Push { uint iterations; } p;

void main() {
    for (uint i = 0u; i < p.iterations; ++i) {
        atomicAdd(counter[0], 1u);  // an atomic: the loop cannot be folded away
    }
}
