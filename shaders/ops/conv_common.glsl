// Convolution geometry shared by the conv*.comp kernels (include after lib/common.glsl).
//
// Every convolution is N-d (N <= 3) and expressed in the general form
//   y[n, g*COG + j, o] = sum_{c < CIG, k} x'[n, g*CIG + c, o*ST + k*KD - PL] * w[g, j, c, k']
// where x' is x with ID-1 zeros inserted between neighbours (input dilation), positions outside
// x' are zero (padding; a negative PL crops), and k' = k, or the mirrored position when FLIP
// (a true convolution). Lower-rank convolutions have leading unit dimensions (size 1, kernel 1,
// stride/dilation 1, no padding): as specialization constants they fold away.
//
// The weight is addressed through strides, so the channel-transposed weight of a backward-input
// pass (or of a transposed convolution) is read in place:
//   w[g, j, c, kpos] = w_[w_off + g*W_G + j*W_J + c*W_C + kpos]    (kpos: flat kernel position)
#ifndef VK_OPS_CONV_COMMON
#define VK_OPS_CONV_COMMON

// Loop hints (GL_EXT_control_flow_attributes, enabled by each kernel): UNROLL on register-block
// loops, LOOP on loops bounded by specialization constants. With NO_UNROLL (software rasterizers:
// lavapipe compiles unrolled bodies slowly and gains nothing from them) neither unrolls.
#ifdef NO_UNROLL
#define UNROLL [[dont_unroll]]
#define LOOP [[dont_unroll]]
#else
#define UNROLL [[unroll]]
#define LOOP
#endif

layout(constant_id = 2) const int NB = 1;     // batch
layout(constant_id = 3) const int CIN = 1;    // input channels (all groups)
layout(constant_id = 4) const int COUT = 1;   // output channels (all groups)
layout(constant_id = 5) const int GROUPS = 1;
layout(constant_id = 6) const int CIG = 1;    // input channels per group
layout(constant_id = 7) const int COG = 1;    // output channels per group
layout(constant_id = 8) const int SI0 = 1;    // input spatial size (undilated)
layout(constant_id = 9) const int SI1 = 1;
layout(constant_id = 10) const int SI2 = 1;
layout(constant_id = 11) const int SO0 = 1;   // output spatial size
layout(constant_id = 12) const int SO1 = 1;
layout(constant_id = 13) const int SO2 = 1;
layout(constant_id = 14) const int K0 = 1;    // kernel size
layout(constant_id = 15) const int K1 = 1;
layout(constant_id = 16) const int K2 = 1;
layout(constant_id = 17) const int ST0 = 1;   // stride
layout(constant_id = 18) const int ST1 = 1;
layout(constant_id = 19) const int ST2 = 1;
layout(constant_id = 20) const int KD0 = 1;   // kernel dilation
layout(constant_id = 21) const int KD1 = 1;
layout(constant_id = 22) const int KD2 = 1;
layout(constant_id = 23) const int ID0 = 1;   // input dilation
layout(constant_id = 24) const int ID1 = 1;
layout(constant_id = 25) const int ID2 = 1;
layout(constant_id = 26) const int PL0 = 0;   // low padding (may be negative)
layout(constant_id = 27) const int PL1 = 0;
layout(constant_id = 28) const int PL2 = 0;
layout(constant_id = 29) const int FLIP = 0;
layout(constant_id = 30) const int W_G = 1;   // weight strides: group, output channel, input channel
layout(constant_id = 31) const int W_J = 1;
layout(constant_id = 32) const int W_C = 1;
layout(constant_id = 33) const int SPLIT_STEPS = 1;  // reduction steps per split (split-K)
layout(constant_id = 34) const int SPLITS = 1;       // splits of the reduction (wgrad; conv_gemm)

const int SI = SI0 * SI1 * SI2;
const int SO = SO0 * SO1 * SO2;
const int KP = K0 * K1 * K2;
const int KTOT = CIG * KP;           // GEMM reduction length of the forward pass
const int MROWS = NB * SO;           // GEMM rows: (batch, output position)
const int WTOT = COUT * CIG * KP;    // weight elements

// A coordinate p of the dilated, padded input -> the index into x along that axis, or -1 where
// p falls on padding or on a dilation hole.
int dim_index(int p, int idil, int size) {
    if (idil == 1) return (uint(p) < uint(size)) ? p : -1;
    int q = p / idil;
    return (p >= 0 && q * idil == p && q < size) ? q : -1;
}

// Flat output position (< SO) -> per-axis coordinates. Unit leading axes (lower-rank
// convolutions) fold away: the compiler cannot know o < SO by itself.
ivec3 out_coords(int o) {
    int o2 = SO2 == 1 ? 0 : o % SO2;
    int t = SO2 == 1 ? o : o / SO2;
    return ivec3(SO0 == 1 ? 0 : t / SO1, SO1 == 1 ? 0 : (SO0 == 1 ? t : t % SO1), o2);
}

// Flat kernel position (< KP) -> per-axis kernel coordinates, times the kernel dilation.
ivec3 tap_offsets(int kpos) {
    int k2 = K2 == 1 ? 0 : kpos % K2;
    int t = K2 == 1 ? kpos : kpos / K2;
    int k0 = K0 == 1 ? 0 : t / K1;
    int k1 = K1 == 1 ? 0 : (K0 == 1 ? t : t % K1);
    return ivec3(k0 * KD0, k1 * KD1, k2 * KD2);
}

// Offset of input element (q0, q1, q2) within one channel plane, or -1 when any is -1.
int plane_offset(ivec3 base, ivec3 taps) {
    int q0 = dim_index(base.x + taps.x, ID0, SI0);
    int q1 = dim_index(base.y + taps.y, ID1, SI1);
    int q2 = dim_index(base.z + taps.z, ID2, SI2);
    return (q0 < 0 || q1 < 0 || q2 < 0) ? -1 : (q0 * SI1 + q1) * SI2 + q2;
}

// The first dilated-input coordinate an output position reads (o*ST - PL per axis).
ivec3 window_base(ivec3 o) {
    return ivec3(o.x * ST0 - PL0, o.y * ST1 - PL1, o.z * ST2 - PL2);
}

// The kernel position whose tap meets the input at flat position kpos (mirror when FLIP).
int weight_tap(int kpos) { return FLIP != 0 ? KP - 1 - kpos : kpos; }
#endif
