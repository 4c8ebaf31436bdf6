"""The general convolution every pass is (as MLX's conv_general): shapes, stride, low/high
padding (negative crops), kernel dilation, input dilation (zeros between input elements),
groups and flip, checked against the operands' shapes; and how its implicit GEMM gathers: the
phase split of input-dilated passes and the order of the reduction's (channel, tap) pairs.

The kernels do all of it by index math, never by copies; the weight is read through strides,
so the channel-transposed weight of a backward-input pass or of a transposed convolution is
read in place.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

MAXD = 3  # spatial axes at most; fewer are padded with leading unit axes


@dataclass(frozen=True)
class Geom:
    """One general convolution, padded to 3 spatial axes with leading unit axes."""
    nd: int
    n: int
    cin: int
    cout: int
    groups: int
    si: tuple
    so: tuple
    k: tuple
    st: tuple
    kd: tuple
    id: tuple
    pl: tuple
    flip: bool
    wstrides: tuple  # (W_G, W_J, W_C): weight element of (group, out channel, in channel, tap 0)

    @property
    def cig(self) -> int:
        return self.cin // self.groups

    @property
    def cog(self) -> int:
        return self.cout // self.groups

    @property
    def kp(self) -> int:
        return math.prod(self.k)

    @property
    def ktot(self) -> int:
        return self.cig * self.kp

    @property
    def rows(self) -> int:
        return self.n * math.prod(self.so)

    def out_shape(self) -> tuple:
        return (self.n, self.cout) + self.so[MAXD - self.nd:]

    def in_shape(self) -> tuple:
        return (self.n, self.cin) + self.si[MAXD - self.nd:]

    def weight_size(self) -> int:
        return self.cout * self.cig * self.kp

    def flops(self) -> int:
        return 2 * self.rows * self.cout * self.ktot

    def spec(self, split_steps: int = 1, splits: int = 1) -> tuple:
        """The kernels' specialization constants (conv_gemm_view.glsl's order)."""
        return (self.n, self.cin, self.cout, self.groups, self.cig, self.cog, *self.si, *self.so, *self.k,
                *self.st, *self.kd, *self.id, *(p & 0xFFFFFFFF for p in self.pl), int(self.flip),
                *self.wstrides, split_steps, splits)

    def backward_input(self) -> "Geom":
        """The convolution of the cotangent that gives the input gradient: channels swap roles,
        the weight is read transposed (W_J <-> W_C) and mirrored, the forward stride becomes an
        input dilation and the forward input dilation a stride."""
        pl = tuple(d * (k - 1) - p for d, k, p in zip(self.kd, self.k, self.pl))
        wg, wj, wc = self.wstrides
        return Geom(self.nd, self.n, self.cout, self.cin, self.groups, self.so, self.si, self.k, self.id,
                    self.kd, self.st, pl, not self.flip, (wg, wc, wj))


def pad3(t: tuple, fill: int) -> tuple:
    return (fill,) * (MAXD - len(t)) + tuple(t)


def build(fn, xshape, wshape, nd, stride, plo, phi, kd, idil, groups, flip, transposed_weight) -> Geom:
    """The geometry of input `xshape` and weight `wshape` (C_in, C_out / groups, *k when
    transposed_weight, else C_out, C_in / groups, *k) under the checked parameters; ValueError
    naming `fn` and the culprit where the shapes do not fit them."""
    if len(wshape) != nd + 2:
        raise ValueError(f"{fn}: weight must have {nd + 2} dimensions, got shape {wshape}")
    if len(xshape) != nd + 2:
        raise ValueError(f"{fn}: input must have {nd + 2} dimensions (batch, channels, {nd} spatial), "
                         f"got shape {xshape}")
    n, cin = xshape[0], xshape[1]
    spatial, kernel = tuple(xshape[2:]), tuple(wshape[2:])
    if cin < 1 or any(s < 1 for s in spatial):
        raise ValueError(f"{fn}: input has an empty channel or spatial dimension: shape {xshape}")
    if any(k < 1 for k in kernel) or wshape[0] < 1 or wshape[1] < 1:
        raise ValueError(f"{fn}: weight has an empty dimension: shape {wshape}")
    if cin % groups:
        raise ValueError(f"{fn}: input channels ({cin}) not divisible by groups ({groups})")
    kpn = math.prod(kernel)
    if transposed_weight:  # (C_in, C_out / groups, *k)
        if wshape[0] != cin:
            raise ValueError(f"{fn}: weight's first dimension ({wshape[0]}) must equal the input "
                             f"channels ({cin})")
        cog = wshape[1]
        cout = cog * groups
        cig = cin // groups
        wstr = (cig * cog * kpn, kpn, cog * kpn)
    else:  # (C_out, C_in / groups, *k)
        cout, cig = wshape[0], wshape[1]
        if cout % groups:
            raise ValueError(f"{fn}: output channels ({cout}) not divisible by groups ({groups})")
        if cig * groups != cin:
            raise ValueError(f"{fn}: weight expects {cig} input channels per group (C_in = "
                             f"{cig * groups} with groups={groups}) but the input has {cin}")
        cog = cout // groups
        wstr = (cog * cig * kpn, cig * kpn, kpn)
    so = []
    for d in range(nd):
        eff_in = (spatial[d] - 1) * idil[d] + 1 + plo[d] + phi[d]
        eff_k = (kernel[d] - 1) * kd[d] + 1
        if eff_in < eff_k:
            raise ValueError(f"{fn}: kernel size {eff_k} (with dilation) is larger than the padded input "
                             f"size {eff_in} along spatial dimension {d}")
        so.append((eff_in - eff_k) // stride[d] + 1)
    return Geom(nd, n, cin, cout, groups, pad3(spatial, 1), pad3(tuple(so), 1), pad3(kernel, 1),
                pad3(stride, 1), pad3(kd, 1), pad3(idil, 1), pad3(plo, 0), bool(flip), wstr)


# -- the implicit GEMM's layout ------------------------------------------------------------------
# Where input dilation meets stride 1 (backward-input of a strided convolution, a transposed
# convolution), the kernels split the outputs by phase (position mod dilation) and reduce over
# only the taps that meet input elements, not the inserted zeros.
def phases(geom: Geom, cfg: dict) -> int:
    """Phases (prod of the input dilation) when the phase split applies, else 1: stride 1, some
    input dilation, and kernel dilation coprime with it on every axis (cfg's phased=0 turns it off)."""
    nph = math.prod(geom.id)
    ok = (nph > 1 and all(s == 1 for s in geom.st)
          and all(math.gcd(d, i) == 1 for d, i in zip(geom.kd, geom.id)))
    return nph if ok and cfg.get("phased", 1) else 1


def phase_extents(geom: Geom, cfg: dict, max_count) -> tuple:
    """(phases, output positions, taps) per phase at most: input dilation's phases where the
    grid's z can hold groups x phases, else one."""
    nph = phases(geom, cfg)
    if geom.groups * nph > max_count[2]:
        nph = 1
    if nph == 1:
        return 1, geom.rows, geom.kp
    rows = geom.n * math.prod(-(-o // i) for o, i in zip(geom.so, geom.id))
    return nph, rows, math.prod(-(-k // i) for k, i in zip(geom.k, geom.id))


GATHERS = {"flat": 0, "uniform": 1, "table": 2}  # the kernels' GATHER define


def gather(geom: Geom, cfg: dict, nph: int, kp: int, bk: int) -> tuple:
    """(gather, table entries) of conv_gemm.comp / conv_coopmat.comp for reduction stages of bk:
    channel-chunked at one tap (uniform) unless its padding wastes more than an eighth of the
    steps, then flat through a shared-memory table of (channel, tap) offsets where it fits (no
    input dilation, taps < 1024, <= 2048 pairs), else flat; cfg's gather overrides."""
    steps_uniform = kp * -(-geom.cig // bk)
    steps_flat = -(-(geom.cig * kp) // bk)
    table_n = steps_flat * bk
    table_ok = (nph == 1 and all(i == 1 for i in geom.id)
                and all(d * (k - 1) < 1024 for d, k in zip(geom.kd, geom.k)) and table_n <= 2048)
    kind = cfg.get("gather")
    if kind is None:
        if steps_uniform * 8 <= steps_flat * 9:
            kind = "uniform"
        else:
            kind = "table" if table_ok else "flat"
    if kind == "table" and not table_ok:
        kind = "flat"
    return kind, table_n


def weight_j_fast(geom: Geom, kind: str) -> bool:
    """Whether weight tile loads run along the output channel (B_J_FAST): along the smaller
    weight stride for the uniform gather, where that stride is 1 for the flat ones."""
    _, wj, wc = geom.wstrides
    return wj < wc if kind == "uniform" else wj == 1
