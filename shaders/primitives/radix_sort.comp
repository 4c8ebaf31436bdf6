#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "lib/workgroup.glsl"
#include "lib/sort_keys.glsl"
// @variants UPSWEEP ITEMS=4|8 ?KEY64
// @variants DOWNSWEEP ITEMS=4|8 ?PAIRS ?KEY64
// One pass of an LSD radix sort of 32-bit words (KEY64: of 64-bit elements, word pairs) by an
// 8-bit digit (stable), with 32-bit values (PAIRS). Tiles of TILE = WG_SIZE * ITEMS elements; workgroup b handles the block of
// `tiles_per_block` consecutive tiles starting at tile b * tiles_per_block. A pass is:
//   UPSWEEP    hist[d * blocks + b] = the elements of block b whose digit is d
//   (the host) an exclusive scan of hist (scan.comp): where block b's first digit-d element goes
//   DOWNSWEEP  tile by tile, in order: rank the tile's elements stably by digit, put them in rank
//              order in shared memory, then write them out (consecutive invocations, consecutive
//              places within a digit's run) and advance the block's per-digit places.
// Ranking with subgroup ballot (MATCH): each subgroup owns a contiguous run of the tile, its lanes
// ITEMS strided elements each; per element, 8 ballots find the lanes holding the same digit, and
// the lowest of them bumps the subgroup's counter for it; one workgroup scan of the (digit,
// subgroup) counters gives each element its place; with values, keys and values take the one
// tile array in turn. Without ballot: 8 stable one-bit splits of the tile through shared memory,
// a workgroup scan each (as radix sorts did before ballots), keys and values side by side.
// Elements past the end take the largest digit: a stable ranking leaves them last in the tile.
//
// The digit: bits [shift, shift + 8) of sort_key(word) (lib/sort_keys.glsl; inverted when
// descending; KEY64: of sort_key64's 64-bit key, shift < 64), or with ROW_DIGIT of value /
// row_len: the rows of a segmented sort, sorted last.
// Bindings: 0 keys in, 1 keys out, 2 values in, 3 values out, 4 hist (UPSWEEP: written;
//   DOWNSWEEP: the scanned offsets). Offsets in words.
#ifndef ITEMS
#define ITEMS 8
#endif
#if !defined(UPSWEEP) && !defined(DOWNSWEEP)
#define UPSWEEP 1  // the defaults make the file compile on its own
#endif
#if defined(DOWNSWEEP) && defined(HAS_SUBGROUP_BALLOT)
#define MATCH 1
#endif
layout(push_constant) uniform Push {
    uint n; uint blocks; uint tiles_per_block;
    uint key_in; uint key_out; uint val_in; uint val_out; uint hist;
    uint mode; uint shift; uint row_len;
} p;

// p.mode: bits 0-1 the key type (KEY_*), then these flags
const uint DESCENDING = 4u;
const uint ROW_DIGIT = 8u;     // the digit is of the value's row, value / row_len
const uint IOTA = 16u;         // the values are the elements' positions (a first pass)
const uint WRITE_KEYS = 32u;
const uint WRITE_VALUES = 64u;
const uint COLUMN = 128u;      // values are written as value % row_len (argsort of rows)

layout(std430, binding = 0) restrict readonly buffer KeysIn { uint keys_in[]; };
layout(std430, binding = 1) writeonly buffer KeysOut { uint keys_out[]; };
layout(std430, binding = 2) readonly buffer ValsIn { uint vals_in[]; };
layout(std430, binding = 3) writeonly buffer ValsOut { uint vals_out[]; };
layout(std430, binding = 4) buffer Hist { uint hist[]; };

const uint RADIX_BITS = 8u;
const uint RADIX = 256u;
const uint TILE = WG_SIZE * ITEMS;

bool has(uint flag) { return (p.mode & flag) != 0u; }

#ifdef KEY64
#define KEY uvec2  // an element's (low, high) words
KEY load_key(uint e) { return uvec2(keys_in[p.key_in + 2u * e], keys_in[p.key_in + 2u * e + 1u]); }
void store_key(uint at, KEY key) {
    keys_out[p.key_out + 2u * at] = key.x;
    keys_out[p.key_out + 2u * at + 1u] = key.y;
}

uint digit_of(KEY key, uint val) {
    uint k;
    if (has(ROW_DIGIT)) {
        k = val / p.row_len;
    } else {
        uvec2 k2 = sort_key64(key, p.mode & 3u);
        k = (p.shift >= 32u ? k2.y : k2.x) ^ (has(DESCENDING) ? 0xffffffffu : 0u);
    }
    return (k >> (p.shift & 31u)) & (RADIX - 1u);
}
#else
#define KEY uint
KEY load_key(uint e) { return keys_in[p.key_in + e]; }
void store_key(uint at, KEY key) { keys_out[p.key_out + at] = key; }

