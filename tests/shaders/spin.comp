#version 450
// @variants
// Spins until the host sets flag[0], then writes flag[1]: a submission that cannot finish on its
// own (lavapipe ends any loop after 65535 iterations, so tests record it many times over).
layout(local_size_x = 1) in;
layout(std430, binding = 0) coherent volatile buffer Flag { uint flag[]; };

void main() {
    // The atomic is a side effect, without which an empty loop may be compiled away.
    while (flag[0] == 0u) {
        atomicAdd(flag[2], 1u);
    }
    flag[1] = 7u;
}
