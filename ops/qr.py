"""QR factorization on the GPU: blocked Householder with the compact WY form, one submit.

    Q, R = vk.linalg.qr(a)                      # numpy.linalg.qr's modes and return conventions
    h, tau = vk.linalg.qr(a, mode="raw")        # h transposed, as numpy (and LAPACK) return it
    Q = vk.linalg.householder_product(hT, tau)  # torch.linalg.householder_product
    y = vk.linalg.apply_q(hT, tau, c, transpose=True)   # Q^T c without forming Q (LAPACK ormqr)

Plan of one factorization, for every panel of nb columns starting at (p0, p0):
  1. ops/qr_panel.comp: ONE workgroup factorises the whole m x nb panel (m = M - p0) with its rows
     in registers: one NB-wide workgroup reduction per column (norm below the pivot, the dot
     products of the update and the column of T together), and T (nb x nb) built on the side;
  2. ops/qr_update.comp: the trailing columns C := (I - V T V^T)^T C, fused in one dispatch (each
     workgroup owns a strip of columns over all rows: W = V^T C, W = T^T W, C -= V W), no
     temporaries in memory.
Q is then formed by applying blocks of the reflectors backward to the identity (one qr_update per
block, on the shrinking bottom-right corner only), blocks wider than the panels (q_nb: their T built
anew by qr_buildt, all in one dispatch) so that Q takes fewer passes over its corner. Large corners
(rows_min) take qr_update_rows.comp instead, their rows in chunks over many more workgroups (two
dispatches). Every dispatch is recorded; nothing is submitted here.
Dispatches per call: 2 per panel for R, 1 per q_nb columns for Q, plus 4 (copy, T, identity, triu).
Batched input (..., M, N) runs all matrices of the batch in the same dispatches (grid z), so the
dispatch count does not grow with the batch and small matrices fill the device together; the only
memory besides the results is T (NB x NB per panel and matrix; Q's rebuilt blocks) and one
workspace of qr_update_rows.comp's partial products per call. qr, householder_product and
apply_q are recipes (primitives/recipes.py): a repeated signature replays the recorded dispatches.

The panel width adapts to the panel height (the register file of one SM): NB = nb_max (16) while
the rows fit, 8 for taller panels, and a streaming variant (rows in memory) beyond that. A
look-ahead schedule (the next panel factorised beside the trailing update, no barrier between) is
a tunable, off: it measured slower (ops/tuning.py). `TUNE` holds the knobs; environment:
VKBACKEND_QR_<KEY>=value (tuples comma-separated), declared in KEYS, registered in
vkbackend/config.py and applied at the first QR call (a malformed value raises ValueError there,
never at import).

float64 matrices run the same kernels over doubles (their F64 variants, computed in float64): a
value takes two registers and twice the shared memory, so panels are at most 16 wide
(_NB64) and qr_update runs 128 invocations over half-height row tiles (_UPDATE_SHAPE); the
panel's sqrt and divisions are the device's, refined to about an ulp (lib/math64.glsl).

Under a loop budget (lavapipe: 65535 counted loop iterations per invocation; see
docs/loop_budget/matmul_qr.md) panels take larger workgroups or fewer columns so that their row
passes fit, qr_update and qr_buildt compile with FIXED_TRIPS (only their row tiles count), and
matrices too tall even so raise LoopBudgetError before any GPU work.
"""
from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from vkbackend import config, dtypes, runtime
from vkbackend.array import Array
from vkbackend.primitives.creation import asarray
from vkbackend.primitives import launch
from vkbackend.primitives.launch import LoopBudgetError, groups_for, pow2ceil
from vkbackend.primitives.operands import operand
from vkbackend.primitives.recipes import recipe
from . import grid
from .tuning import (QR_LOOKAHEAD, QR_NB_MAX, QR_Q_MIN_ROWS, QR_Q_NB, QR_ROWS_CHUNK, QR_ROWS_GROUPS,
                     QR_ROWS_MIN)

__all__ = ["qr", "householder_product", "apply_q", "QRResult"]

QRResult = namedtuple("QRResult", ["Q", "R"])
QRResult.__doc__ = "numpy.linalg.qr's result for modes 'reduced' and 'complete': (Q, R)."

_MODES = ("reduced", "complete", "r", "raw")
# qr_update.comp's workgroup size and row tiles (phases 1 and 3), which its thread mapping assumes:
# float32, float64 (half the workgroup and tiles: its shared memory within 32 KiB at 8 bytes a value)
_UPDATE_SHAPE = {4: (256, 64, 128), 8: (128, 32, 64)}
_NB64 = 16         # the widest block of the float64 kernels (their shared memory, registers)
_ROWS_TX = 32      # qr_update_rows.comp's invocations along a row (TX) ...
_ROWS_SW = 128     # ... and columns per workgroup (TX * CPT)
_UTIL_WG = 256

