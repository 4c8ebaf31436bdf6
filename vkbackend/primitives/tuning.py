"""The primitives' defaults that rest on measurements, and the measurements behind them. Reduce
and scan: float32 at 64M elements on an NVIDIA H100 80GB HBM3, timed by tools/bench.py's reduce and
scan benchmarks (tools/benchmarks/reduce.py and scan.py, whose full runs sweep these tunables); the
runs are in docs/bench/: 2026-11-23/elementwise-gather-reduce-scan-qr.md (reduce's sweep),
2026-11-24/scan-striped-sweep.md and that folder's README (the scan's tile and layout). Matmul: as
each entry says.

The planners take these values and say why they hold; a sweep that moves one changes
it here. Plain values: this module imports nothing.
"""

# -- reduce.py ------------------------------------------------------------------------------------
# Invocations per workgroup. H100 at 64M: 512 x 528 groups only ~1% faster.
REDUCE_WG = 256
# Workgroups that fill a GPU: about 8 resident groups of 256 per multiprocessor on the H100 and
# H200 (Device.multiprocessors, 132 there); measured as a constant (the benchmark sweeps 528,
# 2112 and 4224), not derived from the count.
REDUCE_GROUPS = 1024

# -- scan.py (Tuning's defaults) --------------------------------------------------------------------
# The tile, workgroup x items elements (items a multiple of 4: vec4 loads and stores). H100, 64M,
# striped, 256 wide: 16 2491 GB/s; 512 wide: 8 2156, 12 2293, 16 2475, 20 and more spill
# registers (1216-1480).
SCAN_WORKGROUP = 256
SCAN_ITEMS = 16
# A tile over the threads. H100, 64M, 512 x 12, the kernel without its look-back (timing only):
# striped 2881 GB/s (copy 2824), blocked 2004.
SCAN_LAYOUT = "striped"
# Tiles by gl_WorkGroupID, not by a counter. H100, 64M: 2189 GB/s against 2029.
SCAN_STATIC_TILES = True

# -- matmul.py --------------------------------------------------------------------------------------
# Tile shapes a GPU with 32-wide or wider subgroups tries, largest first (matmul.CONFIGS). H200,
# 2026-11-25, float32 n x n @ n x n (docs/bench/2026-11-25/h200-session14-sgemm-sweep.txt; cuBLAS
# without TF32 50.4 / 51.2 / 51.0 TFLOP/s at 2048 / 4096 / 8192): wide 43.3 / 43.2 / 44.3, the H100's
# large_bk8 (8x8 per invocation) 36.1 / 37.0 / -, large (BK 16) 31.8 at 4096; at 1024 (torch 38.2)
# mid 29.1, medium 27.3, small's shape with BK 8 23.9. Below mid's 128 tiles, a dependent chain of
# the MLP program's six 256 x 512 x 256-sized products (h200-session14-probe-smallmm.py, alternating configs,
# h200-session14-probes.txt): small 135.6 us, 32x32 tiles with K steps of 16 104.2, tiny (32) 75.2,
# 64 82.0; three 512^2 products 87.3 / 64.1 / 47.8 / 82.0 us.
MATMUL_ORDER = ("wide", "mid", "tiny")
# Split-K only where K is at least this many times the longer side of C. NVIDIA H200, 2026-11-24,
# the programs of tools/benchmarks/programs.py with eager submits off: split-K on every product with
# few tiles took the logistic regression (100 x 1 x 1000) from 2361 to 3119 it/s but the MLP step
# (256 x 512 x 256 products) from 2813 to 2657.
MATMUL_SPLIT_K_DEPTH = 4

# -- matmul_half.py ---------------------------------------------------------------------------------
# bfloat16 products of at least this much work (m * n * k * batch) are cast to float32 and run on
# float32's tiles: matmul.comp reading bfloat16 words (HALF_IN=3) ran slower than the casts plus
# the float32 kernel. H200, 2026-11-26, n^3 alternated in one process
# (docs/bench/2026-11-26/h200-session16-bf16-probe.txt): 2048 0.566 ms against 0.437, 4096 4.49 against
# 3.32; without bounds tests on whole tiles (EDGE=0) no faster. Below 1024^3 the two casts'
# dispatches are not worth it (not measured: the threshold sits a factor 8 under the first gain).
BF16_VIA_FLOAT32_WORK = 1 << 30
