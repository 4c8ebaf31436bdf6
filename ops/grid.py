"""One kernel over a flat range of items, grid-stride, within the loop budget: the launch of the
elementwise-style kernels of cholesky.comp and jacobi.comp (batch folded into the item index)."""
from __future__ import annotations

from vkbackend import dtypes, runtime
from vkbackend.primitives.launch import grid_groups, workgroup_size


def real_defines(dt) -> dict:
    """The defines of cholesky.comp's and jacobi.comp's float64 variants (F64, and the types it
    enables) for matrices of dtype dt; none for float32."""
    return {"F64": 1, **dtypes.type_defines([dt])} if dt == dtypes.float64 else {}


def kernel(shader: str, defines: dict | None = None, wg: int | None = None):
    """The kernel of ops/<shader> with `defines` (workgroup: launch's 1-D size unless given)."""
    return runtime.get().kernel(f"ops/{shader}", defines or {}, wg or workgroup_size())


def over_items(k, buffers, push, items: int) -> None:
    """Record k over `items` items (one per invocation of its GRID_STRIDE_LOOP): enough workgroups
    that no invocation's loop exceeds the loop budget (LoopBudgetError otherwise, before any GPU
    work of this dispatch)."""
    if items <= 0:
        return
    k(buffers, list(push), (grid_groups(items, k.workgroup), 1, 1))


def check(items: int, wg: int) -> None:
    """LoopBudgetError now if `items` (the largest launch of an op) cannot fit the loop budget."""
    if items > 0:
        grid_groups(items, wg)
