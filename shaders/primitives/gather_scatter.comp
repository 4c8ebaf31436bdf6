#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
#include "lib/common.glsl"
#include "lib/ops.glsl"
// @variants OP_GATHER|OP_CLAIM|OP_SCATTER RANK=1|3 ?IDX_SIGNED
// @variants OP_GATHER MODE_WRAP|MODE_CLIP RANK=2 ?IDX_SIGNED
// @variants OP_SCATTER LAST_WINS RANK=2 IDX_SIGNED
// @variants OP_SCATTER_ADD T=float T_IS_FLOAT RANK=1|3 ?IDX_SIGNED
// @variants OP_SCATTER_ADD T=int|uint RANK=2 IDX_SIGNED
// @variants OP_SCATTER_ADD_ORDERED T=float RANK=1|3 ?IDX_SIGNED
// @variants OP_SCATTER_ADD_ORDERED T=double|int64_t|uint64_t T64 VK_WIDE VK_MATH64 RANK=1|3 ?IDX_SIGNED
// @variants OP_CLAIM|OP_SCATTER MODE_WRAP|MODE_CLIP RANK=1 IDX_SIGNED
// @variants OP_GATHER|OP_SCATTER CHECK RANK=2 ?IDX_SIGNED
// @variants OP_SCATTER LAST_WINS CHECK RANK=1 IDX_SIGNED
// @variants OP_SCATTER_ADD T=float T_IS_FLOAT CHECK RANK=1 IDX_SIGNED
// @variants OP_SCATTER_ADD_ORDERED T=float CHECK RANK=2 IDX_SIGNED
// @variants OP_FLAG_VALUE
// @variants OP_GATHER WINDOWED RANK=1|2 ?IDX_SIGNED
// @variants OP_GATHER WINDOWED MODE_WRAP|MODE_CLIP RANK=1 IDX_SIGNED
// @variants OP_GATHER WINDOWED CHECK RANK=2 IDX_SIGNED
// @variants OP_GATHER WINDOWED NO_INDEX RANK=1|2|3
// @variants OP_CLAIM|OP_SCATTER WINDOWED RANK=1|2 ?IDX_SIGNED
// @variants OP_SCATTER LAST_WINS WINDOWED RANK=1|2 ?IDX_SIGNED
// @variants OP_SCATTER WINDOWED NO_INDEX RANK=1|2|3
// @variants OP_SCATTER_ADD T=float T_IS_FLOAT WINDOWED RANK=1|2 IDX_SIGNED
// Indexed copies along one axis: take, take_along_axis, put, put_along_axis, scatter_add, fancy
// getitem.
//
// One invocation per element of an iteration space of RANK (collapsed) dims, C order. Three
// operands walk it, each with its own signed element strides (0 where broadcast):
//   D  "direct": the output of a gather, the values of a scatter
//   I  the indices (int32 or uint32)
//   B  "base": the gather source / scatter destination, addressed as
//      pos_B = off_B + sum(c_d * sB_d) + index * axis_stride,  index = I[pos_I] normalized.
// Ops (one define):
//   OP_GATHER        D[pos_D] = B[pos_B]
//   OP_CLAIM         atomicMax(W[pos_B - off_B], i + 1): the last iteration (C order) targeting an
//                    element wins, which makes OP_SCATTER's duplicates deterministic, like numpy
//   OP_SCATTER       B[pos_B] = D[pos_D]; with LAST_WINS only where W[pos_B - off_B] == i + 1
//   OP_SCATTER_ADD   B[pos_B] += D[pos_D] atomically (T float: compare-and-swap on the bits, since
//                    float atomics need VK_EXT_shader_atomic_float; int/uint: atomicAdd)
//   OP_SCATTER_ADD_ORDERED  deterministic scatter-add without atomics or sorting: the iteration
//                    space is the destination; each element sums, in index order, the contributions
//                    of its fiber that target it: W[off_W + rel] = B[off_B + rel] + sum D[...]
//                    with rel = sum(c_d * sB_d). O(axis_len * M) work per fiber.
// Index normalization (host indices arrive normalized; device-resident ones are used as they are):
//   default (numpy mode='raise'): negative indices count from the end; what is still out of range
//     is clamped by gathers and dropped by scatters (never an out-of-bounds access);
//   MODE_WRAP: modulo axis_len; MODE_CLIP: clamped to [0, axis_len) (negatives too, as numpy).
// CHECK (the checked mode of mode='raise', reported by the host at the next sync): F[0] keeps the
//   smallest position in I of an index mode='raise' refuses (atomicMin; all ones: none), and
//   OP_FLAG_VALUE, one invocation dispatched after the op, copies I[F[0]] into F[1].
// WINDOWED (OP_GATHER; primitives/windows.py): some buffer is bound as a window of one larger than
//   a shader may bind, and every offset is relative to what is bound. B may be bound as a window
//   that holds only part of what the gather reads (B_AT: where that part starts in it, B_COUNT:
//   its words); off_B is then relative to the part's start, positions are computed modulo 2**32
//   (exact: a buffer holds fewer than 2**32 words) and an element whose position falls outside
//   [0, B_COUNT) is left to another dispatch (each element is written by exactly one). Indices
//   are normalized in unsigned arithmetic, exact for axes of up to 2**32 - 1.
//   The scatters (OP_CLAIM, OP_SCATTER, OP_SCATTER_ADD) take WINDOWED the same way: B's part
//   holds the destination positions [0, B_COUNT) of this dispatch, and an element whose position
//   falls outside it is skipped (another dispatch writes it). W (the claim words) is addressed
//   W_AT + rel, and the claim number is the element's C-order rank in the whole iteration space,
//   R_OFF + sum(c_d * sR_d) (a dispatch covers a box of it), so that the last write wins across
//   dispatches too.
// NO_INDEX (with WINDOWED): no index operand (I is a dummy binding): a strided copy D = B (or,
//   OP_SCATTER, B = D).
// Defines: OP_*, RANK (>= 1), IDX_SIGNED (int32 indices), T (scatter-add element type), MODE_*,
//   CHECK, WINDOWED, NO_INDEX; T_MOVE (OP_GATHER, OP_SCATTER, not WINDOWED): the type D and B's
//   elements move as, bits (primitives/moves.py: uint8_t, uint16_t, uvec2; default uint).
// Bindings: 0 D, 1 I, 2 B, 3 W (claim words or the ordered output; a dummy otherwise), 4 F (CHECK).
// Push words: n, axis_len, axis_stride (ORDERED: M, the contributions per fiber), off_D, off_I,
//   off_B, shape[RANK], sD[RANK], sI[RANK], sB[RANK]; ORDERED adds off_W, I axis stride,
//   D axis stride, the collapsed dim that is the axis; WINDOWED adds B_AT, B_COUNT (scatters:
//   then W_AT, R_OFF, sR[RANK]).
#if !defined(OP_GATHER) && !defined(OP_CLAIM) && !defined(OP_SCATTER) && !defined(OP_SCATTER_ADD) \
    && !defined(OP_SCATTER_ADD_ORDERED) && !defined(OP_FLAG_VALUE)
