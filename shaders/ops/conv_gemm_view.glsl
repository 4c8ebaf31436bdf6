// The implicit GEMM's view of a convolution (conv_gemm.comp, conv_coopmat.comp; include after
// ops/conv_common.glsl): rows m = (batch, output position), the reduction kk = (input channel of
// the group, tap), and with PHASED one phase of an input-dilated convolution (see conv_gemm.comp).
// Needs BK (the reduction steps of one tile) and PHASED defined.
#ifndef VK_OPS_CONV_GEMM_VIEW
#define VK_OPS_CONV_GEMM_VIEW

const int CSTEPS = (CIG + BK - 1) / BK;

// -- the GEMM's view of the geometry: all specialization constants, or per phase -------------
#if PHASED
const int NPHASES = ID0 * ID1 * ID2;
ivec3 ph_r;      // this workgroup's phase: output position mod ID per axis
ivec3 ph_rows;   // output positions of the phase per axis
ivec3 ph_taps;   // taps of the phase per axis
ivec3 ph_k0;     // first tap of the phase per axis (the others follow every ID)
ivec3 ph_base;   // input index of (first output of the phase, first tap) per axis
int ph_so;       // output positions of the phase
int ph_kp;       // taps of the phase

// The x with x * KD = 1 (mod ID): KD and ID are coprime (checked by the planner).
int inverse_mod(int kd, int id) {
    for (int x = 1; x < id; ++x)
        if ((x * kd) % id == 1) return x;
    return id == 1 ? 0 : 1;
}

int phase_axis(int r, int so, int k, int kd, int id, int pl, out int rows, out int taps, out int k0) {
    rows = max(0, (so - r + id - 1) / id);
    int v = pl - r;                                        // k * kd = v (mod id)
    int want = v >= 0 ? v % id : (id - (-v) % id) % id;    // (% of negatives is undefined)
    k0 = (want * inverse_mod(kd, id)) % id;
    taps = max(0, (k - k0 + id - 1) / id);
    return (r + k0 * kd - pl) / id;        // exact
}

void phase_setup(int ph) {
    ph_r = ivec3(ph / (ID1 * ID2), (ph / ID2) % ID1, ph % ID2);
    int rows0, rows1, rows2, t0, t1, t2, k00, k01, k02;
    ph_base.x = phase_axis(ph_r.x, SO0, K0, KD0, ID0, PL0, rows0, t0, k00);
    ph_base.y = phase_axis(ph_r.y, SO1, K1, KD1, ID1, PL1, rows1, t1, k01);
    ph_base.z = phase_axis(ph_r.z, SO2, K2, KD2, ID2, PL2, rows2, t2, k02);
    ph_rows = ivec3(rows0, rows1, rows2);
    ph_taps = ivec3(t0, t1, t2);
    ph_k0 = ivec3(k00, k01, k02);
    ph_so = rows0 * rows1 * rows2;
    ph_kp = t0 * t1 * t2;
}
#define G_SO ph_so
#define G_KP ph_kp
#else
#define G_SO SO
#define G_KP KP
#endif
#define G_ROWS (NB * G_SO)
#define G_KTOT (CIG * G_KP)

// Row (output position o within the batch element) -> the first input coordinate it reads per
// axis: dilated-input coordinates, or with PHASED input indices.
ivec3 row_window(int o) {
#if PHASED
    int a2 = o % ph_rows.z;
    int t = o / ph_rows.z;
    return ivec3(t / ph_rows.y, t % ph_rows.y, a2) + ph_base;
#else
    return window_base(out_coords(o));
#endif
}

// Flat tap -> its offset per axis in the coordinates of row_window.
ivec3 tap_of(int kpos) {
#if PHASED
    int t2 = kpos % ph_taps.z;
    int t = kpos / ph_taps.z;
    return ivec3((t / ph_taps.y) * KD0, (t % ph_taps.y) * KD1, t2 * KD2);
#else
    return tap_offsets(kpos);
#endif
}

// Flat tap -> the weight's flat kernel position (mirrored with FLIP).
int weight_of(int kpos) {
#if PHASED
    int t2 = kpos % ph_taps.z;
    int t = kpos / ph_taps.z;
    ivec3 k = ph_k0 + ivec3(t / ph_taps.y, t % ph_taps.y, t2) * ivec3(ID0, ID1, ID2);
    if (FLIP != 0) k = ivec3(K0, K1, K2) - 1 - k;
    return (k.x * K1 + k.y) * K2 + k.z;
#else
    return weight_tap(kpos);
#endif
}

// Offset within a channel plane of x of (window + taps), or -1 on padding or a hole.
int plane_of(ivec3 base, ivec3 taps) {
#if PHASED
    ivec3 q = base + taps;
    bool ok = uint(q.x) < uint(SI0) && uint(q.y) < uint(SI1) && uint(q.z) < uint(SI2);
    return ok ? (q.x * SI1 + q.y) * SI2 + q.z : -1;
#else
    return plane_offset(base, taps);
#endif
}

// Row o -> its output position within a channel plane of y.
int out_pos(int o) {
#if PHASED
    int a2 = o % ph_rows.z;
    int t = o / ph_rows.z;
    ivec3 i = ph_r + ivec3(t / ph_rows.y, t % ph_rows.y, a2) * ivec3(ID0, ID1, ID2);
    return (i.x * SO1 + i.y) * SO2 + i.z;
#else
    return o;
#endif
}
#endif