uint digit_of(uint key, uint val) {
    uint k = has(ROW_DIGIT) ? val / p.row_len
                            : sort_key(key, p.mode & 3u) ^ (has(DESCENDING) ? 0xffffffffu : 0u);
    return (k >> p.shift) & (RADIX - 1u);
}
#endif

uint value_at(uint e) { return has(IOTA) ? e : vals_in[p.val_in + e]; }

uint block_id() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

#ifdef UPSWEEP
shared uint counts[RADIX];

void main() {
    uint block = block_id();
    if (block >= p.blocks) return;  // the grid's spare workgroups
    uint lid = gl_LocalInvocationIndex;
    for (uint d = lid; d < RADIX; d += WG_SIZE) counts[d] = 0u;
    barrier();
    uint first = block * p.tiles_per_block * TILE;
    uint end = min(first + p.tiles_per_block * TILE, p.n);
    for (uint base = first; base < end; base += TILE) {
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
            uint e = base + k * WG_SIZE + lid;
            if (e < end) atomicAdd(counts[digit_of(load_key(e), has(ROW_DIGIT) ? value_at(e) : 0u)], 1u);
        }
    }
    barrier();
    for (uint d = lid; d < RADIX; d += WG_SIZE) hist[p.hist + d * p.blocks + block] = counts[d];
}
#else

shared KEY tile_keys[TILE];  // the tile in rank order (MATCH with PAIRS: keys, then values)
#if defined(PAIRS) && !defined(MATCH)
shared uint tile_vals[TILE];
#endif
shared uint digit_next[RADIX];  // where the block's next element of each digit goes
shared uint tile_start[RADIX];  // each digit's first rank in the tile
shared uint tile_count[RADIX];

// This invocation's run of digits for the per-digit loops whose order matters: wg_rank order, the
// order of wg_exclusive_scan_add.
uint digits_per_thread() { return (RADIX + WG_SIZE - 1u) / WG_SIZE; }

void put_ranked(uint at, KEY key, uint val) {
    tile_keys[at] = key;
#if defined(PAIRS) && !defined(MATCH)
    tile_vals[at] = val;
#endif
}

#ifdef KEY64
uint value_of(KEY slot) { return slot.x; }  // a value held in a tile slot
#else
uint value_of(KEY slot) { return slot; }
#endif

// Writes the value of the element that goes to `at` (argsort of rows: its column), if asked.
void store_value(uint at, uint val) {
    if (has(WRITE_VALUES)) vals_out[p.val_out + at] = has(COLUMN) ? val % p.row_len : val;
}

#ifdef MATCH
// Per (subgroup, digit): counts, then exclusive prefixes, 16 bits each (a tile holds fewer than
// 65536 elements): subgroup s in half s / COUNT_ROWS of word (s % COUNT_ROWS) * RADIX + digit,
// so that the two halves of a word belong to one digit (one invocation's in the scan). Half the
// shared memory of a word each: a workgroup's shared memory caps how many run on a multiprocessor.
const uint COUNT_ROWS = (SUBGROUP_SLOTS + 1u) / 2u;
shared uint sg_counts[COUNT_ROWS * RADIX];

uint count_word(uint s, uint d) { return (s % COUNT_ROWS) * RADIX + d; }
uint count_shift(uint s) { return s < COUNT_ROWS ? 0u : 16u; }
uint get_count(uint s, uint d) { return (sg_counts[count_word(s, d)] >> count_shift(s)) & 0xffffu; }

// Tile element k of this lane: the subgroup's run starts after the full subgroups before it;
// strided by the active lanes, so a partial last subgroup covers the rest of the tile exactly.
uint item_pos(uint k) {
    if (WG_SIZE % gl_SubgroupSize == 0u)  // every subgroup full: affine addresses, cheaper than ballots
        return (gl_SubgroupID * ITEMS + k) * gl_SubgroupSize + gl_SubgroupInvocationID;
    uvec4 lanes = subgroupBallot(true);
    return gl_SubgroupID * gl_SubgroupSize * ITEMS + k * subgroupBallotBitCount(lanes)
           + subgroupBallotExclusiveBitCount(lanes);
}

