#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "lib/workgroup.glsl"
#include "scan_types.glsl"
// @variants OP=add T_IN=float T=float S=float KEY=0 NEG_ZERO T_IN4=vec4 T4=vec4 S4=vec4 MODE=0|1|2 ?EXCLUSIVE ?REVERSE ITEMS=16 LOOKBACK=1 ?STAGED
// @variants OP=add T_IN=float T=float S=float KEY=0 NEG_ZERO T_IN4=vec4 T4=vec4 S4=vec4 MODE=0|2 ?EXCLUSIVE ?REVERSE ITEMS=16 LOOKBACK=1 STRIPED +subgroup
// @variants OP=add T_IN=float T=float S=float KEY=0 NEG_ZERO T_IN4=vec4 T4=vec4 S4=vec4 MODE=2 ITEMS=8 LOOKBACK=3 ?SERIAL_LOOKBACK ?FORCE_FALLBACK ?STATIC_TILES
// @variants OP=add|mul|min|max T_IN=int|uint T=int S=int KEY=0 T_IN4=ivec4 T4=ivec4 S4=ivec4 MODE=2 ITEMS=16 LOOKBACK=1 STAGED
// @variants OP=max|min T_IN=float T=float S=uint KEY=1|2 T_IN4=vec4 T4=vec4 S4=uvec4 MODE=0|2 ?HAS_PREFIX ITEMS=16 LOOKBACK=1 STAGED
// Scans of `rows` contiguous rows of `len` elements each, tile by tile: a tile is TILE = WG_SIZE *
// ITEMS consecutive elements of one row, one workgroup per tile.
//
// MODE 0 (SCAN)     scan each tile; its prefix is the identity (rows of one tile), or with
//                   HAS_PREFIX the tile's entry of aux (reduce-then-scan's downsweep)
// MODE 1 (REDUCE)   aux[tile] = the combination of the tile (reduce-then-scan's upsweep)
// MODE 2 (CHAINED)  the single-pass chained scan: decoupled look-back with the decoupled fallback;
//                   aux is the tile state (below)
//
// Defines: scan_types.glsl's, plus MODE, HAS_PREFIX, EXCLUSIVE, REVERSE (the scan runs from the
// end of each row), ITEMS (per thread, a multiple of 4), STRIPED or STAGED (tile layout, see
// load_tile; neither: blocked),
// LOOKBACK (predecessor states each look-back walker reads per round, see walk_back),
// SERIAL_LOOKBACK (one walker even with subgroup arithmetic: tests, and devices where a subgroup
// walk would not pay), FORCE_FALLBACK (tests: never trust the state of a predecessor, always
// reduce it from the input), STATIC_TILES (see acquire_tile).
// Spec constant 2: SPIN_LIMIT, further look-back rounds on a predecessor whose state shows nothing
// before the waiting workgroup reduces that tile itself.
// Bindings: 0 input, 1 output (unused by REDUCE), 2 aux.
// Push: len, rows, tiles per row, input offset, output offset, aux offset (elements / words),
// vec: bit 0 / bit 1 set when the input's / output's rows start (REVERSE: end) 16-byte aligned, so
// that whole quads move as one vector (a uniform branch rather than more pipeline variants);
// CHAINED only: epoch and base (see the tile state).
// Tiles are numbered row-major, (row, tile of the row); beyond the grid's x extent, along y.
layout(constant_id = 2) const uint SPIN_LIMIT = 64u;

layout(push_constant) uniform Push {
    uint len; uint rows; uint tiles_per_row; uint in_off; uint out_off; uint aux_off; uint vec;
    uint epoch; uint base;
} p;

// Two views of each of the input and output: scalars and 4-vectors (descriptor aliasing). The
// input is never written by this dispatch, which `restrict` tells the compiler (a read-only
// cache path on some GPUs).
layout(std430, binding = 0) restrict readonly buffer InS { T_IN in_s[]; };
layout(std430, binding = 0) restrict readonly buffer InV { T_IN4 in_v[]; };
layout(std430, binding = 1) writeonly buffer OutS { T out_s[]; };
layout(std430, binding = 1) writeonly buffer OutV { T4 out_v[]; };
// The tile state is read by other workgroups while they spin: volatile (which in GLSL implies
// coherent; both keywords decorate Coherent twice, which spirv-val refuses), so that every read
// goes to memory shared by all workgroups and is not hoisted out of the loop.
layout(std430, binding = 2) volatile buffer Aux { uint aux[]; };

