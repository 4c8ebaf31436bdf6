// Gathering one BM x BK tile of the implicit GEMM's A (from x) and one BK x BN tile of B (from
// the weight) into registers, for conv_gemm.comp and conv_coopmat.comp (include after
// ops/conv_gemm_view.glsl). The kernel defines the tile (BM, BN, BK), NTHREADS, the loader
// layout (LA_M, LA_K, RA, QA, EB), GATHER and B_J_FAST (see conv_gemm.comp), ELEM (the element
// type of x_ and w_, and of the registers: float or float16_t), and the buffers x_ and w_.
#ifndef VK_OPS_CONV_GATHER
#define VK_OPS_CONV_GATHER
#ifndef ELEM
#define ELEM float
#endif

#if GATHER == 2
// The table gather's shared table of the (channel, tap) columns, filled once by gather_table().
#ifndef TABLE_N
#error "the table gather needs TABLE_N"
#endif
shared int tab_off[TABLE_N];    // c * SI + the tap's offset within a channel plane
shared uint tab_taps[TABLE_N];  // tap offsets per axis, 10 bits each

void gather_table(int t) {  // every invocation calls it; then a barrier
    LOOP for (int kk = t; kk < TABLE_N; kk += NTHREADS) {
        int c = kk / KP;
        ivec3 taps = tap_offsets(kk - c * KP);
        tab_off[kk] = c * SI + (taps.x * SI1 + taps.y) * SI2 + taps.z;
        tab_taps[kk] = uint(taps.x) | (uint(taps.y) << 10) | (uint(taps.z) << 20);
    }
}
#endif

// -- loaders ----------------------------------------------------------------------------------
int row_x[RA];      // x offset of (batch, group's first channel), or -1 past the last row
ivec3 row_base[RA]; // first input coordinate per axis (row_window)
int row_lin[RA];    // table gather: row_base flattened within a channel plane
ELEM ra[RA * QA];
ELEM rb[EB];

void load_a(int step, int la_k) {
#if GATHER == 1
    int kpos = step / CSTEPS;
    int c0 = (step - kpos * CSTEPS) * BK + la_k;
    ivec3 taps = tap_of(kpos);
    UNROLL for (int r = 0; r < RA; ++r) {
        int off = plane_of(row_base[r], taps);
        bool ok = row_x[r] >= 0 && off >= 0;
        int addr = row_x[r] + off;
        UNROLL for (int q = 0; q < QA; ++q) {
            int c = c0 + q * LA_K;
            ELEM v = ELEM(0.0);
            if (ok && c < CIG) v = x_[addr + c * SI];
            ra[r * QA + q] = v;
        }
    }
#elif GATHER == 2
    UNROLL for (int q = 0; q < QA; ++q) {
        int kk = step * BK + la_k + q * LA_K;
        int off = tab_off[kk];
        uint e = tab_taps[kk];
        ivec3 taps = ivec3(K0 > 1 ? int(e & 1023u) : 0, K1 > 1 ? int((e >> 10) & 1023u) : 0,
                           K2 > 1 ? int(e >> 20) : 0);
        UNROLL for (int r = 0; r < RA; ++r) {
            ivec3 p = row_base[r] + taps;
            bool ok = uint(p.x) < uint(SI0) && uint(p.y) < uint(SI1) && uint(p.z) < uint(SI2);
            ELEM v = ELEM(0.0);
            if (kk < KTOT && row_x[r] >= 0 && ok) v = x_[row_x[r] + row_lin[r] + off];
            ra[r * QA + q] = v;
        }
    }
#else
    UNROLL for (int q = 0; q < QA; ++q) {
        int kk = step * BK + la_k + q * LA_K;
        int c = kk / G_KP;
        ivec3 taps = tap_of(kk - c * G_KP);
        UNROLL for (int r = 0; r < RA; ++r) {
            int off = plane_of(row_base[r], taps);
            ELEM v = ELEM(0.0);
            if (kk < G_KTOT && row_x[r] >= 0 && off >= 0) v = x_[row_x[r] + c * SI + off];
            ra[r * QA + q] = v;
        }
    }
#endif
}

// Element e of this invocation's share of the B tile -> (kk within the tile, j within the tile).
ivec2 b_elem(int idx) {
#if B_J_FAST
    return ivec2(idx / BN, idx % BN);
#else
    return ivec2(idx % BK, idx / BK);
#endif
}

void load_b(int step, int t, int wbase, int j0) {
#if GATHER == 1
    int kpos = step / CSTEPS;
    int c0 = (step - kpos * CSTEPS) * BK;
    int wk = wbase + weight_of(kpos);
#endif
    UNROLL for (int e = 0; e < EB; ++e) {
        int idx = t + e * NTHREADS;
        ivec2 kj = b_elem(idx);
        int kr = kj.x;
        int j = j0 + kj.y;
        ELEM v = ELEM(0.0);
#if GATHER == 1
        int c = c0 + kr;
        if (idx < BK * BN && j < COG && c < CIG) v = w_[wk + j * W_J + c * W_C];
#else
        int kk = step * BK + kr;
        int c = kk / G_KP;
        if (idx < BK * BN && j < COG && kk < G_KTOT)
            v = w_[wbase + j * W_J + c * W_C + weight_of(kk - c * G_KP)];
#endif
        rb[e] = v;
    }
}
#endif