# Tunables. GPU: a panel of m rows takes the widest NB (nb_max, then halving down to nb_min) for
# which a workgroup size in `panel_wgs` holds the panel in registers:
# rows-per-thread * NB + 2 * NB + reg_overhead <= min(reg_max, reg_file / wg) (NVIDIA: 64K 32-bit
# registers per SM, at most 255 per thread); of those, the fewest rows per thread, then the
# smallest workgroup. Taller panels stream their rows through memory.
# Software devices (lavapipe) have their own, smaller set (LLVM compiles unrolled register tiles
# for minutes).
TUNE = {
    "nb_max": QR_NB_MAX,     # widest panel (power of two, 8..32; not 32: a 16-wide panel step is
                             # shorter, and panels are the critical path)
    "nb_min": 8,             # narrowest register-resident panel before streaming
    "stream_nb": 16,         # panel width of the streaming (very tall) variant
    "panel_wgs": (1024, 512, 256, 128, 64),
    "reg_file": 65536,       # 32-bit registers per SM/CU available to one workgroup
    "reg_max": 255,          # registers one thread may have
    "reg_overhead": 24,      # registers of the panel kernel besides its rows, sums and update row
    "unroll_k": 1,           # unroll the panel's column loop (register panels)
    "target_groups": 120,    # workgroups an update dispatch should reach (~ the SM count)
    "lookahead": QR_LOOKAHEAD,  # 1: next panel beside the trailing update (no barrier between them)
    "apply_nb": 32,          # block width for apply_q / householder_product
    "rows_min": QR_ROWS_MIN,  # corners of at least this many elements (per matrix) take
                             # qr_update_rows (blocks up to 16 wide); 0: never
    "rows_groups": QR_ROWS_GROUPS,  # workgroups it aims at (column strips x row chunks x matrices)
    "rows_chunk": QR_ROWS_CHUNK,    # ... with chunks of no fewer rows than this
    "q_nb": QR_Q_NB,         # qr's Q from T blocks of this width built anew (qr_buildt); 0: the
                             # panels' own T blocks (8 or 16 wide: more, thinner passes) ...
    "q_min_rows": QR_Q_MIN_ROWS,  # ... for matrices of at least this many rows
    # software devices: the streaming panel (rows in memory, which is a CPU's cache anyway)
    "sw_panel_wgs": (128,),
    "sw_reg_cap": 0,         # row values per thread in "registers" (0: always stream)
    "sw_no_unroll": 0,       # 1: [[dont_unroll]] everywhere (faster LLVM compiles, slower runs);
                             # ignored under a loop budget, where those loops would count per row
    "sw_unroll_k": 0,
}


def _key(name: str, allowed: str, doc: str, valid) -> config.Key:
    value = TUNE[name]
    many = isinstance(value, tuple)
    return config.Key(name, (), allowed, ",".join(map(str, value)) if many else str(value), doc,
                      valid=valid, many=many)


_WGS = "workgroup sizes from 1 to 1024, comma-separated (those the device cannot run are skipped)"
_ROUNDED = "an integer from 1 to 32 (rounded up to a power of two, at least 4)"
KEYS = (
    _key("nb_max", "an integer from 1 to 32 (rounded up to a power of two)",
         "widest register-resident panel", config.between(1, 32)),
    _key("nb_min", "an integer from 1 to 32", "narrowest register-resident panel before streaming",
         config.between(1, 32)),
    _key("stream_nb", _ROUNDED, "panel width of the streaming (very tall) variant", config.between(1, 32)),
    _key("panel_wgs", _WGS, "workgroup sizes the GPU panel kernel may take", config.between(1, 1024)),
    _key("reg_file", "an integer >= 1", "32-bit registers per SM/CU available to one workgroup",
         config.at_least(1)),
    _key("reg_max", "an integer >= 1", "registers one thread may have", config.at_least(1)),
    _key("reg_overhead", "an integer >= 0",
         "registers of the panel kernel besides its rows, sums and update row", config.at_least(0)),
    _key("unroll_k", "0 or 1", "1: unroll the register panels' column loop (GPUs)", config.between(0, 1)),
    _key("target_groups", "an integer >= 1", "workgroups an update dispatch should reach (~ the SM count)",
         config.at_least(1)),
    _key("lookahead", "0 or 1", "1: the next panel beside the trailing update, no barrier between",
         config.between(0, 1)),
    _key("apply_nb", _ROUNDED, "block width of apply_q and householder_product", config.between(1, 32)),
    _key("rows_min", "an integer >= 0",
         "corner size (elements per matrix) from which block reflectors stream in row chunks (0: never)",
         config.at_least(0)),
    _key("rows_groups", "an integer >= 1", "workgroups the row-chunked block reflector aims at",
         config.at_least(1)),
    _key("rows_chunk", "an integer >= 1", "least rows per chunk of the row-chunked block reflector",
         config.at_least(1)),
    _key("q_nb", "0, or an integer from 1 to 32 (rounded up to a power of two, at least 4)",
         "qr: block width of the T blocks Q is formed with (0: the panels' own)", config.between(0, 32)),
    _key("q_min_rows", "an integer >= 0", "qr: least rows for Q's T blocks to be built anew (q_nb)",
         config.at_least(0)),
    _key("sw_panel_wgs", _WGS, "workgroup sizes the panel kernel may take on software devices",
         config.between(1, 1024)),
    _key("sw_reg_cap", "an integer >= 0", "software devices: row values per thread in registers (0: always stream)",
         config.at_least(0)),
    _key("sw_no_unroll", "0 or 1",
         "1: [[dont_unroll]] everywhere on software devices (faster LLVM compiles, slower runs; not under a "
         "loop budget)", config.between(0, 1)),
    _key("sw_unroll_k", "0 or 1", "software devices: unroll_k", config.between(0, 1)),
)
ENV = config.register(config.Family(
    "VKBACKEND_QR_<KEY>", KEYS,
    doc="One variable per key of ops/qr.py's TUNE, applied at the first QR call (qr, householder_product, "
        "apply_q); one naming no key is an error there.")).variable