const uint QUADS = ITEMS / 4u;          // quads per thread
const uint TILE = WG_SIZE * ITEMS;
const uint TILE_QUADS = TILE / 4u;

bool leader() { return gl_LocalInvocationIndex == 0u; }

// ---- global memory: quads of logical elements, REVERSE and alignment handled here ----------

// Physical index of logical element e of a row whose first element is at `base`.
uint phys(uint base, uint e) {
#ifdef REVERSE
    return base + p.len - 1u - e;
#else
    return base + e;
#endif
}

// Logical elements 4q..4q+3 of `row`; identity past the end of the row.
S4 load_quad(uint row, uint q) {
    uint base = p.in_off + row * p.len;
    uint e = 4u * q;
    if ((p.vec & 1u) != 0u && e + 4u <= p.len) {
#ifdef REVERSE
        return load_convert(in_v[(base + p.len - e) / 4u - 1u].wzyx);
#else
        return load_convert(in_v[(base + e) / 4u]);
#endif
    }
    S4 r = S4(IDENTITY);
    [[unroll]] for (uint c = 0u; c < 4u; ++c)
        if (e + c < p.len) r[c] = load_convert(in_s[phys(base, e + c)]);
    return r;
}

void store_quad(uint row, uint q, S4 v) {
    uint base = p.out_off + row * p.len;
    uint e = 4u * q;
    T4 t = store_convert(v);
    if ((p.vec & 2u) != 0u && e + 4u <= p.len) {
#ifdef REVERSE
        out_v[(base + p.len - e) / 4u - 1u] = t.wzyx;
#else
        out_v[(base + e) / 4u] = t;
#endif
        return;
    }
    [[unroll]] for (uint c = 0u; c < 4u; ++c)
        if (e + c < p.len) out_s[phys(base, e + c)] = t[c];
}

// ---- one tile ------------------------------------------------------------------------------

// The combination of tile `t` of `row`, in every invocation. Loads are striped over the
// workgroup (coalesced); the order of a reduction does not matter for these operators
// (float sums round differently, within the scan's tolerance).
S reduce_tile(uint row, uint t) {
    S acc = IDENTITY;
    bool neg_zeros = true;  // NEG_ZERO: this invocation's elements are all -0.0
    [[unroll]] for (uint k = 0u; k < QUADS; ++k) {
        S4 v = load_quad(row, t * TILE_QUADS + k * WG_SIZE + wg_rank());
        acc = COMBINE(acc, COMBINE(COMBINE(v.x, v.y), COMBINE(v.z, v.w)));
#ifdef NEG_ZERO
        neg_zeros = neg_zeros && is_neg_zero(v.x) && is_neg_zero(v.y) && is_neg_zero(v.z) && is_neg_zero(v.w);
#endif
    }
    S total = PASTE(wg_reduce_, OP)(acc);
#ifdef NEG_ZERO
    if (total == 0.0 && wg_reduce_min(uint(neg_zeros)) != 0u) total = IDENTITY;  // uniform test
#endif
    return total;
}

// Three layouts of a tile over the threads (a tunable, to measure per device):
// - STRIPED (needs subgroup arithmetic): each subgroup owns a contiguous run of the tile, QUADS
//   quads per lane; its k-th access is its lanes' consecutive quads (coalesced, as in a copy) and
//   the scan runs along the run with subgroup scans: no shared memory, no barriers.
// - STAGED: global memory is read and written in quads striped over the workgroup and the tile
//   passes through shared memory to change hands, so that each thread owns ITEMS consecutive
//   elements (in scan-rank order); one padding word per 32 keeps both patterns free of bank
//   conflicts for ITEMS = 4, 8 and 16.
// - blocked (neither): each thread loads and stores its own ITEMS / 4 consecutive quads directly;
//   each access of a subgroup is strided, which the caches may or may not absorb.
#if MODE != 1 && defined(STRIPED)
#ifndef HAS_SUBGROUP_ARITHMETIC
#error "the STRIPED layout needs subgroup arithmetic"
#endif
// This lane's first quad in the tile; its k-th is k * sg_active_lanes() further. Subgroups are
// numbered in scan order and all but the last are full (wg_rank's assumption); the last may have
// fewer lanes, so the stride is the active lane count and lanes are packed from 0.
uint striped_first() { return gl_SubgroupID * gl_SubgroupSize * QUADS + sg_packed_lane(); }

