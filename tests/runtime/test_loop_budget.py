"""The loop budget: lavapipe's limiter as measured, loop_guard's copy of it, the device setting."""
import subprocess
from pathlib import Path

import pytest

import vkbackend as vk
from vkbackend import runtime
from vkbackend.runtime import compiler, devices, kernel, loop_guard, variants
from vkbackend.array import Array
from vkbackend.primitives import launch
from vkbackend.primitives.creation import poison

SHADER = str(Path(__file__).parent.parent / "shaders" / "loop_budget.comp")
NEST = str(Path(__file__).parent.parent / "shaders" / "loop_nest.comp")
# (outer, inner, tail) -> what a device without a limit counts: outer, outer*inner, tail, 8.
CASES = [(10, 100, 50), (1, 70000, 0), (70000, 0, 0), (3, 30000, 20000), (2, 40, 0)]


def _run(spirv, push, shader=SHADER, words=8):
    """Run `shader` as the module `spirv` (the plain or a guarded build) on 2 invocations."""
    k = runtime.get().kernel(shader, {}, 1).with_spirv(spirv)
    out = Array.empty((words,), vk.uint32)
    poison(out.buffer)
    k([out.buffer], push, (2,))
    got = out.numpy()
    assert (got[:words // 2] == got[words // 2:]).all()  # both invocations alike
    return tuple(int(v) for v in got[:words // 2])


def _limited(budget, outer, inner, tail):
    """What lavapipe's limiter leaves of the three loops: each iteration counts 1 at its end, each
    loop 1 more on its way out, and a loop ends once the count reaches the budget."""
    left, a, b = budget, 0, 0
    for _ in range(outer):
        a += 1
        for _ in range(inner):
            b += 1
            left -= 1
            if left <= 0:
                break
        left -= 1  # the inner loop's exit
        if left <= 0:
            break
        left -= 1  # the outer loop's end of iteration
        if left <= 0:
            break
    return a, b


@pytest.mark.parametrize("outer,inner,tail", CASES)
def test_the_device_limit_is_the_reported_budget(dev, outer, inner, tail):
    k = runtime.get().kernel(SHADER, {}, 1)
    got = _run(k.spirv, [outer, inner, tail])  # guarded already where the budget is emulated
    if dev.loop_budget is None:
        assert got == (outer, outer * inner, tail, 8)
    elif outer * (inner + 2) + tail + 2 <= dev.loop_budget:
        assert got == (outer, outer * inner, tail, 8)
    else:
        assert got[:2] == _limited(dev.loop_budget, outer, inner, tail)
        assert got[3] == 8  # the [[unroll]] loop is not counted


@pytest.mark.parametrize("budget", [2, 100, 1000])
@pytest.mark.parametrize("outer,inner,tail", CASES)
def test_guard_enforces_a_lowered_budget(outer, inner, tail, budget):
    got = _run(loop_guard.instrument(compiler.compile_shader(SHADER), budget), [outer, inner, tail])
    assert got[:2] == _limited(budget, outer, inner, tail)
    assert got[3] == 8
    if outer * (inner + 2) + 2 <= budget:  # room left for the do-while
        assert got[2] == tail if outer * (inner + 2) + tail + 2 <= budget else got[2] < tail


@pytest.mark.parametrize("path", variants.shader_files(), ids=lambda p: p.name)
def test_guard_handles_every_shader(path, tmp_path):
    """Every shader's loops (the first declared variant, subgroup features on) take the guard and
    still pass spirv-val: no loop form of the project's is beyond it."""
    val = compiler.spirv_val()
    if val is None:
        pytest.fail("spirv-val is not installed (make setup installs it)")
    defines = variants.parse(path.read_text())[0]
    defines.pop("+subgroup", None)
    features = {d: 1 for d in kernel._FEATURE_DEFINES.values()}
    spirv = compiler.compile_shader(str(path), {**features, **defines})
    guarded = loop_guard.instrument(spirv, 1000)
    out = tmp_path / "guarded.spv"
    out.write_bytes(guarded)
    res = subprocess.run([val, "--target-env", "vulkan1.1", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def _nest_limited(budget, n1, n2, n3, n4):
    """lavapipe's limiter on loop_nest.comp, simulated: each iteration's end counts 1 and stops the
    loop once the count reaches the budget; a loop that ends by itself counts 1 more for its own
    exit and 1 for each loop nested in it (they pass their ends once in the dead pass)."""
    left, counts = [budget], [0, 0]

    def loop(n, body, nested):
        for _ in range(n):
            body()
            left[0] -= 1
            if left[0] <= 0:
                return
        left[0] -= 1 + nested

    def inc(i):
        counts[i] += 1
    loop(n1, lambda: loop(n2, lambda: loop(n3, lambda: inc(0), 0), 1), 2)
    loop(n4, lambda: inc(1), 0)
    return tuple(counts)


NEST_CASES = [(1000, 20, 2, 100), (3000, 2, 1, 100), (100, 100, 5, 100), (7, 7, 1300, 5), (10, 1, 6000, 10),
              (20, 30, 40, 1000), (1, 1, 65530, 3)]


@pytest.mark.parametrize("n", NEST_CASES)
def test_nested_loops_count_their_dead_pass(dev, n):
    """Natively (lavapipe) and under the guard, each loop's exit costs 1 + the loops nested in it."""
    got = _run(compiler.compile_shader(NEST), list(n), NEST, 4)  # the driver's own limit only
    if dev.is_software:
        assert got == _nest_limited(devices.LAVAPIPE_LOOP_BUDGET, *n)
    else:
        assert got == (n[0] * n[1] * n[2], n[3])
    for budget in (65535, 5000, 777):
        assert _run(loop_guard.instrument(compiler.compile_shader(NEST), budget), list(n), NEST, 4) == \
            _nest_limited(budget, *n), budget


def test_budget_setting(monkeypatch):
    monkeypatch.delenv("VKBACKEND_LOOP_BUDGET", raising=False)
    assert devices._loop_budget(True) == (65535, False)
    assert devices._loop_budget(False) == (None, False)
    monkeypatch.setenv("VKBACKEND_LOOP_BUDGET", "500")
    assert devices._loop_budget(True) == (500, True)
    assert devices._loop_budget(False) == (500, True)
    monkeypatch.setenv("VKBACKEND_LOOP_BUDGET", "100000")
    assert devices._loop_budget(True) == (65535, True)
    for bad in ("x", "0", "1", "-5", str(2**31)):
        monkeypatch.setenv("VKBACKEND_LOOP_BUDGET", bad)
        with pytest.raises(ValueError, match="VKBACKEND_LOOP_BUDGET"):
            devices._loop_budget(True)


def test_budget_chunks(monkeypatch):
    rt = runtime.get()
    monkeypatch.setattr(rt.device.__class__, "loop_budget", 101, raising=False)
    monkeypatch.setattr(launch, "loop_budget", lambda: 101)
    assert launch.budget_chunks(100) == 1
    assert launch.budget_chunks(101) == 2
    assert launch.budget_chunks(100, per_trip=2) == 2
    assert launch.budget_chunks(10, per_trip=10, reserve=10) == 2
    assert vk.LoopBudgetError is launch.LoopBudgetError and issubclass(vk.LoopBudgetError, ValueError)
    with pytest.raises(vk.LoopBudgetError, match="loop budget of 101"):
        launch.budget_chunks(5, per_trip=60, reserve=50)
    monkeypatch.setattr(launch, "loop_budget", lambda: None)
    assert launch.budget_chunks(10**12, per_trip=1000) == 1
