// Workgroup level, for every invocation of the workgroup (call from uniform control flow):
//   wg_reduce_<op>(x)                      -> the combination of all x
//   wg_inclusive_scan_<op>(x, aggregate)   -> prefix in scan order, aggregate = the total
//   wg_exclusive_scan_<op>(x, aggregate)
//   wg_rank()                              -> this invocation's position in scan order
// ops: add, mul, min, max for float/int/uint; and, or, xor for int/uint (see ops.glsl).
// With subgroup arithmetic: subgroup results combined through SUBGROUP_SLOTS + 1 shared words
// (sized for the smallest subgroup size the device may pick). Without it: shared-memory trees.
// Scan order is subgroup-major (gl_SubgroupID, gl_SubgroupInvocationID), which Vulkan does not
// tie to gl_LocalInvocationIndex: kernels place data by wg_rank(), never by the local index.
#ifndef VK_LIB_WORKGROUP
#define VK_LIB_WORKGROUP
#include "subgroup.glsl"

#ifdef HAS_SUBGROUP_ARITHMETIC
shared uint wg_scratch[SUBGROUP_SLOTS + 1u];
uint wg_rank() { return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID; }
#else
shared uint wg_scratch[WG_SIZE];
uint wg_rank() { return gl_LocalInvocationIndex; }
#endif

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
#endif