void load_tile(uint row, uint t, out S x[ITEMS]) {
    uint first = t * TILE_QUADS + striped_first();
    uint lanes = sg_active_lanes();
    [[unroll]] for (uint k = 0u; k < QUADS; ++k) {
        S4 v = load_quad(row, first + k * lanes);
        [[unroll]] for (uint c = 0u; c < 4u; ++c) x[4u * k + c] = v[c];
    }
}

void store_tile(uint row, uint t, S x[ITEMS]) {
    uint first = t * TILE_QUADS + striped_first();
    uint lanes = sg_active_lanes();
    [[unroll]] for (uint k = 0u; k < QUADS; ++k)
        store_quad(row, first + k * lanes, S4(x[4u * k], x[4u * k + 1u], x[4u * k + 2u], x[4u * k + 3u]));
}

// Position in the tile of this invocation's element j.
uint item_index(uint j) { return 4u * (striped_first() + (j / 4u) * sg_active_lanes()) + j % 4u; }

// Scans x in place along this subgroup's run (inclusive or exclusive per EXCLUSIVE); the
// subgroup's prefix in the tile goes to run_prefix. Returns the tile's aggregate.
S scan_tile(inout S x[ITEMS], out S run_prefix) {
    S carry = IDENTITY;  // the run so far, before quad k of every lane
    [[unroll]] for (uint k = 0u; k < QUADS; ++k) {
        S within[4];  // inclusive prefixes inside the quad
        within[0] = x[4u * k];
        [[unroll]] for (uint c = 1u; c < 4u; ++c) within[c] = COMBINE(within[c - 1u], x[4u * k + c]);
        S before = COMBINE(carry, PASTE(sg_exclusive_, OP)(within[3]));
        [[unroll]] for (uint c = 0u; c < 4u; ++c) {
#ifdef EXCLUSIVE
            x[4u * k + c] = c == 0u ? before : COMBINE(before, within[c - 1u]);
#else
            x[4u * k + c] = COMBINE(before, within[c]);
#endif
        }
        carry = COMBINE(carry, PASTE(sg_reduce_, OP)(within[3]));
    }
    // Only each subgroup's last lane brings its run's total: every lane's exclusive prefix is
    // then the combination of the runs before its subgroup's.
    S aggregate;
    run_prefix = PASTE(wg_exclusive_scan_, OP)(sg_last_lane() ? carry : IDENTITY, aggregate);
    return aggregate;
}
#elif MODE != 1 && defined(STAGED)
shared S stage[TILE + TILE / 32u];
uint padded(uint i) { return i + (i >> 5); }

void load_tile(uint row, uint t, out S x[ITEMS]) {
    uint r = wg_rank();
    [[unroll]] for (uint k = 0u; k < QUADS; ++k) {
        uint q = k * WG_SIZE + r;
        S4 v = load_quad(row, t * TILE_QUADS + q);
        [[unroll]] for (uint c = 0u; c < 4u; ++c) stage[padded(4u * q + c)] = v[c];
    }
    barrier();
    [[unroll]] for (uint j = 0u; j < ITEMS; ++j) x[j] = stage[padded(r * ITEMS + j)];
    barrier();  // stage is written again by store_tile
}

void store_tile(uint row, uint t, S x[ITEMS]) {
    uint r = wg_rank();
    [[unroll]] for (uint j = 0u; j < ITEMS; ++j) stage[padded(r * ITEMS + j)] = x[j];
    barrier();
    [[unroll]] for (uint k = 0u; k < QUADS; ++k) {
        uint q = k * WG_SIZE + r;
        uint i = 4u * q;
        store_quad(row, t * TILE_QUADS + q,
                   S4(stage[padded(i)], stage[padded(i + 1u)], stage[padded(i + 2u)], stage[padded(i + 3u)]));
    }
}
#endif
#if MODE != 1 && !defined(STRIPED)
uint item_index(uint j) { return wg_rank() * ITEMS + j; }  // STAGED and blocked alike
#endif
#if MODE != 1 && !defined(STRIPED) && !defined(STAGED)
void load_tile(uint row, uint t, out S x[ITEMS]) {
    uint first = t * TILE_QUADS + wg_rank() * QUADS;
    [[unroll]] for (uint k = 0u; k < QUADS; ++k) {
        S4 v = load_quad(row, first + k);
        [[unroll]] for (uint c = 0u; c < 4u; ++c) x[4u * k + c] = v[c];
    }
}

