// Accumulators of conv_coopmat*.comp: float32 16 x 16 fragments of the GEMM's output, rows m =
// (batch, output position), columns j = output channels of group g; their start (the bias, or
// zero) and their store into y (float16, N x COUT x output positions). Include after
// ops/conv_gemm_view.glsl; the kernel declares b_ / y_, pc.b_off / pc.y_off, SGS, NSUBGROUPS.
#ifndef VK_OPS_CONV_COOPMAT_EPILOGUE
#define VK_OPS_CONV_COOPMAT_EPILOGUE

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

shared float Cs[NSUBGROUPS * 256];  // one 16 x 16 scratch per subgroup (column-major)

// The accumulator a fragment starts from: the bias of its channels j0.. j0+15 in every row, or 0.
ACC start_fragment(int sg, int lane, int j0, int g) {
#if HAS_BIAS
    for (int e = lane; e < 256; e += SGS) {
        int j = j0 + (e >> 4);
        Cs[sg * 256 + e] = j < COG ? float(b_[pc.b_off + g * COG + j]) : 0.0;
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    ACC c;
    coopMatLoad(c, Cs, sg * 256, 16, gl_CooperativeMatrixLayoutColumnMajor);
    subgroupBarrier();  // loaded before the scratch is written again
    return c;
#else
    return ACC(0.0);
#endif
}

// A whole fragment's 16 rows are 16 consecutive output positions of one batch element (row
// tiles start at multiples of 16) when the positions per batch element are a multiple of 16 and
// no phase split interleaves them; then each of its columns is 16 consecutive halves of y.
#if PHASED
const bool DIRECT_ROWS = false;
#else
const bool DIRECT_ROWS = SO % 16 == 0;
#endif

// Fragment c (rows m0.., channels j0.. of group g) into y: straight from the accumulator
// (converted to float16, column-major with stride SO) when it is whole and its columns are
// 16-byte aligned; else through this subgroup's scratch, 16 consecutive lanes writing 16
// consecutive positions of one channel.
void store_fragment(ACC c, int sg, int lane, int m0, int j0, int g) {
    int n = m0 / G_SO;
    if (DIRECT_ROWS && m0 + 16 <= G_ROWS && j0 + 16 <= COG && pc.y_off % 8 == 0) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> h =
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(c);
        coopMatStore(h, y_, pc.y_off + (n * COUT + g * COG + j0) * SO + (m0 - n * G_SO), SO,
                     gl_CooperativeMatrixLayoutColumnMajor);
        return;
    }
    coopMatStore(c, Cs, sg * 256, 16, gl_CooperativeMatrixLayoutColumnMajor);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    for (int e = lane; e < 256; e += SGS) {
        int m = m0 + (e & 15);
        int j = j0 + (e >> 4);
        if (m < G_ROWS && j < COG) {
            int nm = m / G_SO;
            y_[pc.y_off + (nm * COUT + g * COG + j) * SO + out_pos(m - nm * G_SO)] = float16_t(Cs[sg * 256 + e]);
        }
    }
    subgroupBarrier();  // the scratch is read before the next fragment overwrites it
}
#endif
