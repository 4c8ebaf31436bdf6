// Included first by every shader, right after:
//   #version 450
//   #extension GL_GOOGLE_include_directive : require
// The runtime defines HAS_SUBGROUP_<FEATURE> for each subgroup feature the device has (and the
// user did not switch off with VKBACKEND_DISABLE_SUBGROUP); code must work without any of them.
#extension GL_KHR_shader_subgroup_basic : require
// VK_WIDE: the kernel's types include 8/16/64-bit ones (int8_t, uint16_t, int64_t, double; the
// runtime defines it, and VK_MATH64 for 64-bit ones, from the dtypes: vkbackend/dtypes.py).
#ifdef VK_WIDE
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
// float16 elements sit in buffers as uint16_t (16-bit storage; no shaderFloat16 arithmetic): read
// exactly into float32, written rounded to nearest even as astype's cast_half.comp does.
#define HALF_TO_FLOAT(h) unpackHalf2x16(uint(h)).x
#define FLOAT_TO_HALF(f) uint16_t(packHalf2x16(vec2((f), 0.0)))
// bfloat16 likewise: the high half of a float32 (bf16_bits below).
#define BF16_TO_FLOAT(h) uintBitsToFloat(uint(h) << 16)
#define FLOAT_TO_BF16(f) uint16_t(bf16_bits(f))
#ifdef HAS_SUBGROUP_ARITHMETIC
#extension GL_EXT_shader_subgroup_extended_types_int8 : enable
#extension GL_EXT_shader_subgroup_extended_types_int16 : enable
#extension GL_EXT_shader_subgroup_extended_types_int64 : enable
#endif
#endif
#ifdef HAS_SUBGROUP_VOTE
#extension GL_KHR_shader_subgroup_vote : require
#endif
#ifdef HAS_SUBGROUP_ARITHMETIC
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#ifdef HAS_SUBGROUP_BALLOT
#extension GL_KHR_shader_subgroup_ballot : require
#endif
#ifdef HAS_SUBGROUP_SHUFFLE
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#ifdef HAS_SUBGROUP_SHUFFLE_RELATIVE
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#endif

// Specialization constant 0 is the workgroup size; 1 the worst-case number of subgroups in a
// workgroup (workgroup size / minSubgroupSize), which sizes shared scratch for any subgroup size.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint SUBGROUP_SLOTS = 1u;
const uint WG_SIZE = gl_WorkGroupSize.x;

// Subgroups in this workgroup, counted from the workgroup and subgroup sizes: lavapipe (Mesa 22.3)
// reports gl_NumSubgroups = floor(WG_SIZE / gl_SubgroupSize), dropping a partial last subgroup.
uint num_subgroups() { return (WG_SIZE + gl_SubgroupSize - 1u) / gl_SubgroupSize; }

// float32 -> bfloat16 bits (the low 16 of the result), rounded to nearest even as ml_dtypes rounds;
// NaN becomes the quiet NaN of its sign (0x7FC0 / 0xFFC0), as ml_dtypes gives it.
uint bf16_bits(float f) {
    uint u = floatBitsToUint(f);
    return (u & 0x7FFFFFFFu) > 0x7F800000u ? ((u >> 16) & 0x8000u) | 0x7FC0u   // a select, no branch
                                           : (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

// Grid-stride loop over [0, n): right for any dispatch size.
#define GRID_STRIDE_LOOP(i, n) \
    for (uint i = gl_GlobalInvocationID.x; i < (n); i += gl_NumWorkGroups.x * WG_SIZE)

// Token pasting that expands its arguments first (PASTE(f_, T) with T defined as float -> f_float).
#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)