void store_tile(uint row, uint t, S x[ITEMS]) {
    uint first = t * TILE_QUADS + wg_rank() * QUADS;
    [[unroll]] for (uint k = 0u; k < QUADS; ++k)
        store_quad(row, first + k, S4(x[4u * k], x[4u * k + 1u], x[4u * k + 2u], x[4u * k + 3u]));
}
#endif

#if MODE != 1 && !defined(STRIPED)
// Scans x in place, within the tile: inclusive or exclusive per EXCLUSIVE, each element already
// combined with this thread's predecessors in the tile. Returns the tile's aggregate.
S scan_tile(inout S x[ITEMS], out S thread_prefix) {
    S run = IDENTITY;
    [[unroll]] for (uint j = 0u; j < ITEMS; ++j) {
        S before = run;
        run = COMBINE(run, x[j]);
#ifdef EXCLUSIVE
        x[j] = before;
#else
        x[j] = run;
#endif
    }
    S aggregate;
    thread_prefix = PASTE(wg_exclusive_scan_, OP)(run, aggregate);
    return aggregate;
}
#endif

// ---- float sums' -0.0 (NEG_ZERO) -------------------------------------------------------------
// numpy's cumsum keeps a leading -0.0. This file's IDENTITY is -0.0 (-0.0 + x is x for every x),
// but sums that pass through the subgroup intrinsics (lavapipe's start from +0.0) or
// lib/workgroup.glsl (identity +0.0) may pick up a +0.0, and +0.0 + -0.0 is +0.0. An added +0.0
// changes a sum only where its true value is -0.0, that is where every element it takes in is
// -0.0: in a row, the inclusive sums over its leading run of -0.0 (exclusive: up to and including
// the first other element). So a tile whose prefix is -0.0 (the row's first tile, or one after
// tiles of -0.0 only) writes -0.0 over that run, and a tile of -0.0 only publishes -0.0; all else
// comes out right. Only tiles that start with -0.0 pay for a workgroup reduction.
#if MODE != 1 && defined(NEG_ZERO)
// Elements of the tile before its first that is not -0.0 (TILE if none, the padding past a row's
// end counting as -0.0); 0 where the tile's first element is not -0.0, a uniform test (every
// invocation reads that element) that spares the other tiles the workgroup reduction.
uint neg_zero_run(uint row, uint t, S x[ITEMS]) {
    if (!is_neg_zero(load_convert(in_s[phys(p.in_off + row * p.len, t * TILE)]))) return 0u;
    uint first = TILE;
    [[unroll]] for (uint j = 0u; j < ITEMS; ++j) {
        uint at = item_index(j);  // outside the branch: STRIPED's counts the subgroup's lanes
        if (!is_neg_zero(x[j])) first = min(first, at);
    }
    return wg_reduce_min(first);
}

void keep_neg_zeros(inout S x[ITEMS], uint run) {
#ifdef EXCLUSIVE
    run += 1u;  // an exclusive sum takes in the elements before its own
#endif
    [[unroll]] for (uint j = 0u; j < ITEMS; ++j) {
        uint at = item_index(j);
        if (at < run) x[j] = IDENTITY;
    }
}
#endif

