#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "lib/workgroup.glsl"
#ifdef F64
#include "lib/math.glsl"
#endif
// @variants ?BACKWARD ?RMS ?HAS_W ?HAS_B ?VEC4 N=0|2
// @variants BACKWARD|HAS_W VEC4 N=2 SG_ROWS SG_MIN=4 SG_CAP=64 +subgroup
// @variants ?BACKWARD ?RMS HAS_W HAS_B ?VEC4 N=0|2 F64 VK_WIDE VK_MATH64 WG_T64=double
// @variants ?BACKWARD HAS_W HAS_B ?VEC4 N=0|2 HALF_IO ?HALF_BF16 VK_WIDE
// Layer norm / RMS norm over rows of length D, forward and backward (ops/layernorm.py plans it).
//
// Defines:
//   BACKWARD   the vjp: dx, plus per-workgroup partial column sums of dweight / dbias
//   RMS        RMS norm (no mean); else layer norm
//   HAS_W      a weight: forward scales by it; backward multiplies dy by it and sums dweight
//   HAS_B      forward: adds a bias; backward: sums dbias
//   VEC4       rows are vec4s (D % 4 == 0 and every offset 4-aligned); else floats
//   N          vectors per invocation held in registers (the row fits: N * lanes >= DV);
//              0: the row streams from memory (long rows), one pass per statistic
//   SG_ROWS    a subgroup per row (needs subgroup arithmetic, N > 0); else a workgroup per row
//   SG_MIN     SG_ROWS: the smallest subgroup size N was planned for
//   SG_CAP     SG_ROWS backward: vectors of shared memory to combine the subgroups' partials
//   HALF_IO    x and y (backward: dy and dx) are float16's bits (HALF_BF16: bfloat16's), read into
//              float32 and written rounded to nearest even; weight, bias and partials float32
//              (with VK_WIDE)
//   F64        float64 rows, statistics and partials (with VK_WIDE VK_MATH64 WG_T64=double, and
//              SG_T64 where subgroup arithmetic takes doubles); 1 / D, the square root and the
//              reciprocal are the device's refined by their residual (lib/math64.glsl: Vulkan
//              promises double division and sqrt only single precision's accuracy); eps comes as
//              the push constant's last two words (a double's bits), inv_d is unused
//
// Bindings: 0 x, 1 weight, 2 forward: bias / backward: dy, 3 forward: y / backward: dx,
//           4 backward: partial sums, [k][workgroup][PS] with k = dweight, dbias (those present).
// Push constants (offsets in vectors):
layout(push_constant) uniform Push {
    uint rows;     // number of rows
    uint dv;       // vectors per row
    float inv_d;   // 1 / D
    float eps;
    uint x_off;
    uint w_off;
    uint b_off;    // forward: bias; backward: dy
    uint y_off;    // forward: y; backward: dx
    uint ps;       // backward: partial row stride (vectors)
    uint kstride;  // backward: partial stride between dweight and dbias (vectors)
#ifdef F64
    uint eps_lo, eps_hi;
#endif
} p;

// R: the type rows are computed in; VT: a vector of the row as it is read.
#ifdef F64
#define R double
#define R3 dvec3
#ifdef VEC4
#define VT dvec4
#define VW 4u
#else
#define VT double
#define VW 1u
#endif
#else
#define R float
#define R3 vec3
#ifdef VEC4
#define VT vec4
#else
#define VT float
#endif
#endif
R hsum(VT v) {
#ifdef VEC4
    return (v.x + v.y) + (v.z + v.w);
#else
    return v;
#endif
}

// The row's mean of a row sum, and 1 / sqrt(variance + eps).
#ifdef F64
R inv_d;  // set once by main
#define ROW_MEAN(total) ((total) * inv_d)
#define SET_INV_D() inv_d = div_refine_d(1.0lf, double(p.dv * VW))
R rstd_of(R var) { return div_refine_d(1.0lf, sqrt_refine_d(var + packDouble2x32(uvec2(p.eps_lo, p.eps_hi)))); }
#else
#define ROW_MEAN(total) ((total) * p.inv_d)
#define SET_INV_D()
R rstd_of(R var) { return inversesqrt(var + p.eps); }
#endif