#define OP_GATHER 1  // the default makes the file compile on its own
#endif
#ifndef RANK
#define RANK 1
#endif
#ifdef OP_SCATTER_ADD_ORDERED
#define EXTRA 4
#elif defined(WINDOWED) && defined(OP_GATHER)
#define EXTRA 2
#elif defined(WINDOWED)
#define EXTRA (4 + RANK)
#else
#define EXTRA 0
#endif
#define HEAD 6
#define EXTRA_AT (HEAD + 4 * RANK)
layout(push_constant) uniform Push { uint w[HEAD + 4 * RANK + EXTRA]; } p;

#ifndef T_MOVE
#define T_MOVE uint
#endif
layout(std430, binding = 0) buffer Direct { T_MOVE d_[]; };
layout(std430, binding = 1) readonly buffer Indices { uint i_[]; };
layout(std430, binding = 2) buffer Base { T_MOVE b_[]; };
layout(std430, binding = 3) buffer Claim { uint w_[]; };
#ifdef OP_FLAG_VALUE
#define CHECK 1
#endif
#ifdef CHECK
layout(std430, binding = 4) buffer Flags { uint f_[]; };
#endif

// The checked mode notes where mode='raise' would have raised; elsewhere this is nothing.
void note_bad(bool ok, int pos) {
#ifdef CHECK
    if (!ok) atomicMin(f_[0], uint(pos));
#endif
}

