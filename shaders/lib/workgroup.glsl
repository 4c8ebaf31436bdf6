// Workgroup level, for every invocation of the workgroup (call from uniform control flow):
//   wg_reduce_<op>(x)                      -> the combination of all x
//   wg_inclusive_scan_<op>(x, aggregate)   -> prefix in scan order, aggregate = the total
//   wg_exclusive_scan_<op>(x, aggregate)
//   wg_rank()                              -> this invocation's position in scan order
// ops: add, mul, min, max for float/int/uint; and, or, xor for int/uint (see ops.glsl); add, mul,
// min, max for the kernel's 64-bit type WG_T64 where it sets one (see below).
// With subgroup arithmetic: subgroup results combined through SUBGROUP_SLOTS + 1 shared words
// (sized for the smallest subgroup size the device may pick). Without it: shared-memory trees.
// Scan order is subgroup-major (gl_SubgroupID, gl_SubgroupInvocationID), which Vulkan does not
// tie to gl_LocalInvocationIndex: kernels place data by wg_rank(), never by the local index.
#ifndef VK_LIB_WORKGROUP
#define VK_LIB_WORKGROUP
#include "subgroup.glsl"

#ifdef HAS_SUBGROUP_ARITHMETIC
#define WGT_SUBGROUP
shared uint wg_scratch[SUBGROUP_SLOTS + 1u];
uint wg_rank() { return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID; }
#else
shared uint wg_scratch[WG_SIZE];
uint wg_rank() { return gl_LocalInvocationIndex; }
#endif

#define WGT_LID gl_LocalInvocationIndex  // the fallback's order (the 32-bit types take it without subgroups)
#define WGT_T float
#include "workgroup_arith.glsl"
#undef WGT_T

#define WGT_T int
#include "workgroup_arith.glsl"
#include "workgroup_bitwise.glsl"
#undef WGT_T

#define WGT_T uint
#include "workgroup_arith.glsl"
#include "workgroup_bitwise.glsl"
#undef WGT_T

// WG_T64: a 64-bit type (int64_t, uint64_t or double) of the kernel's, with a scratch of its own.
// Its subgroup arithmetic needs SG_T64 besides (the kernel's planner sets it where the device has
// it: shaderSubgroupExtendedTypes for 64-bit integers); without, the shared-memory fallback, in
// the same scan order as the 32-bit types.
#ifdef WG_T64
#if defined(WGT_SUBGROUP) && defined(SG_T64)
shared WG_T64 wg_scratch64[SUBGROUP_SLOTS + 1u];
#else
#undef WGT_SUBGROUP
shared WG_T64 wg_scratch64[WG_SIZE];
#endif
#undef WGT_LID
#define WGT_LID wg_rank()
#define WGT_T WG_T64
#define WGT_GET(i) wg_scratch64[i]
#define WGT_PUT(i, x) wg_scratch64[i] = (x)
#include "workgroup_arith.glsl"
#undef WGT_T
#undef WGT_GET
#undef WGT_PUT
#endif
#endif
