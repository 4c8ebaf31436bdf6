// The reduction loop of the kernels that stage their operands' tiles through shared memory
// (primitives/matmul_coopmat.comp, ops/conv_coopmat_packed.comp, ops/conv_coopmat_wgrad.comp).
// STAGED_STEPS(N, LOAD, STORE, MULTIPLY) walks N steps: LOAD(s) puts step s's operands into
// registers, STORE(buf) writes them to shared copy buf of the tiles, MULTIPLY(buf) adds the
// products of copy buf. Step s + 1's loads are in flight during step s's products: with STAGES=2
// copies one barrier a step, with one copy (the memory saved buys a deeper K step) two.
// STAGED_LOOP: the loop's attribute (a kernel may set it, e.g. [[dont_unroll]]).
#ifndef VK_LIB_STAGED_STEPS
#define VK_LIB_STAGED_STEPS

#ifndef STAGES
#define STAGES 2
#endif
#ifndef STAGED_LOOP
#define STAGED_LOOP
#endif
#ifndef STAGED_INDEX
#define STAGED_INDEX int
#endif

#if STAGES == 2
#define STAGED_STEPS(N, LOAD, STORE, MULTIPLY)                   \
    if ((N) > 0) {                                               \
        LOAD(0);                                                 \
        STORE(0);                                                \
    }                                                            \
    barrier();                                                   \
    STAGED_LOOP for (STAGED_INDEX s_ = 0; s_ < (N); ++s_) {               \
        if (s_ + 1 < (N)) LOAD(s_ + 1);                          \
        MULTIPLY(s_ & 1);                                        \
        if (s_ + 1 < (N)) STORE((s_ + 1) & 1);                   \
        barrier();                                               \
    }
#else
#define STAGED_STEPS(N, LOAD, STORE, MULTIPLY)                   \
    if ((N) > 0) LOAD(0);                                        \
    STAGED_LOOP for (STAGED_INDEX s_ = 0; s_ < (N); ++s_) {               \
        barrier();                                               \
        STORE(0);                                                \
        barrier();                                               \
        if (s_ + 1 < (N)) LOAD(s_ + 1);                          \
        MULTIPLY(0);                                             \
    }                                                            \
    barrier();
#endif

#endif
