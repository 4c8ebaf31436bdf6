// Subgroup level: reduce / inclusive and exclusive scan over the active lanes of a subgroup, for
// any gl_SubgroupSize (1..128) and partially filled subgroups, plus broadcast and rotate.
//   sg_reduce_<op>(x), sg_inclusive_<op>(x), sg_exclusive_<op>(x)   (ops.glsl; need arithmetic)
//   sg_broadcast_first(x), sg_rotate_down(x, delta)                (need ballot / shuffle)
//   sg_last_lane(): true on the highest active lane (needs arithmetic or ballot)
//   sg_active_lanes(), sg_packed_lane(): count and packed index of the active lanes (arithmetic)
// Without the feature a function is absent: code above this level uses workgroup.glsl, which falls
// back to shared memory, or guards with #ifdef HAS_SUBGROUP_<FEATURE>.
#ifndef VK_LIB_SUBGROUP
#define VK_LIB_SUBGROUP
#include "ops.glsl"

#ifdef HAS_SUBGROUP_BALLOT
#define sg_broadcast_first subgroupBroadcastFirst
bool sg_last_lane() { return gl_SubgroupInvocationID == subgroupBallotFindMSB(subgroupBallot(true)); }
// Indices of the lanes with `pred` set, packed from 0: the lane's slot and the subgroup's count.
uint sg_compact_slot(bool pred, out uint count) {
    uvec4 b = subgroupBallot(pred);
    count = subgroupBallotBitCount(b);
    return subgroupBallotExclusiveBitCount(b);
}
#elif defined(HAS_SUBGROUP_ARITHMETIC)
bool sg_last_lane() { return gl_SubgroupInvocationID == subgroupMax(gl_SubgroupInvocationID); }
#endif

#ifdef HAS_SUBGROUP_ARITHMETIC
// The active lanes, whatever the subgroup size, and this lane's index packed from 0 over them.
uint sg_active_lanes() { return subgroupAdd(1u); }
uint sg_packed_lane() { return subgroupExclusiveAdd(1u); }
#endif

#ifdef HAS_SUBGROUP_SHUFFLE
// Value held by lane (id + delta) mod gl_SubgroupSize (full subgroups).
#define DEFINE_ROTATE(T) \
    T sg_rotate_down(T x, uint delta) { \
        return subgroupShuffle(x, (gl_SubgroupInvocationID + delta) & (gl_SubgroupSize - 1u)); }
DEFINE_ROTATE(float)
DEFINE_ROTATE(int)
DEFINE_ROTATE(uint)
#endif
#endif