_tuned = False  # TUNE has ENV's values


def _tune_from_env() -> None:
    """Apply the VKBACKEND_QR_<KEY> variables to TUNE at the first QR call: checked by the
    registry, a malformed one raises ValueError naming it here (every call until it is fixed)."""
    global _tuned
    if not _tuned:
        TUNE.update(config.family(ENV))
        _tuned = True


def _tune_key() -> tuple:
    """TUNE's values: part of the key of QR's plans and recipes (tests and tools change TUNE)."""
    return tuple(TUNE.values())


# -- input checks (before any GPU work) ------------------------------------------------------

def _check_float(x, name: str, what: str, float64: bool = False):
    """A float32 vk.Array (or float64 where the op computes in it: `float64`), or host float data
    checked but not yet uploaded (a numpy array, uploaded as float32 by asarray(x, dtypes.float32)
    once every argument is checked)."""
    x = operand(x, name, what, host="keep", wide=float64)
    if isinstance(x, Array):
        if x.dtype != dtypes.float32 and not (float64 and x.dtype == dtypes.float64):
            kinds = "float32 and float64 are" if float64 else "only float32 is"
            raise TypeError(f"{name}: {what} has dtype {x.dtype}; {kinds} supported "
                            "(convert with .astype('float32'))")
    elif x.dtype.kind != "f":
        raise TypeError(f"{name}: {what} has dtype {x.dtype}; expected a floating-point array "
                        "(computed in float32)")
    return x


def _real(x) -> np.dtype:
    """The dtype a checked operand computes in: float64 for a float64 vk.Array, else float32."""
    return dtypes.float64 if isinstance(x, Array) and x.dtype == dtypes.float64 else dtypes.float32


def _common(*xs) -> np.dtype:
    """The dtype checked operands compute in together: float64 if any is a float64 vk.Array."""
    return dtypes.float64 if any(_real(x) == dtypes.float64 for x in xs) else dtypes.float32


def _check_matrix(x, name: str, what: str = "input", float64: bool = False):
    x = _check_float(x, name, what, float64)
    if x.ndim < 2:
        raise np.linalg.LinAlgError(f"{name}: {x.ndim}-dimensional {what}; at least two "
                                    "dimensions (..., M, N) are needed")
    return x


# -- dispatch helpers --------------------------------------------------------------------------

def _rt():
    return runtime.get()


def _kernel(shader: str, defines: dict, wg: int):
    rt = _rt()
    if launch.loop_budget() is not None:
        # Loops inside row tiles at fixed trip counts, so that the budget counts only the tiles; and
        # no QR_NO_UNROLL: its [[dont_unroll]] loops would count per row and per column.
        if shader in ("qr_update.comp", "qr_buildt.comp"):
            defines = dict(defines, FIXED_TRIPS=1)
    elif rt.device.is_software and TUNE["sw_no_unroll"]:
        defines = dict(defines, QR_NO_UNROLL=1)  # LLVM takes minutes on the unrolled register tiles
    return rt.kernel(f"ops/{shader}", defines, wg)


def _dispatch(kernel, buffers, push, gx: int, batch: int, batch_words=(), barrier: bool = True,
              gy: int = 1):
    """Record `kernel` over grid (gx, gy, batch); batches beyond the device's grid z limit go in
    chunks, advancing each (offset index, stride index) pair of `batch_words` in `push`.
    barrier=False: the next dispatch may run concurrently with this one."""
    zmax = _rt().device.max_workgroup_count[2]
    for b0 in range(0, batch, zmax):
        words = list(push)
        for oi, si in batch_words:
            words[oi] += b0 * words[si]
        groups = (gx, gy, min(zmax, batch - b0))
        kernel(buffers, words, groups, barrier=barrier)


def _util(mode: str, src: Array | None, s_off, s_ld, s_bs, dst: Array, d_off, d_ld, d_bs,
          rows: int, cols: int, batch: int):
    if rows == 0 or cols == 0 or batch == 0:
        return
    k = _kernel("qr_util.comp", {mode: 1, **grid.real_defines(dst.dtype)}, _UTIL_WG)
    src = src if src is not None else dst
    push = [s_off, s_ld, s_bs, d_off, d_ld, d_bs, rows, cols]
    _dispatch(k, [src.buffer, dst.buffer], push, groups_for(rows * cols, _UTIL_WG), batch,
              ((0, 2), (3, 5)))


# -- planning ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Panel:
    p0: int       # first row and column
    nb: int       # columns in the panel
    kk: int       # reflectors it computes
    width: int    # the kernel's NB (>= nb)
    wg: int
    rpt: int      # rows per thread in registers (0: streaming)
    t_off: int    # offset of its T block within one matrix's T area


