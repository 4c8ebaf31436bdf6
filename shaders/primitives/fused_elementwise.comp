#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "lib/math.glsl"
// @variants
// A chain of float32 elementwise operations in one pass over arrays of one length (the stream
// defers elementwise dispatches and vkbackend/runtime/fusion.py writes each chain here).
// The chain is in specialization constants, so the driver compiles each one as if written out:
// branches on them fold away and the register file becomes plain values. Each step can be any
// operation below, so each inlines all of them before they fold: the set is small (lavapipe's
// compile time grows with it and with the steps).
// Registers: 0..7 the bindings' elements (read where LOADS says; the one element of a binding
// UNIFORM marks, broadcast, which the chain never writes), 8..15 the scalars in push
// constants, 16 + k the result of step k. STEP<k>: code | a << 4 | b << 9, the registers of its
// operands; codes as fusion.py's OPS. STORE<b>: the register stored into binding b (0: none).
// Every result is `precise`: no multiply-add contracted across steps, so each step rounds as the
// unfused elementwise.comp does and the chain gives its results bit for bit.
// Push words: n, the eight bindings' element offsets, the eight scalars' bits.
layout(constant_id = 2) const uint NOPS = 0u;
layout(constant_id = 3) const bool VEC4 = false;  // n and every offset multiples of 4
layout(constant_id = 4) const uint LOADS = 0u;
layout(constant_id = 5) const uint STORE0 = 0u;
layout(constant_id = 6) const uint STORE1 = 0u;
layout(constant_id = 7) const uint STORE2 = 0u;
layout(constant_id = 8) const uint STORE3 = 0u;
layout(constant_id = 9) const uint STORE4 = 0u;
layout(constant_id = 10) const uint STORE5 = 0u;
layout(constant_id = 11) const uint STORE6 = 0u;
layout(constant_id = 12) const uint STORE7 = 0u;
layout(constant_id = 13) const uint STEP0 = 0u;
layout(constant_id = 14) const uint STEP1 = 0u;
layout(constant_id = 15) const uint STEP2 = 0u;
layout(constant_id = 16) const uint STEP3 = 0u;
layout(constant_id = 17) const uint STEP4 = 0u;
layout(constant_id = 18) const uint STEP5 = 0u;
layout(constant_id = 19) const uint STEP6 = 0u;
layout(constant_id = 20) const uint STEP7 = 0u;
layout(constant_id = 21) const uint UNIFORM = 0u;  // bit b: binding b is one element, read by every thread

layout(push_constant) uniform Push { uint n; uint off[8]; uint scalar[8]; } p;

#define BINDING(k) \
    layout(std430, binding = k) buffer B##k { float b##k[]; }; \
    layout(std430, binding = k) buffer V##k { vec4 v##k[]; };
BINDING(0)
BINDING(1)
BINDING(2)
BINDING(3)
BINDING(4)
BINDING(5)
BINDING(6)
BINDING(7)

float apply_op(uint code, float x, float y) {
    precise float v;
    switch (code) {
    case 1u: v = x + y; break;
    case 2u: v = x - y; break;
    case 3u: v = x * y; break;
    case 4u: v = np_divide(x, y); break;
    case 5u: v = np_max(x, y); break;
    case 6u: v = np_min(x, y); break;
    case 7u: v = -x; break;
    case 8u: v = abs(x); break;
    case 9u: v = x * x; break;  // square
    case 10u: v = np_exp(x); break;
    case 11u: v = np_log(x); break;
    case 12u: v = np_sqrt(x); break;
    case 13u: v = np_tanh(x); break;
    default: v = x; break;      // 14: copy
    }
    return v;
}

#define STEP(k) \
    if (NOPS > uint(k)) r[16 + k] = apply_op(STEP##k & 15u, r[(STEP##k >> 4) & 31u], r[(STEP##k >> 9) & 31u]);

void run(inout float r[24]) {
    STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7)
}

#define ONE(k) ((UNIFORM & (1u << k)) != 0u)
#define READ(k) if ((LOADS & (1u << k)) != 0u) r[k] = b##k[p.off[k] + (ONE(k) ? 0u : i)];
#define WRITE(k) if (STORE##k != 0u) b##k[p.off[k] + i] = r[STORE##k];
#define READ4(k) if ((LOADS & (1u << k)) != 0u) in4[k] = ONE(k) ? vec4(b##k[p.off[k]]) : v##k[p.off[k] / 4u + j];
#define KEEP(k) if (STORE##k != 0u) out4[k][c] = r[STORE##k];
#define WRITE4(k) if (STORE##k != 0u) v##k[p.off[k] / 4u + j] = out4[k];

void main() {
    float r[24];
    [[unroll]] for (int k = 0; k < 24; ++k) r[k] = 0.0;
    [[unroll]] for (int k = 0; k < 8; ++k) r[8 + k] = uintBitsToFloat(p.scalar[k]);
    if (VEC4) {
        GRID_STRIDE_LOOP(j, p.n / 4u) {
            vec4 in4[8], out4[8];
            [[unroll]] for (int k = 0; k < 8; ++k) { in4[k] = vec4(0.0); out4[k] = vec4(0.0); }
            READ4(0) READ4(1) READ4(2) READ4(3) READ4(4) READ4(5) READ4(6) READ4(7)
            [[unroll]] for (int c = 0; c < 4; ++c) {
                [[unroll]] for (int k = 0; k < 8; ++k) r[k] = in4[k][c];
                run(r);
                KEEP(0) KEEP(1) KEEP(2) KEEP(3) KEEP(4) KEEP(5) KEEP(6) KEEP(7)
            }
            WRITE4(0) WRITE4(1) WRITE4(2) WRITE4(3) WRITE4(4) WRITE4(5) WRITE4(6) WRITE4(7)
        }
    } else {
        GRID_STRIDE_LOOP(i, p.n) {
            READ(0) READ(1) READ(2) READ(3) READ(4) READ(5) READ(6) READ(7)
            run(r);
            WRITE(0) WRITE(1) WRITE(2) WRITE(3) WRITE(4) WRITE(5) WRITE(6) WRITE(7)
        }
    }
}