// ---- the chained scan's tile state ---------------------------------------------------------
// aux[aux_off]: the tile counter; aux[aux_off + 1]: how many fallbacks ran (a diagnostic);
// then two words per tile from aux_off + STATE_HEADER.
//
// A tile's state is a flag, EMPTY < AGGREGATE < PREFIX, and a 32-bit value: the tile's own
// combination, or the inclusive prefix of the row up to and including it. Without 64-bit atomics
// flag and value cannot share one word, so each of the two words holds the flag in bits 16..31
// and one half of the value in bits 0..15: a word is self-describing, and one atomic write
// publishes one half together with the flag it belongs to.
//  - The buffer outlives a scan: scan number `epoch` (since the buffer was zeroed) stores
//    AGGREGATE as 2 * epoch + 1 and PREFIX as 2 * epoch + 2, above every flag of earlier scans
//    (and the zeros), which thus read as EMPTY: no clearing dispatch before each scan. The tile
//    counter runs on across scans too; this scan's tiles count from `base`. (The host zeroes the
//    buffer again before the flags or the counter would overflow.)
//  - Only the tile's own workgroup writes its state: AGGREGATE once, then PREFIX once.
//    A stealing workgroup (the fallback) keeps what it computed to itself; were it to publish,
//    a float sum reduced in another order could differ in its low bits, and two writers'
//    halves could mix into a value neither computed.
//  - Writes are atomicMax: the flag sits above the value, so a word only ever moves to a later
//    flag, whatever order the two publications of a word land in.
//  - A reader accepts the state only when both words carry the same flag: one writer, one write
//    per flag and word, so equal flags mean both halves come from the same publication. Unequal
//    flags (a publication half done) read as EMPTY: wait, or fall back.
// Nothing else travels between workgroups through this state (the value is in the words that
// carry the flag), so no memory barrier is needed for correctness.
// S64: a 64-bit value takes four such words, all of which must carry the same flag.
const uint STATE_HEADER = 8u;  // the counter and the diagnostic on their own
const uint FLAG_EMPTY = 0u;      // this scan's flags, relative to 2 * epoch
const uint FLAG_AGGREGATE = 1u;
const uint FLAG_PREFIX = 2u;
#ifdef S64
const uint STATE_WORDS = 4u;
#else
const uint STATE_WORDS = 2u;
#endif

void publish(uint tile, uint flag, S value) {
#ifdef S64
    uvec2 w = WORDS64(S, value);
#else
    uint bits = to_bits(value);
#endif
    uint stored = (2u * p.epoch + flag) << 16;
    uint at = p.aux_off + STATE_HEADER + STATE_WORDS * tile;
#ifdef S64
    atomicMax(aux[at], stored | (w.x & 0xffffu));
    atomicMax(aux[at + 1u], stored | (w.x >> 16));
    atomicMax(aux[at + 2u], stored | (w.y & 0xffffu));
    atomicMax(aux[at + 3u], stored | (w.y >> 16));
#else
    atomicMax(aux[at], stored | (bits & 0xffffu));
    atomicMax(aux[at + 1u], stored | (bits >> 16));
#endif
}


// ---- the look-back ------------------------------------------------------------------------
// Why it must be wide: in steady state every workgroup that starts is about as many tiles behind
// the last published inclusive prefix as there are tiles in flight (hundreds on a big GPU), and
// it walks back over them at `window` states per round trip to L2 (~0.5 us for a coherent read
// under load). A walk of one state per round trip caps the scan at roughly one tile per round
// trip divided by the tiles it passes; a subgroup reading gl_SubgroupSize states at once makes
// the walk short enough that the scan is bandwidth-bound again.
//
// Walkers: with subgroup arithmetic (and without SERIAL_LOOKBACK) every lane of subgroup 0, each
// reading LOOKBACK states per round (window = lanes * LOOKBACK tiles; state i of the window, the
// tile j - i, is read by lane i % lanes); otherwise the leader alone, reading LOOKBACK states per
// round. Every walker holds the same j and prefix (subgroup-uniform results only).
#if defined(HAS_SUBGROUP_ARITHMETIC) && !defined(SERIAL_LOOKBACK)
bool walker() { return gl_SubgroupID == 0u; }
uint lb_lanes() { return sg_active_lanes(); }
uint lb_lane() { return sg_packed_lane(); }
uint lb_min(uint x) { return subgroupMin(x); }
S lb_combine_all(S x) {
    S r = PASTE(sg_reduce_, OP)(x);
#ifdef NEG_ZERO
    if (subgroupAnd(uint(is_neg_zero(x))) != 0u) r = IDENTITY;  // states of -0.0 only
#endif
    return r;
}
bool lb_writer() { return walker() && subgroupElect(); }
#else
bool walker() { return leader(); }
uint lb_lanes() { return 1u; }
uint lb_lane() { return 0u; }
uint lb_min(uint x) { return x; }
S lb_combine_all(S x) { return x; }
bool lb_writer() { return leader(); }
#endif

