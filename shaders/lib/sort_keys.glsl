// Sort keys: 32-bit words mapped to unsigned integers whose order is numpy's sort order, so that
// radix sorts and binary searches compare plain uints.
//   KEY_UINT  uint32 and bool words: as they are
//   KEY_INT   int32: the sign bit flipped
//   KEY_FLOAT float32: negatives bit-inverted, the sign bit set on the rest; every NaN maps to the
//             largest key (numpy sorts NaNs last, all equal) and -0.0 to +0.0's key (numpy: equal).
//             Bit tests, not float compares: devices that flush subnormals keep them apart from 0.
// A map loses nothing that matters: the sorts move the original words and recompute keys.
// 64-bit elements (sort_key64): the same maps of int64, uint64 and float64 on their (low, high)
// words, in 32-bit arithmetic (no shaderInt64 needed); keys compare as (high, low).
#ifndef VK_LIB_SORT_KEYS
#define VK_LIB_SORT_KEYS
const uint KEY_UINT = 0u;
const uint KEY_INT = 1u;
const uint KEY_FLOAT = 2u;

uint sort_key(uint bits, uint type) {
    if (type == KEY_INT) return bits ^ 0x80000000u;
    if (type == KEY_FLOAT) {
        uint mag = bits & 0x7fffffffu;
        if (mag > 0x7f800000u) return 0xffffffffu;  // NaN
        if (mag == 0u) return 0x80000000u;         // -0.0 and +0.0
        return (bits & 0x80000000u) != 0u ? ~bits : bits | 0x80000000u;
    }
    return bits;
}

// words: (low, high) of a 64-bit element; returns its key's (low, high) words.
uvec2 sort_key64(uvec2 words, uint type) {
    if (type == KEY_INT) return uvec2(words.x, words.y ^ 0x80000000u);
    if (type == KEY_FLOAT) {
        uint mag = words.y & 0x7fffffffu;
        if (mag > 0x7ff00000u || (mag == 0x7ff00000u && words.x != 0u)) return uvec2(0xffffffffu);  // NaN
        if (mag == 0u && words.x == 0u) return uvec2(0u, 0x80000000u);  // -0.0 and +0.0
        return (words.y & 0x80000000u) != 0u ? ~words : uvec2(words.x, words.y | 0x80000000u);
    }
    return words;
}
#endif