// Tile element k's digit, its key waiting in tile_keys in load order (a row digit: of its value).
uint loaded_digit(uint k, uint base, uint end) {
    uint i = item_pos(k);
    if (base + i >= end) return RADIX - 1u;
#ifdef PAIRS
    if (has(ROW_DIGIT)) return digit_of(KEY(0u), value_at(base + i));
#endif
    return digit_of(tile_keys[i], 0u);
}

// Loads the tile (elements base.. of the block, which ends at `end`), ranks it (rank[k]: element
// item_pos(k)'s place), fills tile_start / tile_count, and places the digits' source in tile_keys
// in rank order: the keys, or a row digit's values (PAIRS: the other payload follows, main()).
// The keys wait in tile_keys in load order while they are ranked, not in registers: fewer
// registers, more workgroups per multiprocessor; one tile array for keys and values, so that a
// tile of 2048 pairs takes the shared memory of 2048 keys. Digits are recomputed where needed
// (kept in shared memory instead, the H200 took longer: docs/bench/2026-11-26/h200-session19-sort-*).
void rank_tile(uint base, uint end, out uint rank[ITEMS]) {
    uint ns = num_subgroups();
    for (uint i = gl_LocalInvocationIndex; i < COUNT_ROWS * RADIX; i += WG_SIZE) sg_counts[i] = 0u;
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {  // each invocation reads back only its own
        uint i = item_pos(k), e = base + i;
        tile_keys[i] = e < end ? load_key(e) : KEY(0u);
    }
    barrier();
    uint sg = gl_SubgroupID, shift = count_shift(sg);
    uvec4 lanes = subgroupBallot(true);
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
        uint d = loaded_digit(k, base, end);
        uvec4 peers = lanes;  // the lanes whose digit is d
        [[unroll]] for (uint b = 0u; b < RADIX_BITS; ++b) {
            bool set = ((d >> b) & 1u) != 0u;
            uvec4 m = subgroupBallot(set);
            peers &= set ? m : ~m;
        }
        uint below = subgroupBallotExclusiveBitCount(peers);
        uint before = get_count(sg, d);
        subgroupBarrier();  // every lane has read its counter before the lowest peer bumps it
        // atomic: another subgroup's counter shares the word (no carry: counts stay < 65536)
        if (below == 0u) atomicAdd(sg_counts[count_word(sg, d)], subgroupBallotBitCount(peers) << shift);
        subgroupBarrier();
        rank[k] = before + below;
    }
    barrier();
    // Exclusive scan of the counters in (digit, subgroup) order: each invocation a run of digits.
    uint dpt = digits_per_thread();
    uint d0 = min(wg_rank() * dpt, RADIX), d1 = min(d0 + dpt, RADIX);
    uint run = 0u;
    for (uint d = d0; d < d1; ++d)
        for (uint s = 0u; s < ns; ++s) run += get_count(s, d);
    uint total;
    uint at = wg_exclusive_scan_add(run, total);
    for (uint d = d0; d < d1; ++d) {  // this invocation owns both halves of digit d's words
        tile_start[d] = at;
        for (uint s = 0u; s < ns; ++s) {
            uint w = count_word(s, d), sh = count_shift(s), word = sg_counts[w];
            sg_counts[w] = (word & ~(0xffffu << sh)) | (at << sh);
            at += (word >> sh) & 0xffffu;
        }
        tile_count[d] = at - tile_start[d];
    }
    barrier();
    // Every element's place, then (once every invocation holds its own) the moves.
    KEY keys[ITEMS];
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
        rank[k] += get_count(sg, loaded_digit(k, base, end));
        keys[k] = tile_keys[item_pos(k)];
#ifdef PAIRS
        uint e = base + item_pos(k);
        if (has(ROW_DIGIT)) keys[k] = KEY(e < end ? value_at(e) : 0u);
#endif
    }
    barrier();
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) tile_keys[rank[k]] = keys[k];
    barrier();
}

#else  // shared-memory fallback: one-bit splits

uint item_pos(uint k) { return wg_rank() * ITEMS + k; }  // blocked: ITEMS consecutive elements

void rank_tile(KEY keys[ITEMS], uint vals[ITEMS], uint digits[ITEMS], uint valid) {
    uint r = wg_rank();
    for (uint d = gl_LocalInvocationIndex; d < RADIX; d += WG_SIZE) tile_count[d] = 0u;
    barrier();
    [[unroll]] for (uint k = 0u; k < ITEMS; ++k) atomicAdd(tile_count[digits[k]], 1u);
    for (uint b = 0u; b < RADIX_BITS; ++b) {
        // Stable split by bit b: zeros first, each side in its current order.
        uint zeros = 0u;
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) zeros += ((digits[k] >> b) & 1u) ^ 1u;
        uint all_zeros;
        uint z = wg_exclusive_scan_add(zeros, all_zeros);
        uint o = all_zeros + r * ITEMS - z;  // ones before this invocation's go after every zero
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
            bool one = ((digits[k] >> b) & 1u) != 0u;
            put_ranked(one ? o : z, keys[k], vals[k]);
            o += one ? 1u : 0u;
            z += one ? 0u : 1u;
        }
        barrier();
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
            keys[k] = tile_keys[r * ITEMS + k];
