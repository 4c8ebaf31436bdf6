// The order in which a GEMM's workgroups take their output tiles (matmul.comp, matmul_coopmat.comp).
#ifndef VK_TILE_ORDER_GLSL
#define VK_TILE_ORDER_GLSL

// (row tile, column tile) of launch tile (by, bx) in a tiles_y x tiles_x grid. group > 0: launch
// order walks `group` tile rows column by column, so that the tiles running at once share their A
// rows and B columns in L2 (only when the grid covers every tile: the planner passes 0 otherwise).
uvec2 swizzled_tile(uint by, uint bx, uint tiles_x, uint tiles_y, uint group) {
    if (group == 0u) return uvec2(by, bx);
    uint lin = by * tiles_x + bx, per = group * tiles_x;
    uint first = (lin / per) * group;
    uint rows = min(tiles_y - first, group);
    return uvec2(first + (lin % per) % rows, (lin % per) / rows);
}

#endif
