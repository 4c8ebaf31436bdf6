// The staging of conv_coopmat_packed.comp and conv_coopmat_wgrad.comp: STAGES (2, or 1) shared
// tiles of 16-byte vectors (8 halves), A of A_ROWS x A_COLS halves and B of B_ROWS x B_COLS,
// row-major, each row padded by one vector against bank conflicts; Regs, one step's share of both
// tiles per invocation (vector e of A is tile vector t + e * NTHREADS, likewise B); store_step
// puts a Regs into one buffer. The kernel defines NTHREADS, A_ROWS, A_COLS, B_ROWS, B_COLS
// (the columns multiples of 8).
#ifndef VK_OPS_CONV_COOPMAT_STAGE
#define VK_OPS_CONV_COOPMAT_STAGE

#define AV_ROW (A_COLS / 8)    // vectors per row of A, of B
#define BV_ROW (B_COLS / 8)
#define AV ((A_ROWS * AV_ROW + NTHREADS - 1) / NTHREADS)  // vectors per invocation and step
#define BV ((B_ROWS * BV_ROW + NTHREADS - 1) / NTHREADS)
#define LDA (AV_ROW + 1)       // shared row strides in vectors
#define LDB (BV_ROW + 1)
#define A_TILE (A_ROWS * LDA)
#define B_TILE (B_ROWS * LDB)

#define STAGED_LOOP LOOP
#include "lib/staged_steps.glsl"   // STAGES (default 2) and the reduction loop, STAGED_STEPS

shared uvec4 As[STAGES * A_TILE];
shared uvec4 Bs[STAGES * B_TILE];

struct Regs { uvec4 a[AV]; uvec4 b[BV]; };

void store_step(int buf, int t, Regs r) {
    UNROLL for (int e = 0; e < AV; ++e) {
        int idx = t + e * NTHREADS;
        if (idx < A_ROWS * AV_ROW) As[buf * A_TILE + (idx / AV_ROW) * LDA + idx % AV_ROW] = r.a[e];
    }
    UNROLL for (int e = 0; e < BV; ++e) {
        int idx = t + e * NTHREADS;
        if (idx < B_ROWS * BV_ROW) Bs[buf * B_TILE + (idx / BV_ROW) * LDB + idx % BV_ROW] = r.b[e];
    }
}

#endif
