// Instantiated by workgroup.glsl once per (WGT_T, WGT_OP): do not include directly. WGT_SUBGROUP:
// through subgroup arithmetic; WGT_GET / WGT_PUT: the scratch of a type that is no 32-bit word.
#define COMBINE PASTE(combine_, WGT_OP)
#define IDENTITY PASTE(identity_, WGT_OP)(WGT_T(0))
#ifdef WGT_GET
#define LOAD(i) WGT_GET(i)
#define STORE(i, x) WGT_PUT(i, x)
#else
#define LOAD(i) FROM_BITS(WGT_T, wg_scratch[i])
#define STORE(i, x) wg_scratch[i] = to_bits(x)
#endif

#ifdef WGT_SUBGROUP
WGT_T PASTE(wg_reduce_, WGT_OP)(WGT_T x) {
    WGT_T s = PASTE(sg_reduce_, WGT_OP)(x);
    if (subgroupElect()) STORE(gl_SubgroupID, s);
    barrier();
    if (gl_SubgroupID == 0u) {
        WGT_T v = IDENTITY;
        for (uint i = gl_SubgroupInvocationID; i < num_subgroups(); i += gl_SubgroupSize)
            v = COMBINE(v, LOAD(i));
        v = PASTE(sg_reduce_, WGT_OP)(v);
        if (subgroupElect()) STORE(SUBGROUP_SLOTS, v);
    }
    barrier();
    WGT_T r = LOAD(SUBGROUP_SLOTS);
    barrier();
    return r;
}

WGT_T PASTE(wg_scan_, WGT_OP)(WGT_T x, out WGT_T exclusive, out WGT_T aggregate) {
    WGT_T incl = PASTE(sg_inclusive_, WGT_OP)(x);
    WGT_T excl = PASTE(sg_exclusive_, WGT_OP)(x);
    if (sg_last_lane()) STORE(gl_SubgroupID, incl);
    barrier();
    if (gl_SubgroupID == 0u) {  // exclusive prefix of the subgroup totals, any number of subgroups
        WGT_T carry = IDENTITY;
        for (uint base = 0u; base < num_subgroups(); base += gl_SubgroupSize) {
            uint i = base + gl_SubgroupInvocationID;
            WGT_T v = i < num_subgroups() ? LOAD(i) : IDENTITY;
            WGT_T prefix = COMBINE(carry, PASTE(sg_exclusive_, WGT_OP)(v));
            carry = COMBINE(carry, PASTE(sg_reduce_, WGT_OP)(v));
            if (i < num_subgroups()) STORE(i, prefix);
        }
        if (subgroupElect()) STORE(SUBGROUP_SLOTS, carry);
    }
    barrier();
    WGT_T before = LOAD(gl_SubgroupID);
    aggregate = LOAD(SUBGROUP_SLOTS);
    barrier();
    exclusive = COMBINE(before, excl);
    return COMBINE(before, incl);
}

#else  // shared-memory fallback: a tree for reduce, Hillis-Steele for scan, over WG_SIZE words
// (WGT_LID: an invocation's place, in scan order)

WGT_T PASTE(wg_reduce_, WGT_OP)(WGT_T x) {
    uint lid = WGT_LID;
    STORE(lid, x);
    barrier();
    for (uint stride = 1u; stride < WG_SIZE; stride <<= 1) {
        if ((lid & (2u * stride - 1u)) == 0u && lid + stride < WG_SIZE)
            STORE(lid, COMBINE(LOAD(lid), LOAD(lid + stride)));
        barrier();
    }
    WGT_T r = LOAD(0u);
    barrier();
    return r;
}

WGT_T PASTE(wg_scan_, WGT_OP)(WGT_T x, out WGT_T exclusive, out WGT_T aggregate) {
    uint lid = WGT_LID;
    WGT_T acc = x;
    STORE(lid, acc);
    barrier();
    for (uint stride = 1u; stride < WG_SIZE; stride <<= 1) {
        WGT_T other = lid >= stride ? LOAD(lid - stride) : IDENTITY;
        barrier();
        acc = COMBINE(other, acc);
        STORE(lid, acc);
        barrier();
    }
    exclusive = lid > 0u ? LOAD(lid - 1u) : IDENTITY;
    aggregate = LOAD(WG_SIZE - 1u);
    barrier();
    return acc;
}
#endif

WGT_T PASTE(wg_inclusive_scan_, WGT_OP)(WGT_T x, out WGT_T aggregate) {
    WGT_T e;
    return PASTE(wg_scan_, WGT_OP)(x, e, aggregate);
}

WGT_T PASTE(wg_exclusive_scan_, WGT_OP)(WGT_T x, out WGT_T aggregate) {
    WGT_T e;
    PASTE(wg_scan_, WGT_OP)(x, e, aggregate);
    return e;
}

#undef COMBINE
#undef IDENTITY
#undef LOAD
#undef STORE
