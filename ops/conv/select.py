"""Which kernels run each pass of a convolution: the one place that decides it. The recorders
(record.py), api.py's checks before any GPU work, and tools/benchmarks/conv.py's report all
ask select().

Families, tried in this order:
  float32 forward (and backward-input): Winograd (winograd.py, 3x3 stride-1 layers with wide
    channels on hardware), a batched GEMM on primitives/matmul.comp (pointwise layers without
    bias on hardware), else the float32 kernels (plan_f32.py).
  float16 forward: the cooperative-matrix kernels (plan_f16.py) from tuning.COOPMAT_MIN_COG
    output channels where the device has them, else conv_gemm.comp reading the halves in place
    (16-bit storage), else the float32 route on widened copies ("cast").
  backward-weight: conv_coopmat_wgrad*.comp for float16, Winograd for float32, else
    conv_wgrad.comp (float16 read in place, or cast as above).
  bias gradient: conv_reduce.comp (or cast as above).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ... import runtime
from . import col2im, config, loops, plan_f16, plan_f32, tuning, winograd
from .kernels import GEMM, HALF_STORAGE, DeviceKey, coopmat_key, device_key

PASSES = ("forward", "input", "wgrad", "bias")


@dataclass(frozen=True)
class Route:
    """A pass's kernels: family winograd (plan a WinogradPlan), matmul (no plan), coopmat or
    kernel (a kernels.Plan; for the bias, (batches, positions) per workgroup), col2im (a
    col2im.Plan), or cast (the float32 route `inner` on widened copies of float16 operands,
    rounded back)."""
    family: str
    plan: object = None
    inner: "Route | None" = None

    def describe(self, half: bool = False) -> str:
        if self.family == "cast":
            return "float32 kernels on float16 widened and rounded back: " + self.inner.describe()
        if self.family == "col2im":
            return self.plan.describe()
        if self.family == "matmul":
            return "matmul.comp: a batched GEMM (1x1)"
        if self.family == "kernel" and isinstance(self.plan, tuple):
            return f"conv_reduce.comp, {self.plan[0]} images x {self.plan[1]} positions per workgroup"
        text = self.plan.describe()
        return ("float16 read in place by " + text) if half and self.family == "kernel" else text


def plan(kind: str, geom, has_bias: bool = False):
    """The cached plan of one family for a pass on the open device, within its loop budget:
    'forward' (conv_gemm.comp / conv_direct.comp, also backward-input), 'wgrad' (conv_wgrad.comp),
    'forward16' (None where the cooperative-matrix kernels would pass the budget), 'wgrad16'
    (None where float16 backward-weight runs the float32 kernels), 'winograd_fwd' and 'winograd'
    (backward-weight; None where the GEMM kernels run instead)."""
    dev = runtime.get().device
    raw = config.raw()
    budget = loops.loop_budget()
    if kind == "forward":
        return plan_f32.plan_forward(geom, has_bias, device_key(dev), raw, budget)
    if kind == "wgrad":
        return plan_f32.plan_wgrad(geom, device_key(dev), raw, budget)
    if kind == "forward16":
        return plan_f16.plan_coopmat(geom, has_bias, coopmat_key(dev), raw, budget)
    if kind == "wgrad16":
        return plan_f16.plan_wgrad_coopmat(geom, coopmat_key(dev), raw, budget)
    if kind in ("winograd", "winograd_fwd"):
        fwd = kind == "winograd_fwd"
        cfg = tuple(sorted(config.parse(raw)["fwd" if fwd else "wgrad"].items()))
        return (winograd.plan_forward if fwd else winograd.plan_wgrad)(geom, device_key(dev), cfg, budget)
    raise ValueError(f"conv plan: unknown kind {kind!r}")


def pointwise_matmul(geom, has_bias: bool, devkey: DeviceKey, cfg_raw: str) -> bool:
    """Whether a float32 forward runs as a batched GEMM on primitives/matmul.comp: 1x1 kernels,
    stride 1, no padding or input dilation, one group, no bias (matmul.comp has no epilogue), the
    weight's channels along one unit stride; by default on hardware from tuning.POINTWISE_MIN_COG
    output channels and POINTWISE_MIN_POSITIONS positions (fwd.path=matmul forces it)."""
    path = config.parse(cfg_raw)["fwd"].get("path")
    pointwise = (geom.k == (1, 1, 1) and geom.st == (1, 1, 1) and geom.id == (1, 1, 1) and geom.pl == (0, 0, 0)
                 and geom.so == geom.si and geom.groups == 1 and 1 in geom.wstrides[1:]
                 and geom.n <= devkey.max_count[2] and not has_bias)
    if path is None:
        return (pointwise and not devkey.software and geom.cog >= tuning.POINTWISE_MIN_COG
                and math.prod(geom.so) >= tuning.POINTWISE_MIN_POSITIONS)
    return pointwise and path == "matmul"


def _coopmat_forward(geom, dev) -> bool:
    """Whether a float16 forward tries the cooperative-matrix kernels."""
    cast = config.parse(config.raw())["f16"].get("path") == "cast"
    return not cast and geom.cog >= tuning.COOPMAT_MIN_COG and coopmat_key(dev) is not None


def select(pass_: str, geom, half: bool, has_bias: bool = False) -> Route:
    """The route of one pass ('forward'; 'input', the backward-input of the forward convolution
    geom: col2im, or the forward route of geom.backward_input(); 'wgrad'; 'bias', for a batch of
    at least one) of geom, float16 operands where `half`, every plan made: errors (a bad config,
    LoopBudgetError) come from here, before any GPU work."""
    dev = runtime.get().device
    if pass_ == "input":
        if col2im.wanted(geom, dev, config.raw()):  # float16: on widened copies
            route = Route("col2im", col2im.plan(geom))
            return Route("cast", inner=route) if half else route
        return select("forward", geom.backward_input(), half)
    if pass_ == "forward":
        if not half:
            wp = plan("winograd_fwd", geom)
            if wp is not None:
                return Route("winograd", wp)
            if pointwise_matmul(geom, has_bias, device_key(dev), config.raw()):
                return Route("matmul")
        elif _coopmat_forward(geom, dev):
            p = plan("forward16", geom, has_bias)
            if p is not None:
                return Route("coopmat", p)
        p = plan("forward", geom, has_bias)
        if half and (p.shader != GEMM or not HALF_STORAGE <= dev.features):
            return Route("cast", inner=select("forward", geom, False, has_bias))
        return Route("kernel", p)
    if pass_ == "wgrad":
        if half:
            p = plan("wgrad16", geom)
            if p is not None:
                return Route("coopmat", p)
            if not HALF_STORAGE <= dev.features:
                return Route("cast", inner=select("wgrad", geom, False))
        else:
            wp = plan("winograd", geom)
            if wp is not None:
                return Route("winograd", wp)
        return Route("kernel", plan("wgrad", geom))
    if pass_ == "bias":
        route = Route("kernel", loops.bias_chunks(geom))
        return Route("cast", inner=route) if half and not HALF_STORAGE <= dev.features else route
    raise ValueError(f"conv select: unknown pass {pass_!r}; passes: {', '.join(PASSES)}")