int stride(uint operand, int k) { return int(p.w[HEAD + RANK * (1u + operand) + uint(k)]); }

// Positions of iteration element i in D, I and B (B without the indexed axis); coordinate of the
// collapsed dim `axis_dim` (ORDERED only; -1 elsewhere).
void positions(uint i, int axis_dim, out int pd, out int pi, out int pb, out uint axis_coord) {
    pd = int(p.w[3]);
    pi = int(p.w[4]);
    pb = int(p.w[5]);
    axis_coord = 0u;
    [[unroll]] for (int k = RANK - 1; k >= 0; --k) {
        uint extent = p.w[HEAD + k];
        uint c = i % extent;
        i /= extent;
        if (k == axis_dim) axis_coord = c;
        pd += int(c) * stride(0u, k);
        pi += int(c) * stride(1u, k);
        pb += int(c) * stride(2u, k);
    }
}

#if defined(WINDOWED) && !defined(OP_GATHER)
// The C-order rank of iteration element i (of this dispatch's box) in the whole iteration space.
uint claim_rank(uint i) {
    uint r = p.w[EXTRA_AT + 3];
    [[unroll]] for (int k = RANK - 1; k >= 0; --k) {
        uint extent = p.w[HEAD + k];
        r += (i % extent) * p.w[EXTRA_AT + 4 + k];
        i /= extent;
    }
    return r;
}
#endif

// The index at I[pos] as a position in [0, n); ok = false where numpy's mode='raise' would raise.
uint normalize_index(int pos, uint n, out bool ok) {
    uint raw = i_[pos];
    ok = true;
#ifdef IDX_SIGNED
    int v = int(raw);
#if defined(WINDOWED) && !defined(MODE_WRAP)
    // n may pass 2**31: unsigned arithmetic (v + n for negative v is n - |v|, modulo 2**32)
    uint mag = v >= 0 ? uint(v) : 0u - uint(v);
#if defined(MODE_CLIP)
    return v < 0 ? 0u : min(mag, n - 1u);
#else
    ok = v >= 0 ? mag < n : mag <= n;
    return v >= 0 ? min(mag, n - 1u) : (ok ? n - mag : 0u);
#endif
#elif defined(MODE_WRAP)
    // GLSL leaves % of negative operands undefined: reduce the magnitude, then reflect.
    uint r = (v >= 0 ? uint(v) : 0u - uint(v)) % n;
    return (v >= 0 || r == 0u) ? r : n - r;
#elif defined(MODE_CLIP)
    return uint(clamp(v, 0, int(n) - 1));
#else
    if (v < 0) v += int(n);
    ok = v >= 0 && v < int(n);
    return uint(clamp(v, 0, int(n) - 1));
#endif
#else
#if defined(MODE_WRAP)
    return raw % n;
#elif !defined(MODE_CLIP)
    ok = raw < n;
#endif
    return min(raw, n - 1u);
#endif
}

#ifdef T
// Elements of T in a buffer of words: T64 (64-bit T, OP_SCATTER_ADD_ORDERED) as pairs (low, high).
#ifdef T64
#define LOAD_T(buf, pos) FROM_BITS(T, uvec2(buf[2u * uint(pos)], buf[2u * uint(pos) + 1u]))
#define STORE_T(buf, pos, v) { uint64_t bits_ = PASTE(bits64_, T)(v); \
    buf[2u * uint(pos)] = uint(bits_); buf[2u * uint(pos) + 1u] = uint(bits_ >> 32); }
uint64_t bits64_double(double x) { uvec2 w = unpackDouble2x32(x); return (uint64_t(w.y) << 32) | uint64_t(w.x); }
uint64_t bits64_int64_t(int64_t x) { return uint64_t(x); }
uint64_t bits64_uint64_t(uint64_t x) { return x; }
#else
T load_t(uint bits) { return FROM_BITS(T, bits); }
#define LOAD_T(buf, pos) load_t(buf[pos])
#define STORE_T(buf, pos, v) buf[pos] = to_bits(v);

