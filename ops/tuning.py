"""The layer norm's and QR's defaults that rest on measurements, and the measurements behind them,
on an NVIDIA H100 80GB HBM3: layer norm by tools/benchmarks/layernorm.py's cases (tools/tune.py
sweeps one of layernorm.py's constants over them), QR by tools/benchmarks/qr.py's n = 2000 cases
(VKBACKEND_QR_SWEEP sets qr.py's TUNE keys; run through tools/bench.py).

layernorm.py and qr.py take these values and say why they hold; a sweep that moves one changes it
here. Plain values: this module imports nothing.
"""

# -- layernorm.py ---------------------------------------------------------------------------------
# Target vectors per invocation, workgroup-per-row mode. H100 sweep: 1 best. NVIDIA H200,
# 2026-11-26, replayed batches (docs/bench/2026-11-26/h200-session17-ln-f32.txt): 16384x1024
# forward 45.1 us on 256 invocations of 1 vector, 36.2 on 128 of 2; 4096^2, 8192^2 and 1024x16384
# the same within 1 % with 2 (the workgroup capped at 512 there either way).
LAYERNORM_VECS_PER_THREAD = 2
# Most floats of the row held per invocation in the backward. H100 sweep: 32 beat 8 and 16 at
# D = 8192.
LAYERNORM_FLOATS_PER_THREAD_BWD = 32
# The backward's own target vectors per invocation and invocations in all. NVIDIA H200, 2026-11-24,
# dx + dweight + dbias, GPU timestamps (.prof sweep, 10 runs each): 4096x4096 128 us with (1, 2**17)
# -> 63 with (4, 2**16); 16384x1024 78 -> 60; 8192x8192 1356 -> 775. Four vectors a thread make
# the workgroup 4x smaller: cheaper row reductions, four workgroups resident per SM.
LAYERNORM_VECS_PER_THREAD_BWD = 4
LAYERNORM_BWD_THREADS = 1 << 16
# The backward's largest workgroup before its rows must take more: H200 (same file), 1024x16384
# 143.6 us on 1024 invocations of 4 vectors, 107.1 on 512 of 8; 8192^2 512 x 4 and 256 x 8 the
# same; 4096^2 and 16384x1024 slower on smaller workgroups than they take (61.5 / 58.9 against 68
# / 65.6 us).
LAYERNORM_PREFERRED_WG_BWD = 512
# float16 / bfloat16 rows (HALF_IO): the workgroup float32's plan gives, divided by this (a power
# of two), each invocation holding as many more vectors; not below LAYERNORM_HALF_MIN_WG_FWD /
# _BWD. NVIDIA H200, 2026-11-26, replayed batches, float32's plan then (one vector a thread, the
# backward's workgroup up to 1024) divided by 1 / 2 / 4 (docs/bench/2026-11-26/
# h200-session17-ln-half.txt): forward float16 4096^2 35.6 / 30.9 / 29.2 us (512 x 2 -> 128 x 8),
# 16384x1024 44.9 / 31.9 / 29.5 (256 x 1 -> 64 x 4), 8192^2 94.6 / 80.3 / 80.1 (bfloat16 alike);
# backward 1024x16384 135.8 / 88.4 (1024 -> 512 invocations), 8192^2 212 / 208 (512 -> 256), but
# 4096^2 62.3 / 70.5 (256 -> 128) and 16384x1024 56.4 / 63.4 (64 -> 32).
LAYERNORM_HALF_WG_DIV = 4
LAYERNORM_HALF_MIN_WG_FWD = 64
LAYERNORM_HALF_MIN_WG_BWD = 256

# -- qr.py (TUNE's defaults) ----------------------------------------------------------------------
# Widest panel. H100, n=2000, R only: 16 11.7 ms, 32 13.1.
QR_NB_MAX = 16
# The look-ahead schedule, off. On the H100 it cost ~44 us per panel (n=2000, R only: 15.9 ms with
# it, 13.1 without).
QR_LOOKAHEAD = 0
# Width of the blocks Q is formed with (their T built anew), in place of the panels' (8 or 16). H200,
# 2026-11-26, reduced Q and R (docs/bench/2026-11-26/h200-session18-qr-sweep.txt): n = 512 1.53 ->
# 1.48 ms, 1000 4.37 -> 4.21, 2000 15.42 -> 14.51, 4096 94.2 -> 77.0.
QR_Q_NB = 32
# ... for matrices of at least this many rows: the extra dispatch costs more than it saves on small
# ones (same session, -qr-small.txt: 256 x 64 x 64 0.189 -> 0.222 ms, float64 0.340 -> 0.363, 64 x
# 128 x 128 0.328 -> 0.338; 512^2 1.514 -> 1.466).
QR_Q_MIN_ROWS = 256
# Corners (rows x columns per matrix) from which a block reflector up to 16 wide streams in row
# chunks (qr_update_rows.comp) instead of one workgroup per column strip (qr_update.comp), aiming
# at QR_ROWS_GROUPS workgroups in chunks of at least QR_ROWS_CHUNK rows. H200, 2026-11-26
# (docs/bench/2026-11-26/h200-session18-qr-update*.txt, -qr-rows.txt, -qr-ru.txt): one 8-wide
# block on 4096 x 4088 190 -> 101 us, 4096 x 2048 102 -> 59, but 1024 x 1024 21 -> 30-49 (too few
# workgroups either way); in QR 4096 (R only) 57.4 -> 47.4 ms from corners of 256K elements, while
# QR 2000 lost 2.7-5 ms from corners of 256K or 1M (its corners stay under 4M). A 32-wide variant
# (2 columns per invocation) was slower than qr_update.comp: 244 against 181 us on 4096 x 2048,
# QR 4096 63.7 -> 68.7 ms (-qr-rows32.txt).
QR_ROWS_MIN = 1 << 22
QR_ROWS_GROUPS = 1056
QR_ROWS_CHUNK = 256