// HT: a vector of x, y (dy, dx) as it is held; load_h / store_h convert to and from VT.
#ifdef HALF_IO
#ifdef HALF_BF16
#define H_TO_F BF16_TO_FLOAT
#define F_TO_H FLOAT_TO_BF16
#else
#define H_TO_F HALF_TO_FLOAT
#define F_TO_H FLOAT_TO_HALF
#endif
#ifdef VEC4
#define HT u16vec4
VT load_h(HT h) { return VT(H_TO_F(h.x), H_TO_F(h.y), H_TO_F(h.z), H_TO_F(h.w)); }
HT store_h(VT v) { return HT(F_TO_H(v.x), F_TO_H(v.y), F_TO_H(v.z), F_TO_H(v.w)); }
#else
#define HT uint16_t
VT load_h(HT h) { return H_TO_F(h); }
HT store_h(VT v) { return F_TO_H(v); }
#endif
#else
#define HT VT
#define load_h(h) (h)
#define store_h(v) (v)
#endif

layout(std430, binding = 0) restrict readonly buffer X { HT x_[]; };
layout(std430, binding = 1) restrict readonly buffer W { VT w_[]; };
#ifdef BACKWARD
layout(std430, binding = 2) restrict readonly buffer B { HT b_[]; };  // dy
#else
layout(std430, binding = 2) restrict readonly buffer B { VT b_[]; };  // bias
#endif
layout(std430, binding = 3) restrict writeonly buffer Y { HT y_[]; };

#if defined(BACKWARD) && (defined(HAS_W) || defined(HAS_B))
#define ACCUMULATE
layout(std430, binding = 4) restrict buffer Part { VT part_[]; };
#ifdef HAS_W
#define KB 1u  // slot of dbias
#else
#define KB 0u
#endif
#endif

#ifdef SG_ROWS
#ifndef HAS_SUBGROUP_ARITHMETIC
#error "SG_ROWS needs subgroup arithmetic"
#endif
#if N == 0
#error "SG_ROWS needs N > 0"
#endif
// One row per subgroup: lanes are the subgroup's, the row sum is a subgroup sum.
#define ROW_SUM(v) subgroupAdd(v)
#define LANE gl_SubgroupInvocationID
#define LANES gl_SubgroupSize
#define WORKER (gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID)
#define WORKERS (gl_NumWorkGroups.x * gl_NumSubgroups)
// N was sized for subgroups of at least SG_MIN lanes. Checking it also makes the shader differ per
// subgroup size: lavapipe's shader disk cache (Mesa 22.3) was seen to hand a subgroup kernel
// compiled under one LP_NATIVE_VECTOR_WIDTH to another width, where only part of the lanes ran.
#define CHECK_SUBGROUP_SIZE() if (gl_SubgroupSize < SG_MIN) return
#else
#define CHECK_SUBGROUP_SIZE()
// One row per workgroup: the row sum is the library's workgroup reduce (any subgroup size,
// shared-memory fallback without subgroup arithmetic).
#define ROW_SUM(v) wg_reduce_add(v)
#define LANE gl_LocalInvocationIndex
#define LANES WG_SIZE
#define WORKER gl_WorkGroupID.x
#define WORKERS gl_NumWorkGroups.x
#endif

#ifndef BACKWARD
// ------------------------------------------------------------------------------- forward
VT normalize(VT v, R mean, R rstd, uint i) {
    VT y = (v - mean) * rstd;
#ifdef HAS_W
    y *= w_[p.w_off + i];
#endif
#ifdef HAS_B
    y += b_[p.b_off + i];
#endif
    return y;
}

void main() {
    CHECK_SUBGROUP_SIZE();
    SET_INV_D();
    const uint lane = LANE, lanes = LANES;
    for (uint row = WORKER; row < p.rows; row += WORKERS) {
        const uint xb = p.x_off + row * p.dv, yb = p.y_off + row * p.dv;
#if N > 0
        VT v[N];
        R s = R(0.0);
        [[unroll]] for (uint j = 0u; j < N; ++j) {
            const uint i = j * lanes + lane;
            const VT t = load_h(x_[xb + min(i, p.dv - 1u)]);
            v[j] = i < p.dv ? t : VT(0.0);
#ifdef RMS
            s += hsum(v[j] * v[j]);
#else
            s += hsum(v[j]);
#endif
        }
#ifdef RMS
        const R mean = R(0.0);
        const R q = s;
#else
        const R mean = ROW_MEAN(ROW_SUM(s));
        R q = R(0.0);  // second pass over the registers: sum of squared deviations
        [[unroll]] for (uint j = 0u; j < N; ++j) {
            const uint i = j * lanes + lane;
            const VT c = i < p.dv ? v[j] - mean : VT(0.0);
            q += hsum(c * c);
        }
#endif
        const R rstd = rstd_of(ROW_MEAN(ROW_SUM(q)));
        [[unroll]] for (uint j = 0u; j < N; ++j) {
            const uint i = j * lanes + lane;
            const VT y = normalize(v[j], mean, rstd, min(i, p.dv - 1u));
            if (i < p.dv) y_[yb + i] = store_h(y);
        }
#else  // N == 0: the row does not fit in registers; stream it (later passes mostly hit cache)
#ifdef RMS
        const R mean = R(0.0);
#else
        R s = R(0.0);
        for (uint i = lane; i < p.dv; i += lanes) s += hsum(load_h(x_[xb + i]));
        const R mean = ROW_MEAN(ROW_SUM(s));
#endif
        R q = R(0.0);
        for (uint i = lane; i < p.dv; i += lanes) {
            const VT c = load_h(x_[xb + i]) - mean;
            q += hsum(c * c);
        }
        const R rstd = rstd_of(ROW_MEAN(ROW_SUM(q)));
        for (uint i = lane; i < p.dv; i += lanes) y_[yb + i] = store_h(normalize(load_h(x_[xb + i]), mean, rstd, i));
#endif
    }
}

