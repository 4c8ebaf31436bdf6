// Tests only: a stand-in for GL_KHR_cooperative_matrix in matmul_coopmat.comp (COOPMAT_EMULATED),
// so that its staging, tiling, bounds and epilogue run on lavapipe, which has no cooperative
// matrices. The layouts follow the extension: element (r, c) at offset + r * stride + c
// (row-major) or offset + c * stride + r (column-major), offset and stride in elements of the
// array (uvec4 vectors of 8 halves for the shared tiles As and Bs, floats for Cs and c1). Slow;
// matmul_half.py never asks for it (tests/primitives/test_matmul_half.py does).
// Included after the declarations of As, Bs, Cs, c1 (not with OUT_HALF) and SGS.
#ifndef VK_PRIMITIVES_COOPMAT_EMULATED
#define VK_PRIMITIVES_COOPMAT_EMULATED

// A and B fragments are where they were loaded from (As, Bs: the kernel does not overwrite a tile
// between the loads and the products). Accumulators: lane l holds elements l, l + SGS, ... (as a
// distributed accumulator would). The loops over elements are unrolled but for the products'
// (whose SGS-dependent trip count, 256 / SGS, counts against a loop budget: a few hundred per K
// step), to keep lavapipe's compile short.
struct EmuFrag { uint off; uint stride; uint lay; };
#define EMU_PER (256u / SGS)
struct EmuAcc { float v[EMU_PER]; };
#define FRAG_A EmuFrag
#define FRAG_B EmuFrag
#define ACC EmuAcc
#define gl_CooperativeMatrixLayoutRowMajor 0u
#define gl_CooperativeMatrixLayoutColumnMajor 1u
#define EMU_LANE (gl_LocalInvocationIndex % SGS)

ACC acc_zero() { ACC x; [[unroll]] for (uint i = 0u; i < EMU_PER; ++i) x.v[i] = 0.0; return x; }
ACC acc_scale(ACC x, float s) { [[unroll]] for (uint i = 0u; i < EMU_PER; ++i) x.v[i] *= s; return x; }
ACC acc_add_scaled(ACC x, ACC y, float s) {
    [[unroll]] for (uint i = 0u; i < EMU_PER; ++i) x.v[i] += y.v[i] * s;
    return x;
}

uint emu_index(uint r, uint c, uint stride, uint lay) {   // in components of the array's elements
    return lay == gl_CooperativeMatrixLayoutRowMajor ? r * stride + c : c * stride + r;
}

// Element (r, c) of a fragment of a shared tile of uvec4 vectors (8 halves each).
float emu_As(EmuFrag f, uint r, uint c) {
    uint h = f.off * 8u + emu_index(r, c, f.stride * 8u, f.lay);
    return unpackHalf2x16(As[h >> 3][(h >> 1) & 3u])[h & 1u];
}
float emu_Bs(EmuFrag f, uint r, uint c) {
    uint h = f.off * 8u + emu_index(r, c, f.stride * 8u, f.lay);
    return unpackHalf2x16(Bs[h >> 3][(h >> 1) & 3u])[h & 1u];
}

void emu_load_As(out EmuFrag m, uint off, uint stride, uint lay) { m = EmuFrag(off, stride, lay); }
void emu_load_Bs(out EmuFrag m, uint off, uint stride, uint lay) { m = EmuFrag(off, stride, lay); }
#define EMU_E(i) (EMU_LANE + (i) * SGS)
#if !OUT_HALF
void emu_load_c1(out EmuAcc m, uint off, uint stride, uint lay) {
    [[unroll]] for (uint i = 0u; i < EMU_PER; ++i) m.v[i] = c1[off + emu_index(EMU_E(i) >> 4, EMU_E(i) & 15u, stride, lay)];
}
void emu_store_c1(EmuAcc m, uint off, uint stride, uint lay) {
    [[unroll]] for (uint i = 0u; i < EMU_PER; ++i) c1[off + emu_index(EMU_E(i) >> 4, EMU_E(i) & 15u, stride, lay)] = m.v[i];
}
#endif
void emu_store_Cs(EmuAcc m, uint off, uint stride, uint lay) {
    [[unroll]] for (uint i = 0u; i < EMU_PER; ++i) Cs[off + emu_index(EMU_E(i) >> 4, EMU_E(i) & 15u, stride, lay)] = m.v[i];
}

// The products as the hardware's: float16 inputs (exact in float32), float32 sums.
EmuAcc emu_muladd(EmuFrag a, EmuFrag b, EmuAcc c) {
    for (uint i = 0u; i < EMU_PER; ++i) {
        uint e = EMU_E(i);
        float s = c.v[i];
        [[unroll]] for (uint q = 0u; q < 16u; ++q) s += emu_As(a, e >> 4, q) * emu_Bs(b, q, e & 15u);
        c.v[i] = s;
    }
    return c;
}

#define coopMatLoad(m, arr, off, stride, layout) emu_load_##arr(m, off, stride, layout)
#define coopMatStore(m, arr, off, stride, layout) emu_store_##arr(m, off, stride, layout)
#define coopMatMulAdd(a, b, c) emu_muladd(a, b, c)
#endif
