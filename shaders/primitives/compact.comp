#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "lib/workgroup.glsl"
// @variants PASS_COUNT|PASS_SCAN ITEMS=8 ?MASK_FLOAT
// @variants PASS_SCATTER ITEMS=8 OUT_VALUES|OUT_INDEX ?MASK_FLOAT
// @variants PASS_SCATTER ITEMS=8 OUT_COORDS RANK=1|3
// Stream compaction: the elements whose mask word is nonzero, in order, in three passes over tiles
// of TILE = WG_SIZE * ITEMS elements (element base + k * WG_SIZE + rank in pass k of a tile):
//   PASS_COUNT    counts[t] = selected elements in tile t
//   PASS_SCAN     one workgroup: counts[t] = exclusive prefix of the counts, counts[tiles] = total;
//                 tiles [w[3], w[4]) per dispatch, carrying on from counts[tiles] when w[3] > 0
//   PASS_SCATTER  a selected element goes to slot counts[t] + its rank among the tile's selected.
// The scatter ranks with one ballot per subgroup and pass, then a single workgroup scan of the
// ITEMS x subgroups counts per tile; without ballot, one workgroup scan per pass.
// Defines: PASS_*; ITEMS; MASK_FLOAT (a float mask: -0.0 is not selected, NaN is);
//   OUT_VALUES   out[slot] = values[e]
//   OUT_INDEX    out[slot] = e
//   OUT_COORDS   out[d * total + slot] = coordinate d of e in a shape of RANK dims (np.nonzero)
// Bindings: 0 mask, 1 counts (tiles + 1 words), 2 values (a dummy unless OUT_VALUES), 3 out.
// Push: n, tiles, mask offset, values offset (PASS_SCAN: first tile), out offset (PASS_SCAN: end
//   tile), total (OUT_COORDS), shape[RANK].
#ifndef RANK
#define RANK 0
#endif
#if !defined(PASS_COUNT) && !defined(PASS_SCAN) && !defined(PASS_SCATTER)
#define PASS_COUNT 1  // the defaults make the file compile on its own
#endif
#ifndef ITEMS
#define ITEMS 8u
#endif
layout(push_constant) uniform Push { uint w[6 + RANK]; } p;

layout(std430, binding = 0) readonly buffer Mask { uint mask_[]; };
layout(std430, binding = 1) buffer Counts { uint counts_[]; };
layout(std430, binding = 2) readonly buffer Values { uint values_[]; };
layout(std430, binding = 3) writeonly buffer Out { uint out_[]; };

const uint TILE = WG_SIZE * ITEMS;

bool selected(uint e) {
    if (e >= p.w[0]) return false;
    uint word = mask_[p.w[2] + e];
#ifdef MASK_FLOAT
    return uintBitsToFloat(word) != 0.0;
#else
    return word != 0u;
#endif
}

#if defined(PASS_COUNT)
void run_tile(uint tile) {
    uint c = 0u;
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k)
        c += uint(selected(tile * TILE + k * WG_SIZE + gl_LocalInvocationIndex));
    c = wg_reduce_add(c);
    if (gl_LocalInvocationIndex == 0u) counts_[tile] = c;
}

#elif defined(PASS_SCATTER)
void emit(uint slot, uint e) {
#if defined(OUT_VALUES)
    out_[p.w[4] + slot] = values_[p.w[3] + e];
#elif defined(OUT_INDEX)
    out_[p.w[4] + slot] = e;
#elif defined(OUT_COORDS)
    [[unroll]] for (int d = RANK - 1; d >= 0; --d) {
        uint extent = p.w[6 + d];
        out_[p.w[4] + uint(d) * p.w[5] + slot] = e % extent;
        e /= extent;
    }
#else
#error "define OUT_VALUES, OUT_INDEX or OUT_COORDS"
#endif
}

#ifdef HAS_SUBGROUP_BALLOT
// Subgroup-major order within a pass, so that a ballot's bit order is the output order.
uint lane_rank() { return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID; }
shared uint sg_offsets[ITEMS * SUBGROUP_SLOTS];

void run_tile(uint tile) {
    uint ns = gl_NumSubgroups;
    bool sel[ITEMS];
    uint slot[ITEMS];
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
        sel[k] = selected(tile * TILE + k * WG_SIZE + lane_rank());
        uint count;
        slot[k] = sg_compact_slot(sel[k], count);
        if (subgroupElect()) sg_offsets[k * ns + gl_SubgroupID] = count;
    }
    barrier();
    // Exclusive scan of the ITEMS * ns counts, pass-major (= element order): each invocation sums
    // a run of `per` entries, one workgroup scan places the runs, then each run is prefixed.
    uint entries = ITEMS * ns;
    uint per = (entries + WG_SIZE - 1u) / WG_SIZE;
    uint first = wg_rank() * per;
    uint last = min(first + per, entries);
    uint run = 0u;
    for (uint j = first; j < last; ++j) run += sg_offsets[j];
    uint tile_total;
    uint prefix = wg_exclusive_scan_add(run, tile_total);
    for (uint j = first; j < last; ++j) {
        uint c = sg_offsets[j];
        sg_offsets[j] = prefix;
        prefix += c;
    }
    barrier();
    uint start = counts_[tile];
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k)
        if (sel[k]) emit(start + sg_offsets[k * ns + gl_SubgroupID] + slot[k], tile * TILE + k * WG_SIZE + lane_rank());
    barrier();  // sg_offsets is rewritten by the next tile
}
#else
void run_tile(uint tile) {
    uint start = counts_[tile];
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
        uint e = tile * TILE + k * WG_SIZE + wg_rank();
        bool sel = selected(e);
        uint total;
        uint slot = wg_exclusive_scan_add(uint(sel), total);
        if (sel) emit(start + slot, e);
        start += total;
    }
}
#endif
#endif

void main() {
    uint tiles = p.w[1];
#if defined(PASS_SCAN)
    // Tiles [first, last), continuing from the total an earlier dispatch left in counts[tiles]:
    // several dispatches keep each invocation's loop inside the loop budget.
    uint first = p.w[3], last = p.w[4];
    uint carry = first > 0u ? counts_[tiles] : 0u;
    for (uint base = first; base < last; base += WG_SIZE) {
        uint t = base + wg_rank();
        uint total;
        uint prefix = wg_exclusive_scan_add(t < last ? counts_[t] : 0u, total);
        if (t < last) counts_[t] = carry + prefix;
        carry += total;
    }
    barrier();  // every invocation has read counts[tiles] before it is rewritten
    if (gl_LocalInvocationIndex == 0u) counts_[tiles] = carry;
#else
    for (uint tile = gl_WorkGroupID.x; tile < tiles; tile += gl_NumWorkGroups.x) run_tile(tile);
#endif
}