void atomic_add_bits(uint pos, T v) {
#if defined(T_IS_FLOAT)
    uint old = b_[pos];
    for (;;) {
        uint assumed = old;
        old = atomicCompSwap(b_[pos], assumed, floatBitsToUint(uintBitsToFloat(assumed) + v));
        if (old == assumed) break;
    }
#else
    atomicAdd(b_[pos], uint(v));
#endif
}
#endif
#endif

#ifdef OP_FLAG_VALUE
void main() {
    if (gl_GlobalInvocationID.x == 0u && f_[0] != 0xFFFFFFFFu) f_[1] = i_[f_[0]];
}
#else
void main() {
    uint n = p.w[0];
    uint axis_len = p.w[1];
#ifdef OP_SCATTER_ADD_ORDERED
    uint m = p.w[2];
    uint off_w = p.w[EXTRA_AT];
    int i_axis_stride = int(p.w[EXTRA_AT + 1]);
    int d_axis_stride = int(p.w[EXTRA_AT + 2]);
    int axis_dim = int(p.w[EXTRA_AT + 3]);
#else
    int axis_stride = int(p.w[2]);
    const int axis_dim = -1;
#endif
    GRID_STRIDE_LOOP(i, n) {
        int pd, pi, pb;
        uint target;
        positions(i, axis_dim, pd, pi, pb, target);
#ifdef OP_SCATTER_ADD_ORDERED
        int rel = pb - int(p.w[5]);
        T acc = LOAD_T(b_, pb);
        for (uint j = 0u; j < m; ++j) {
            bool ok;
            int at = pi + int(j) * i_axis_stride;
            uint idx = normalize_index(at, axis_len, ok);
            note_bad(ok, at);
            if (ok && idx == target) acc += LOAD_T(d_, pd + int(j) * d_axis_stride);
        }
        STORE_T(w_, int(off_w) + rel, acc)
#else
#ifdef NO_INDEX
        bool ok = true;
        uint idx = 0u;
#else
        bool ok;
        uint idx = normalize_index(pi, axis_len, ok);
        note_bad(ok, pi);
#endif
        pb += int(idx) * axis_stride;
#if defined(OP_GATHER) && defined(WINDOWED)
        uint rel = uint(pb);  // relative to B's part, modulo 2**32: past it when outside
        if (rel < p.w[EXTRA_AT + 1]) d_[pd] = b_[rel + p.w[EXTRA_AT]];
#elif defined(OP_GATHER)
        d_[pd] = b_[pb];
#elif defined(WINDOWED)
        uint rel = uint(pb);  // relative to B's part, modulo 2**32: past it when outside
        ok = ok && rel < p.w[EXTRA_AT + 1];
#if defined(OP_CLAIM)
        if (ok) atomicMax(w_[p.w[EXTRA_AT + 2] + rel], claim_rank(i) + 1u);
#elif defined(OP_SCATTER)
#ifdef LAST_WINS
        ok = ok && w_[p.w[EXTRA_AT + 2] + rel] == claim_rank(i) + 1u;
#endif
        if (ok) b_[p.w[EXTRA_AT] + rel] = d_[pd];
#elif defined(OP_SCATTER_ADD)
        if (ok) atomic_add_bits(p.w[EXTRA_AT] + rel, load_t(d_[pd]));
#else
#error "WINDOWED: gathers and scatters only"
#endif
#elif defined(OP_CLAIM)
        if (ok) atomicMax(w_[pb - int(p.w[5])], i + 1u);
#elif defined(OP_SCATTER)
#ifdef LAST_WINS
        ok = ok && w_[pb - int(p.w[5])] == i + 1u;
#endif
        if (ok) b_[pb] = d_[pd];
#elif defined(OP_SCATTER_ADD)
        if (ok) atomic_add_bits(uint(pb), load_t(d_[pd]));
#else
#error "unknown OP_ define"
#endif
#endif
    }
}
#endif