// Second view of the tile states: both words of a state in one 8-byte load when they are 8-byte
// aligned (aux_off even; a uniform branch), else two loads.
layout(std430, binding = 2) volatile buffer AuxPairs { uvec2 aux_pairs[]; };

#ifdef S64
uint read_state(uint tile, out S value) {
    uint at = p.aux_off + STATE_HEADER + STATE_WORDS * tile;
    uvec4 w;
    if ((p.aux_off & 1u) == 0u) {
        w = uvec4(aux_pairs[at >> 1], aux_pairs[(at >> 1) + 1u]);
    } else {
        w = uvec4(aux[at], aux[at + 1u], aux[at + 2u], aux[at + 3u]);
    }
    value = FROM_WORDS64(S, uvec2((w.y << 16) | (w.x & 0xffffu), (w.w << 16) | (w.z & 0xffffu)));
    uint flag = w.x >> 16;
    bool same = flag == (w.y >> 16) && flag == (w.z >> 16) && flag == (w.w >> 16);
    return same && flag > 2u * p.epoch ? flag - 2u * p.epoch : FLAG_EMPTY;
}
#else
uint read_state(uint tile, out S value) {
    uint at = p.aux_off + STATE_HEADER + 2u * tile;
    uint lo, hi;
    if ((p.aux_off & 1u) == 0u) {
        uvec2 w = aux_pairs[at >> 1];
        lo = w.x;
        hi = w.y;
    } else {
        lo = aux[at];
        hi = aux[at + 1u];
    }
    value = FROM_BITS(S, (hi << 16) | (lo & 0xffffu));
    uint flag = lo >> 16;
    return flag == (hi >> 16) && flag > 2u * p.epoch ? flag - 2u * p.epoch : FLAG_EMPTY;
}
#endif

// The walkers' part of the look-back: combines published predecessors into `prefix`, from tile
// j down, until one shows its inclusive prefix (true), or the tile at j has shown nothing for
// SPIN_LIMIT further rounds (false; j is that tile). Each round reads a window of states at once
// (independent loads in flight together) and finds the nearest one that is not a mere aggregate:
// a prefix ends the walk (everything up to it combined); an empty state stops the window short
// (everything before it combined, j moves onto it, and the next round waits there); a window of
// aggregates only is combined whole and the walk moves on. Every loop is bounded, and j and
// prefix change together, so even a loop cut short (lavapipe ends a shader's loops after 65535
// iterations in all) leaves a state the caller resumes with the fallback.
bool walk_back(uint first, inout uint j, inout S prefix) {
#ifdef FORCE_FALLBACK
    return false;
#endif
    uint lanes = lb_lanes();
    uint lane = lb_lane();
    uint window = lanes * LOOKBACK;
    uint spins = 0u;
    for (;;) {
        uint n = min(window, j - first + 1u);
        S values[LOOKBACK];
        uint stop = window;   // this walker's nearest state that ends the window (any flag but AGGREGATE)
        uint empty = window;  // ... and its nearest empty one
        [[unroll]] for (uint k = 0u; k < LOOKBACK; ++k) {
            uint i = k * lanes + lane;
            values[k] = IDENTITY;
            if (i < n) {
                uint flag = read_state(j - i, values[k]);
                // The row's first tile publishes its prefix at once; its aggregate is that prefix.
                if (flag != FLAG_AGGREGATE || j - i == first) stop = min(stop, i);
                if (flag == FLAG_EMPTY) empty = min(empty, i);
            }
        }
        stop = lb_min(stop);
        bool inclusive = stop < n && stop != lb_min(empty);
        uint take = stop >= n ? n : (inclusive ? stop + 1u : stop);  // states combined this round
        S part = IDENTITY;
        [[unroll]] for (uint k = 0u; k < LOOKBACK; ++k)
            if (k * lanes + lane < take) part = COMBINE(part, values[k]);
        if (take > 0u) {
            prefix = COMBINE(lb_combine_all(part), prefix);
            if (inclusive) return true;
            j -= take;
            spins = 0u;
        } else if (spins++ >= SPIN_LIMIT) {
            return false;  // the tile at j stays silent: the caller reduces it
        }
    }
    return false;
}