#ifdef PAIRS
            vals[k] = tile_vals[r * ITEMS + k];
#endif
            digits[k] = r * ITEMS + k < valid ? digit_of(keys[k], vals[k]) : RADIX - 1u;
        }
        barrier();
    }
    // tile_start: exclusive scan of tile_count, each invocation a run of digits.
    uint dpt = digits_per_thread();
    uint d0 = min(r * dpt, RADIX), d1 = min(d0 + dpt, RADIX);
    uint run = 0u;
    for (uint d = d0; d < d1; ++d) run += tile_count[d];
    uint total;
    uint at = wg_exclusive_scan_add(run, total);
    for (uint d = d0; d < d1; ++d) {
        tile_start[d] = at;
        at += tile_count[d];
    }
    barrier();
}
#endif

void main() {
    uint block = block_id();
    if (block >= p.blocks) return;  // the grid's spare workgroups
    uint lid = gl_LocalInvocationIndex;
    for (uint d = lid; d < RADIX; d += WG_SIZE) digit_next[d] = hist[p.hist + d * p.blocks + block];
    barrier();
    uint first = block * p.tiles_per_block * TILE;
    uint end = min(first + p.tiles_per_block * TILE, p.n);
    for (uint base = first; base < end; base += TILE) {
        uint valid = min(TILE, end - base);  // the tile's elements
#ifdef MATCH
        uint rank[ITEMS];
        rank_tile(base, end, rank);
#ifdef PAIRS
        // The digits' source (keys, or a row digit's values) first, each slot's place kept for the
        // other payload, which takes the tile next.
        bool row = has(ROW_DIGIT);
        uint ats[ITEMS];
#endif
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
            uint i = k * WG_SIZE + lid;
            if (i < valid) {
                KEY slot = tile_keys[i];
#ifdef PAIRS
                uint d = row ? digit_of(KEY(0u), value_of(slot)) : digit_of(slot, 0u);
#else
                uint d = digit_of(slot, 0u);
#endif
                uint at = digit_next[d] + i - tile_start[d];
#ifdef PAIRS
                ats[k] = at;
                if (row) {
                    store_value(at, value_of(slot));
                    continue;
                }
#endif
                if (has(WRITE_KEYS)) store_key(at, slot);
            }
        }
#ifdef PAIRS
        barrier();  // every slot read above before the tile takes the other payload
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
            uint e = base + item_pos(k);
            if (e < end) tile_keys[rank[k]] = row ? load_key(e) : KEY(value_at(e));
        }
        barrier();
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
            uint i = k * WG_SIZE + lid;
            if (i < valid) {
                KEY slot = tile_keys[i];
                if (!row) {
                    store_value(ats[k], value_of(slot));
                } else if (has(WRITE_KEYS)) {
                    store_key(ats[k], slot);
                }
            }
        }
#endif
#else
        KEY keys[ITEMS];
        uint vals[ITEMS], digits[ITEMS];
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
            uint e = base + item_pos(k);
            keys[k] = e < end ? load_key(e) : KEY(0u);
#ifdef PAIRS
            vals[k] = e < end ? value_at(e) : 0u;
#else
            vals[k] = 0u;
#endif
            digits[k] = e < end ? digit_of(keys[k], vals[k]) : RADIX - 1u;
        }
        rank_tile(keys, vals, digits, valid);
        [[unroll]] for (uint k = 0u; k < ITEMS; ++k) {
            uint i = k * WG_SIZE + lid;
            if (i < valid) {
                KEY key = tile_keys[i];
#ifdef PAIRS
                uint val = tile_vals[i];
#else
                uint val = 0u;
#endif
                uint d = digit_of(key, val);
                uint at = digit_next[d] + i - tile_start[d];
                if (has(WRITE_KEYS)) store_key(at, key);
                store_value(at, val);
            }
        }
#endif
        barrier();  // digit_next and the tile are read above before they change
        for (uint d = lid; d < RADIX; d += WG_SIZE) digit_next[d] += tile_count[d];
        barrier();
    }
}
#endif