#else
// ------------------------------------------------------------------------------ backward
// With xc = x - mean (x for RMS), rstd = 1 / sqrt(mean(xc^2) + eps), xhat = xc * rstd, g = dy * w:
//   layer norm: dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
//   RMS norm:   dx = rstd * (g - xhat * mean(g * xhat))
//   dweight = sum over rows of dy * xhat; dbias = sum over rows of dy.
// mean(g * xhat) = rstd * mean(g * xc), so one pass gives every statistic once the mean is known.

VT weighted(VT dy, uint i) {
#ifdef HAS_W
    return dy * w_[p.w_off + i];
#else
    return dy;
#endif
}

// The three sums of a row that follow the mean, at once.
#if defined(SG_ROWS)
R3 row_sum3(R3 v) { return subgroupAdd(v); }
#elif defined(HAS_SUBGROUP_ARITHMETIC)
// Subgroup sums, then every invocation adds the subgroups' in the same order (2 barriers, where
// three wg_reduce_add would take 9).
shared R3 red3[SUBGROUP_SLOTS];
R3 row_sum3(R3 v) {
    v = subgroupAdd(v);
    if (subgroupElect()) red3[gl_SubgroupID] = v;
    barrier();
    R3 t = R3(0.0);
    for (uint s = 0u; s < gl_NumSubgroups; ++s) t += red3[s];
    barrier();
    return t;
}
#else
R3 row_sum3(R3 v) { return R3(wg_reduce_add(v.x), wg_reduce_add(v.y), wg_reduce_add(v.z)); }
#endif

#if defined(ACCUMULATE) && defined(SG_ROWS)
// The subgroups of a workgroup add their partials here, one after another.
shared VT comb[SG_CAP];
#endif