shared uint lb_done;
shared uint lb_tile;
#ifdef S64
shared S lb_prefix;
#define LB_PUT(x) lb_prefix = (x)
#define LB_GET() lb_prefix
#else
shared uint lb_prefix;
#define LB_PUT(x) lb_prefix = to_bits(x)
#define LB_GET() FROM_BITS(S, lb_prefix)
#endif

// The exclusive prefix of tile `tile` of `row`, which starts at tile `first` (< tile); publishes
// the tile's inclusive prefix (its aggregate combined in) as soon as it is known, before the
// barrier that hands the prefix to the workgroup. The walkers walk back; when a predecessor shows
// nothing, the whole workgroup reduces that tile from the input (the decoupled fallback) and the
// walkers walk on from the one before it. No workgroup ever waits unboundedly for another: each
// round either finishes or moves past one tile, and the row's first tile needs no predecessor. So
// the scan completes without any forward-progress guarantee between workgroups (a stalled or
// not-yet-running predecessor just costs a reduction).
S look_back(uint row, uint first, uint tile, S aggregate) {
    uint j = tile - 1u;
    S prefix = IDENTITY;  // the walkers'
    for (;;) {  // uniform: every decision comes through shared memory
        if (walker()) {
            bool done = walk_back(first, j, prefix);
            if (lb_writer()) {
                if (done) publish(tile, FLAG_PREFIX, COMBINE(prefix, aggregate));
                lb_done = done ? 1u : 0u;
                lb_tile = j;
                LB_PUT(prefix);
            }
        }
        barrier();
        if (lb_done != 0u) break;  // the usual way out: one barrier in all
        uint stuck = lb_tile;
        barrier();  // every invocation has read lb_* before the walkers write them again
        S agg = reduce_tile(row, stuck - first);
        if (walker()) prefix = COMBINE(agg, prefix);
        if (lb_writer()) atomicAdd(aux[p.aux_off + 1u], 1u);
        if (stuck == first) {  // the row's first tile: its aggregate is its prefix
            if (lb_writer()) {
                publish(tile, FLAG_PREFIX, COMBINE(prefix, aggregate));
                LB_PUT(prefix);
            }
            barrier();
            break;
        }
        j = stuck - 1u;
    }
    return LB_GET();  // written once before the last barrier, never again
}

shared uint tile_id;

// The chained scan numbers tiles by the order workgroups start, not by gl_WorkGroupID: every
// predecessor of a tile then belongs to a workgroup that has already started. STATIC_TILES takes
// gl_WorkGroupID instead, which saves the counter's round trip before the first load; a tile
// whose predecessor has not started yet is then covered by the fallback (correct on any device,
// fast where workgroups start in order).
uint acquire_tile() {
#if MODE == 2 && !defined(STATIC_TILES)
    if (leader()) tile_id = atomicAdd(aux[p.aux_off], 1u) - p.base;
    barrier();
    return tile_id;
#else
    return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
#endif
}

void main() {
    uint tile = acquire_tile();
    if (tile >= p.rows * p.tiles_per_row) return;  // the grid's spare workgroups
    uint row = tile / p.tiles_per_row;
    uint t = tile - row * p.tiles_per_row;
#if MODE == 1
    S total = reduce_tile(row, t);
    if (leader()) AUX_PUT(p.aux_off + tile, total);
#else
    S x[ITEMS];
    load_tile(row, t, x);
#ifdef NEG_ZERO
    uint run = neg_zero_run(row, t, x);
#endif
    S thread_prefix;
    S aggregate = scan_tile(x, thread_prefix);
#ifdef NEG_ZERO
    if (run >= TILE) aggregate = IDENTITY;
#endif
    S tile_prefix = IDENTITY;
#if MODE == 2
    if (leader()) publish(tile, t == 0u ? FLAG_PREFIX : FLAG_AGGREGATE, aggregate);
    if (t > 0u) {
        tile_prefix = look_back(row, tile - t, tile, aggregate);
    }
#elif defined(HAS_PREFIX)
    tile_prefix = AUX_GET(p.aux_off + tile);
#endif
    S before = COMBINE(tile_prefix, thread_prefix);
    [[unroll]] for (uint j = 0u; j < ITEMS; ++j) x[j] = COMBINE(before, x[j]);
#ifdef NEG_ZERO
    if (is_neg_zero(tile_prefix)) keep_neg_zeros(x, run);  // uniform: the workgroup's prefix
#endif
    store_tile(row, t, x);
#endif
}