def _panel_fits_shared(dev, nb: int, wg: int, size: int = 4) -> bool:
    """Whether qr_panel.comp's shared memory fits, for elements of `size` bytes."""
    subgroups = dev.has("shuffle") or dev.has("arithmetic")
    slots = -(-wg // max(1, dev.min_subgroup_size)) if subgroups else wg
    return (slots * nb + 4 * nb + nb * nb) * size + 1024 <= dev.max_shared_memory


def _widest(dt) -> int:
    """The widest block the kernels hold for dtype dt (qr_update.comp's shared memory, NB*NB <= 4 *
    256 in qr_buildt.comp; doubles take twice the shared memory and registers)."""
    return 32 if dt == dtypes.float32 else _NB64


def _panel_config(m: int, dt=dtypes.float32):
    """(NB, workgroup size, rows per thread; 0 = streaming) for a panel of m rows of dtype dt: the
    widest NB whose rows fit in registers, with the fewest rows per thread, then the smallest
    workgroup. A float64 value takes two registers."""
    dev = _rt().device
    size = np.dtype(dt).itemsize
    words = size // 4

    def fits_shared(nb, wg):
        return _panel_fits_shared(dev, nb, wg, size)

    if dev.is_software:
        wgs = TUNE["sw_panel_wgs"]

        def fits_regs(nb, wg, rpt):
            return rpt * nb * words <= TUNE["sw_reg_cap"]
    else:
        wgs = TUNE["panel_wgs"]

        def fits_regs(nb, wg, rpt):
            have = min(TUNE["reg_max"], TUNE["reg_file"] // wg)
            return (rpt * nb + 2 * nb) * words + TUNE["reg_overhead"] <= have
    # whole subgroups only (the butterfly reduction shuffles across every lane)
    wgs = sorted({w for w in wgs if w <= dev.max_workgroup_invocations and w % max(1, dev.max_subgroup_size) == 0})
    if not wgs:
        wgs = [max(64, dev.max_subgroup_size)]
    widest = _widest(dt)
    nb = min(widest, pow2ceil(TUNE["nb_max"]))
    while nb >= max(4, TUNE["nb_min"]):
        best = None
        for wg in wgs:
            if wg < nb or not fits_shared(nb, wg):
                continue
            rpt = pow2ceil(-(-m // wg))
            if fits_regs(nb, wg, rpt) and (best is None or rpt < best[2]):
                best = (nb, wg, rpt)
        if best:
            return best
        nb //= 2
    nb = min(widest, max(4, pow2ceil(TUNE["stream_nb"])))
    wg = next((w for w in reversed(wgs) if w >= nb and fits_shared(nb, w)), wgs[-1])
    return nb, wg, 0


_plans: dict = {}


def _plan(M: int, N: int, dt=dtypes.float32) -> tuple[list, int]:
    """The panels of an M x N factorization of dtype dt and the T area per matrix (cached per
    shape, dtype and TUNE)."""
    key = (M, N, dt, id(_rt().device), launch.loop_budget(), _tune_key())
    hit = _plans.get(key)
    if hit is None:
        if len(_plans) > 256:
            _plans.clear()
        hit = _plans[key] = _make_plan(M, N, dt)
    return hit


def _make_plan(M: int, N: int, dt=dtypes.float32) -> tuple[list, int]:
    K = min(M, N)
    panels, p0, t_off = [], 0, 0
    while p0 < K:
        width, wg, rpt = _panel_config(M - p0, dt)
        wg, cols = _panel_budget(M - p0, width, wg, rpt, np.dtype(dt).itemsize)
        nb = min(cols, N - p0)
        panels.append(_Panel(p0, nb, min(nb, K - p0), width, wg, rpt, t_off))
        t_off += width * width
        p0 += nb
    return panels, t_off


# -- the loop budget (lavapipe: 65535 counted loop iterations per invocation) -------------------
# Per-invocation costs of the kernels (a loop of n iterations whose body's loops cost c costs
# n(c + 1) + 1 + L, L the loops nested in it; [[unroll]] loops cost nothing; see launch.loop_budget). Where a budget is set, _kernel compiles
# qr_update and qr_buildt with FIXED_TRIPS and never with QR_NO_UNROLL, which these assume.

def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _panel_cost(m: int, nb: int, wg: int, rpt: int, kk: int) -> int:
    """qr_panel.comp: the two loops over T's NB*NB entries, and kk column steps, each with (STREAM)
    two passes over the rows tid, tid + wg, ... and the reduction's loops over subgroups."""
    dev = _rt().device
    if dev.has("shuffle") or dev.has("arithmetic"):
        subgroups = _cdiv(wg, max(1, dev.min_subgroup_size)) + 1   # sum over gl_NumSubgroups
        doublings = max(0, (max(1, dev.max_subgroup_size) - 1).bit_length() - (nb - 1).bit_length())
        reduce = subgroups + (doublings + 1 if dev.has("shuffle") else 0)
    else:
        reduce = wg + 1                                           # sum over the workgroup in shared
    rows = 0 if rpt else 2 * (_cdiv(m, wg) + 1)
    step = rows + reduce
    # the loops in a column step: the two row passes (STREAM) and the reduction's one or two
    nested = (0 if rpt else 2) + (2 if dev.has("shuffle") else 1)
    unroll_k = rpt and TUNE["sw_unroll_k" if dev.is_software else "unroll_k"]
    columns = kk * step if unroll_k else kk * (step + 1) + 1 + nested
    return 2 * (_cdiv(nb * nb, wg) + 1) + columns


def _update_cost(m: int, nb: int, cw: int, size: int = 4) -> int:
    """qr_update.comp with FIXED_TRIPS, elements of `size` bytes: the row tiles of phases 1 (RT)
    and 3 (RT3), the load of T, the reduction of W over KSPLIT groups and the product with T."""
    wg, rt, rt3 = _UPDATE_SHAPE[size]
    ksplit = wg // ((nb // min(nb, 4)) * (cw // 4))
    w_loop = _cdiv(nb * cw, wg)
    # the two loops over W's entries each hold one loop (KSPLIT partials; a row of T), so their
    # exits count 2
    return ((_cdiv(m, rt) + 1) + (_cdiv(nb * nb, wg) + 1) + (w_loop * (ksplit + 2) + 2)
            + (w_loop * (nb + 2) + 2) + (_cdiv(m, rt3) + 1))


def _buildt_cost(m: int, nb: int) -> int:
    """qr_buildt.comp with FIXED_TRIPS: the row tiles (RT = 64), T's recurrence by thread 0
    (k = 1 .. nb - 1, each summing k terms), the store of T."""
    return (_cdiv(m, 64) + 1) + ((nb - 1) * nb // 2 + 2 * (nb - 1) + 2) + (_cdiv(nb * nb, 256) + 1)


def _util_cost(items: int) -> int:
    """qr_util.comp: one grid-stride loop."""
    return _cdiv(items, groups_for(items, _UTIL_WG) * _UTIL_WG) + 1


def _panel_budget(m: int, width: int, wg: int, rpt: int, size: int = 4) -> tuple[int, int]:
    """(workgroup size, columns per panel <= width) keeping the panel kernel inside the loop budget:
    the planned ones where they fit (always without a budget); else, streaming, the smallest larger
    workgroup that fits all width columns (fewer row trips), or the one fitting the most."""
    budget = launch.loop_budget()
    if budget is None:
        return wg, width

    def cols(w):
        base = _panel_cost(m, width, w, rpt, 0)
        return min(width, max(0, (budget - base) // (_panel_cost(m, width, w, rpt, 1) - base)))
    best = (cols(wg), -wg)
    if best[0] < width and not rpt:
        dev = _rt().device
        w = wg * 2
        while w <= dev.max_workgroup_invocations:
            if w % max(1, dev.max_subgroup_size) == 0 and _panel_fits_shared(dev, width, w, size):
                best = max(best, (cols(w), -w))
            w *= 2
    if best[0] < 1:
        raise LoopBudgetError(f"qr: a panel of {m} rows does not fit the device's loop budget of {budget} "
                              f"iterations per invocation even one column at a time "
                              f"({_panel_cost(m, width, -best[1], rpt, 1)} counted)")
    return -best[1], best[0]


def _check_budget(name: str, M: int, widths, util_items: int, buildt: bool = False, dt=dtypes.float32) -> None:
    """LoopBudgetError before any GPU work if the row passes of qr_update (and qr_buildt) over M
    rows, or a qr_util pass over util_items, exceed the loop budget."""
    budget = launch.loop_budget()
    if budget is None or M == 0:
        return
    size = np.dtype(dt).itemsize
    _, rt, rt3 = _UPDATE_SHAPE[size]
    for nb in set(widths):
        cost = max(_update_cost(M, nb, cw, size) for cw in (8, 16, 32))
        if buildt:
            cost = max(cost, _buildt_cost(M, nb))
        if cost > budget:
            fixed = max(_update_cost(0, nb, cw, size) for cw in (8, 16, 32))
            raise LoopBudgetError(f"{name}: {M} rows: one pass of a {nb}-column block reflector over them "
                                  f"counts {cost} loop iterations per invocation, more than the device's "
                                  f"loop budget of {budget} (about {max(0, budget - fixed) * rt * rt3 // (rt + rt3)} rows "
                                  "fit)")
    if _util_cost(util_items) > budget:
        raise LoopBudgetError(f"{name}: {util_items} elements need {_util_cost(util_items)} loop iterations "
                              f"per invocation, more than the device's loop budget of {budget}")


def _update_cw(ncols: int, batch: int) -> int:
    for cw in (32, 16):
        if -(-ncols // cw) * batch >= TUNE["target_groups"]:
            return cw
    return 8


# -- the blocked algorithm ---------------------------------------------------------------------

def _apply_block(v: Array, v_off, v_ld, v_bs, m, kk, width, t: Array, t_off, t_bs,
                 c: Array, c_off, c_ld, c_bs, ncols, trans: bool, batch: int, barrier: bool = True,
                 work: dict | None = None):
    """C (m x ncols) := (I - V T V^T)^T C if trans else (I - V T V^T) C, every matrix of the batch.
    work: a dict that a sequence of blocks shares, holding the row-chunked kernel's workspace (one
    buffer for all of them, each block's dispatches done before the next one's begin)."""
    if m <= 0 or ncols <= 0 or kk <= 0 or batch == 0:
        return
    defines = {"NB": width, **grid.real_defines(c.dtype)}
    if trans:
        defines["TRANS_T"] = 1
    push = [v_off, v_ld, v_bs, m, kk, t_off, t_bs, c_off, c_ld, c_bs, ncols]
    words = ((0, 2), (5, 6), (7, 9))
    chunk = _row_chunks(m, ncols, width, batch) if barrier else 0
    if chunk:  # qr_update_rows.comp: the corner streamed in row chunks, two dispatches
        chunks, wg = -(-m // chunk), _rows_wg()
        w = _workspace(work, batch * chunks * width * ncols, c.dtype)
        push += [chunk, w.offset, chunks * width * ncols]
        for phase in (1, 2):
            k = _kernel("qr_update_rows.comp", dict(defines, PHASE=phase), wg)
            _dispatch(k, [v.buffer, t.buffer, c.buffer, w.buffer], push, -(-ncols // _ROWS_SW), batch,
                      words + ((12, 13),), gy=chunks)
        return
    cw = _update_cw(ncols, batch)
    k = _kernel("qr_update.comp", dict(defines, CW=cw), _UPDATE_SHAPE[c.dtype.itemsize][0])
    _dispatch(k, [v.buffer, t.buffer, c.buffer], push, -(-ncols // cw), batch, words, barrier)


def _workspace(work: dict | None, size: int, dt) -> Array:
    """An array of at least `size` elements of dtype dt: the one `work` holds where it is large
    enough (kept there for the next block), else a new one."""
    w = None if work is None else work.get(dt)
    if w is None or w.size < size:
        w = Array.empty((size,), dt)
        if work is not None:
            work[dt] = w
    return w


def _rows_wg() -> int:
    return 64 if _rt().device.is_software else 256


def _rows_cost(chunk: int, chunks: int, nb: int, wg: int) -> int:
    """qr_update_rows.comp's loop iterations per invocation, its larger phase (2): the sum of the
    chunks' W (a loop over chunks per entry), T's load, op(T) W, and the rows of its chunk."""
    entries = _cdiv(nb * _ROWS_SW, wg)
    return entries * (chunks + 3) + _cdiv(nb * nb, wg) + _cdiv(chunk, wg // _ROWS_TX) + 8


def _row_chunks(m: int, ncols: int, nb: int, batch: int) -> int:
    """Rows per chunk for qr_update_rows.comp on an m x ncols corner (0: qr_update.comp instead:
    blocks wider than 16, corners under TUNE's rows_min elements, or no split that fits the loop
    budget): chunks enough for TUNE's rows_groups workgroups, none under rows_chunk rows."""
    if not TUNE["rows_min"] or nb > 16 or m * ncols < TUNE["rows_min"]:
        return 0
    groups = -(-ncols // _ROWS_SW) * batch
    chunks = max(1, min(-(-TUNE["rows_groups"] // groups), m // max(1, TUNE["rows_chunk"])))
    budget, wg = launch.loop_budget(), _rows_wg()
    while True:
        chunk = -(-m // chunks)
        if budget is None or _rows_cost(chunk, -(-m // chunk), nb, wg) <= budget:
            return chunk
        if chunk <= 1 or chunks >= m:
            return 0
        chunks *= 2


def _factor(a: Array):
    """Householder QR of every (M, N) matrix of `a`: (h, tau, T, panels, T size per matrix).

    Per panel: the panel kernel, then the trailing update. With TUNE["lookahead"]: the update of
    the next panel's columns first, then the next panel's factorization and the update of the
    remaining columns side by side (no barrier between them)."""
    *batch, M, N = a.shape
    B, K = math.prod(batch), min(M, N)
    dt = a.dtype
    panels, tsize = _plan(M, N, dt)  # LoopBudgetError before any GPU work
    h = Array.empty(a.shape, dt)
    _util("COPY", a, a.offset, N, M * N, h, h.offset, N, M * N, M, N, B)
    tau = Array.empty(tuple(batch) + (K,), dt)
    T = Array.empty((max(1, B * tsize),), dt)
    if B == 0 or not panels:
        return h, tau, T, panels, tsize
    lookahead = bool(TUNE["lookahead"])
    sw = _rt().device.is_software

    def factor_panel(pl, barrier=True):
        defines = {"NB": pl.width, **grid.real_defines(dt)}
        if pl.rpt:
            defines["RPT"] = pl.rpt
            if TUNE["sw_unroll_k" if sw else "unroll_k"]:
                defines["UNROLL_K"] = 1
        else:
            defines["STREAM"] = 1
        k = _kernel("qr_panel.comp", defines, pl.wg)
        push = [h.offset + pl.p0 * N + pl.p0, N, M * N, M - pl.p0, pl.nb, pl.kk, tau.offset + pl.p0, K,
                T.offset + pl.t_off, tsize]
        _dispatch(k, [h.buffer, tau.buffer, T.buffer], push, 1, B, ((0, 2), (6, 7), (8, 9)), barrier)

    work: dict = {}

    def update(pl, c0, ncols, barrier=True):
        """Columns [c0, c0 + ncols) (of the whole matrix) := panel pl's Q^T times them."""
        hoff = h.offset + pl.p0 * N + pl.p0
        _apply_block(h, hoff, N, M * N, M - pl.p0, pl.kk, pl.width, T, T.offset + pl.t_off, tsize,
                     h, hoff + (c0 - pl.p0), N, M * N, ncols, True, B, barrier, work)

    factor_panel(panels[0])
    for i, pl in enumerate(panels):
        nxt = panels[i + 1] if i + 1 < len(panels) else None
        c0 = pl.p0 + pl.nb
        if c0 >= N:
            break
        if nxt is None:
            update(pl, c0, N - c0)
        elif lookahead and N - c0 > nxt.nb:
            update(pl, c0, nxt.nb)
            factor_panel(nxt, barrier=False)
            update(pl, c0 + nxt.nb, N - c0 - nxt.nb)
        else:
            update(pl, c0, N - c0)
            factor_panel(nxt)
    return h, tau, T, panels, tsize


def _form_q(h: Array, h_bs: int, N: int, blocks, T: Array, t_bs: int, M: int, ncols: int, batch: tuple):
    """Q[:, :ncols] of the reflectors in h (row stride N): the blocks applied backward to I.
    blocks: (p0, kk, width, t_off) for each block."""
    B = math.prod(batch)
    Q = Array.empty(tuple(batch) + (M, ncols), h.dtype)
    _util("EYE", None, 0, 0, 0, Q, Q.offset, ncols, M * ncols, M, ncols, B)
    work: dict = {}
    for p0, kk, width, t_off in reversed(blocks):
        if p0 >= ncols:
            continue
        # Columns < p0 of the partial product are still identity columns: only the corner moves.
        _apply_block(h, h.offset + p0 * N + p0, N, h_bs, M - p0, kk, width, T, T.offset + t_off, t_bs,
                     Q, Q.offset + p0 * ncols + p0, ncols, M * ncols, ncols - p0, False, B, work=work)
    return Q


def _triu(h: Array, batch: tuple, M: int, N: int, rows: int) -> Array:
    R = Array.empty(tuple(batch) + (rows, N), h.dtype)
    _util("TRIU", h, h.offset, N, M * N, R, R.offset, N, rows * N, rows, N, math.prod(batch))
    return R


def _transpose(x: Array) -> Array:
    *batch, M, N = x.shape
    out = Array.empty(tuple(batch) + (N, M), x.dtype)
    _util("TRANSPOSE", x, x.offset, N, M * N, out, out.offset, M, M * N, M, N, math.prod(batch))
    return out


def qr(a, mode: str = "reduced"):
    """numpy.linalg.qr for (..., M, N) float32 or float64 arrays, computed on the GPU in their
    dtype (blocked Householder).

    mode 'reduced' -> QRResult(Q (..., M, K), R (..., K, N)), K = min(M, N);
         'complete' -> QRResult(Q (..., M, M), R (..., M, N));
         'r' -> R (..., K, N);
         'raw' -> (h (..., N, M), tau (..., K)): LAPACK's reflectors, transposed as numpy returns
         them (householder_product(h^T, tau) rebuilds Q).
    R's diagonal may be negative (LAPACK's convention); tau = 0 where a column is already zero.
    """
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"qr: unrecognized mode {mode!r}: expected one of {', '.join(map(repr, _MODES))}")
    _tune_from_env()
    a = _check_matrix(a, "qr", float64=True)
    dt = _real(a)
    *batch, M, N = a.shape
    batch = tuple(batch)
    K = min(M, N)
    if K:  # the loop budget, before any GPU work
        panels = _plan(M, N, dt)[0]
        form_q = mode in ("reduced", "complete")
        rebuild = form_q and _rebuild_q(M)
        # the panels' T blocks serve the trailing columns, and Q where it is not given its own
        widths = [pl.width for pl in panels] if len(panels) > 1 or (form_q and not rebuild) else []
        built = [_apply_nb(M, dt, TUNE["q_nb"])] if rebuild else []
        _check_budget("qr", M, widths + built, max(M, N) * max(M, N) if mode == "complete" else M * N,
                      buildt=bool(built), dt=dt)
    out = _qr_recorded(asarray(a, dt), mode)
    return QRResult(*out) if mode in ("reduced", "complete") else out


@recipe(key=_tune_key)
def _qr_recorded(a: Array, mode: str):
    """qr's dispatches on a checked array, replayed for the same shape, mode and TUNE."""
    *batch, M, N = a.shape
    batch, K = tuple(batch), min(M, N)
    h, tau, T, panels, tsize = _factor(a)
    if mode == "raw":
        return _transpose(h), tau
    if mode == "r":
        return _triu(h, batch, M, N, K)
    ncols = M if mode == "complete" else K
    if _rebuild_q(M):
        T, tsize, blocks = _build_t(h, tau, _apply_nb(M, a.dtype, TUNE["q_nb"]))
    else:
        blocks = [(pl.p0, pl.kk, pl.width, pl.t_off) for pl in panels]
    Q = _form_q(h, M * N, N, blocks, T, tsize, M, ncols, batch)
    R = _triu(h, batch, M, N, M if mode == "complete" else K)
    return Q, R


# -- reflectors given by (h, tau) ------------------------------------------------------------------

def _rebuild_q(M: int) -> bool:
    """Whether qr forms Q from T blocks built anew (TUNE's q_nb wide) rather than the panels'."""
    return bool(TUNE["q_nb"]) and M >= TUNE["q_min_rows"]


def _check_reflectors(h, tau, name: str):
    h = _check_matrix(h, name, "h", float64=True)
    tau = _check_float(tau, name, "tau", float64=True)
    if tau.ndim < 1:
        raise ValueError(f"{name}: tau must have at least one dimension (..., K)")
    *hb, M, N = h.shape
    *tb, K = tau.shape
    if tuple(tb) != tuple(hb):
        raise ValueError(f"{name}: batch dimensions of h {tuple(hb)} and tau {tuple(tb)} differ")
    if K > min(M, N):
        raise ValueError(f"{name}: tau has {K} reflectors but h of shape {(M, N)} holds at most {min(M, N)}")
    return h, tau


def _apply_nb(M: int, dt=dtypes.float32, want: int | None = None) -> int:
    """Block width for reflectors over M rows of dtype dt: `want` (TUNE's apply_nb unless given),
    narrower where T's recurrence in qr_buildt would not fit the loop budget (_check_budget then
    raises if even 8 does not)."""
    nb = min(_widest(dt), max(4, pow2ceil(TUNE["apply_nb"] if want is None else want)))
    budget = launch.loop_budget()
    while budget is not None and nb > 8 and _buildt_cost(M, nb) > budget:
        nb //= 2
    return nb


def _build_t(h: Array, tau: Array, width: int):
    """T blocks of width `width` for every block of the reflectors: (T, per-matrix size, blocks)."""
    *batch, M, N = h.shape
    K = tau.shape[-1]
    B = math.prod(batch)
    nblocks = -(-K // width)
    tsize = nblocks * width * width
    T = Array.empty((max(1, B * tsize),), h.dtype)
    if nblocks and B:
        k = _kernel("qr_buildt.comp", {"NB": width, **grid.real_defines(h.dtype)}, 256)
        push = [h.offset, N, M * N, M, K, tau.offset, K, T.offset, tsize]
        _dispatch(k, [h.buffer, tau.buffer, T.buffer], push, nblocks, B, ((0, 2), (5, 6), (7, 8)))
    blocks = [(i * width, min(width, K - i * width), width, i * width * width) for i in range(nblocks)]
    return T, tsize, blocks


def householder_product(h, tau) -> Array:
    """torch.linalg.householder_product: the first N columns of H_1 ... H_K (H_i = I - tau_i v_i v_i^T,
    v_i below the diagonal of column i of h, unit diagonal implied) for h (..., M, N), M >= N,
    and tau (..., K), K <= N. Returns Q (..., M, N)."""
    _tune_from_env()
    h, tau = _check_reflectors(h, tau, "householder_product")
    *batch, M, N = h.shape
    if M < N:
        raise ValueError(f"householder_product: h of shape {(M, N)} needs M >= N")
    dt = _common(h, tau)
    nb = _apply_nb(M, dt)
    _check_budget("householder_product", M, [nb], M * N, buildt=True, dt=dt)
    return _householder_recorded(asarray(h, dt), asarray(tau, dt), nb)


@recipe(key=_tune_key)
def _householder_recorded(h: Array, tau: Array, nb: int) -> Array:
    """householder_product's dispatches on checked arrays (replayed as _qr_recorded's are)."""
    *batch, M, N = h.shape
    T, tsize, blocks = _build_t(h, tau, nb)
    return _form_q(h, M * N, N, blocks, T, tsize, M, N, tuple(batch))


def apply_q(h, tau, c, transpose: bool = False, side: str = "left") -> Array:
    """LAPACK ormqr: Q c, Q^T c (side='left', c (..., M, P)) or c Q, c Q^T (side='right', c (..., P, M))
    with Q = H_1 ... H_K from h (..., M, N) and tau (..., K), without forming Q. h and tau may also
    have no batch dimensions, applying the same Q to every matrix of c. Returns a new array."""
    if side not in ("left", "right"):
        raise ValueError(f"apply_q: side must be 'left' or 'right', got {side!r}")
    _tune_from_env()
    h, tau = _check_reflectors(h, tau, "apply_q")
    c = _check_matrix(c, "apply_q", "c", float64=True)
    *hb, M, N = h.shape
    *cb, c0, c1 = c.shape
    if (c0 if side == "left" else c1) != M:
        raise ValueError(f"apply_q: c of shape {c.shape} does not match Q of order {M} on the {side}")
    if hb and tuple(hb) != tuple(cb):
        raise ValueError(f"apply_q: batch dimensions of h {tuple(hb)} and c {tuple(cb)} differ")
    dt = _common(h, tau, c)
    nb = _apply_nb(M, dt)
    _check_budget("apply_q", M, [nb], c0 * c1, buildt=True, dt=dt)
    h, tau, c = (asarray(x, dt) for x in (h, tau, c))
    return _apply_q_recorded(h, tau, c, bool(transpose), side, nb)


@recipe(key=_tune_key)
def _apply_q_recorded(h: Array, tau: Array, c: Array, transpose: bool, side: str, nb: int) -> Array:
    """apply_q's dispatches on checked arrays (replayed as _qr_recorded's are)."""
    *hb, M, N = h.shape
    *cb, c0, c1 = c.shape
    dt = c.dtype
    B = math.prod(cb)
    T, tsize, blocks = _build_t(h, tau, nb)
    h_bs, t_bs = (M * N, tsize) if hb else (0, 0)
    # Work on a copy in the "left" orientation: (..., M, P). The right side is the left one transposed:
    # c Q = (Q^T c^T)^T.
    if side == "left":
        out = Array.empty(c.shape, dt)
        _util("COPY", c, c.offset, c1, c0 * c1, out, out.offset, c1, c0 * c1, c0, c1, B)
        P = c1
        trans = bool(transpose)
    else:
        out = _transpose(c)
        P = c0
        trans = not transpose
    # Q c = H_1 (H_2 (... H_K c)): blocks backward; Q^T c: blocks forward with T^T.
    order = blocks if trans else list(reversed(blocks))
    work: dict = {}
    for p0, kk, width, t_off in order:
        _apply_block(h, h.offset + p0 * N + p0, N, h_bs, M - p0, kk, width, T, T.offset + t_off, t_bs,
                     out, out.offset + p0 * P, P, M * P, P, trans, B, work=work)
    return out if side == "left" else _transpose(out)