void main() {
    CHECK_SUBGROUP_SIZE();
    SET_INV_D();
    const uint lane = LANE, lanes = LANES;
#if N > 0
    // This invocation's columns are the same in every row: its weights stay in registers.
#ifdef HAS_W
    VT wr[N];
    [[unroll]] for (uint j = 0u; j < N; ++j) wr[j] = w_[p.w_off + min(j * lanes + lane, p.dv - 1u)];
#define G(j) (dyv[j] * wr[j])
#else
#define G(j) dyv[j]
#endif
#endif
#if N > 0 && defined(ACCUMULATE)
#ifdef HAS_W
    VT dw[N];
    [[unroll]] for (uint j = 0u; j < N; ++j) dw[j] = VT(0.0);
#endif
#ifdef HAS_B
    VT db[N];
    [[unroll]] for (uint j = 0u; j < N; ++j) db[j] = VT(0.0);
#endif
#endif
#if N == 0 && defined(ACCUMULATE)
    // Streaming: this workgroup's partial row lives in memory; each invocation owns its columns.
    const uint pb = gl_WorkGroupID.x * p.ps;
    for (uint i = lane; i < p.dv; i += lanes) {
#ifdef HAS_W
        part_[pb + i] = VT(0.0);
#endif
#ifdef HAS_B
        part_[KB * p.kstride + pb + i] = VT(0.0);
#endif
    }
#endif

    for (uint row = WORKER; row < p.rows; row += WORKERS) {
        const uint xb = p.x_off + row * p.dv, gb = p.b_off + row * p.dv, ob = p.y_off + row * p.dv;
#if N > 0
        VT xv[N], dyv[N];
        [[unroll]] for (uint j = 0u; j < N; ++j) {
            const uint i = j * lanes + lane, ic = min(i, p.dv - 1u);
            const VT tx = load_h(x_[xb + ic]), tg = load_h(b_[gb + ic]);
            xv[j] = i < p.dv ? tx : VT(0.0);
            dyv[j] = i < p.dv ? tg : VT(0.0);
        }
#ifdef RMS
        const R mean = R(0.0);
#else
        R s = R(0.0);
        [[unroll]] for (uint j = 0u; j < N; ++j) s += hsum(xv[j]);
        const R mean = ROW_MEAN(ROW_SUM(s));
#endif
        R q = R(0.0), sg = R(0.0), sgx = R(0.0);
        [[unroll]] for (uint j = 0u; j < N; ++j) {
            const uint i = j * lanes + lane;
            // padding lanes hold x = dy = 0: only xc needs masking
            const VT xc = i < p.dv ? xv[j] - mean : VT(0.0);
            const VT g = G(j);
            q += hsum(xc * xc);
            sg += hsum(g);
            sgx += hsum(g * xc);
        }
#else
#ifdef RMS
        const R mean = R(0.0);
#else
        R s = R(0.0);
        for (uint i = lane; i < p.dv; i += lanes) s += hsum(load_h(x_[xb + i]));
        const R mean = ROW_MEAN(ROW_SUM(s));
#endif
        R q = R(0.0), sg = R(0.0), sgx = R(0.0);
        for (uint i = lane; i < p.dv; i += lanes) {
            const VT xc = load_h(x_[xb + i]) - mean;
            const VT g = weighted(load_h(b_[gb + i]), i);
            q += hsum(xc * xc);
            sg += hsum(g);
            sgx += hsum(g * xc);
        }
#endif
        const R3 sums = ROW_MEAN(row_sum3(R3(q, sg, sgx)));
        const R rstd = rstd_of(sums.x);
#ifdef RMS
        const R mg = R(0.0);
#else
        const R mg = sums.y;
#endif
        const R c2 = sums.z * rstd * rstd;
#if N > 0
        [[unroll]] for (uint j = 0u; j < N; ++j) {
            const uint i = j * lanes + lane;
            const VT xc = xv[j] - mean;
            const VT dx = rstd * (G(j) - mg - xc * c2);
            if (i < p.dv) y_[ob + i] = store_h(dx);
#ifdef HAS_W
            dw[j] += dyv[j] * (xc * rstd);  // dy = 0 on padding lanes
#endif
#ifdef HAS_B
            db[j] += dyv[j];
#endif
        }
#else
        for (uint i = lane; i < p.dv; i += lanes) {
            const VT xc = load_h(x_[xb + i]) - mean;
            const VT dy = load_h(b_[gb + i]);
            y_[ob + i] = store_h(rstd * (weighted(dy, i) - mg - xc * c2));
#ifdef HAS_W
            part_[pb + i] += dy * (xc * rstd);
#endif
#ifdef HAS_B
            part_[KB * p.kstride + pb + i] += dy;
#endif
        }
#endif
    }

#if N > 0 && defined(ACCUMULATE)
#ifdef SG_ROWS
    // Add the subgroups' partials in shared memory, then the workgroup writes its partial row.
#define COMBINE_AND_STORE(acc, k)                                                         \
    for (uint s = 0u; s < gl_NumSubgroups; ++s) {                                         \
        if (gl_SubgroupID == s) {                                                         \
            [[unroll]] for (uint j = 0u; j < N; ++j) {                                    \
                const uint i = j * lanes + lane;                                          \
                if (i < p.dv) comb[i] = (s == 0u ? VT(0.0) : comb[i]) + acc[j];           \
            }                                                                             \
        }                                                                                 \
        barrier();                                                                        \
    }                                                                                     \
    for (uint i = gl_LocalInvocationIndex; i < p.dv; i += WG_SIZE)                       \
        part_[(k) * p.kstride + gl_WorkGroupID.x * p.ps + i] = comb[i];                   \
    barrier();
#ifdef HAS_W
    COMBINE_AND_STORE(dw, 0u)
#endif
#ifdef HAS_B
    COMBINE_AND_STORE(db, KB)
#endif
#else
    [[unroll]] for (uint j = 0u; j < N; ++j) {
        const uint i = j * lanes + lane;
        if (i < p.dv) {
#ifdef HAS_W
            part_[gl_WorkGroupID.x * p.ps + i] = dw[j];
#endif
#ifdef HAS_B
            part_[KB * p.kstride + gl_WorkGroupID.x * p.ps + i] = db[j];
#endif
        }
    }
#endif
#endif
}
#endif
