"""issue 17: torch and vkbackend in one process. Importing torch into a process that had loaded
kp aborted (`free(): invalid pointer`); patch 0007 gives Kompute's module a pybind11 registry of
its own. Each order runs in a child interpreter (an abort there fails the test, not the suite)."""
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

CODE = {
    "vkbackend first": """
        import numpy as np, vkbackend as vk
        x = vk.asarray(np.arange(8, dtype=np.float32))
        a = (x * 2 + 1).numpy()
        import torch
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        t = (torch.arange(8, dtype=torch.float32, device=dev) * 2 + 1).cpu().numpy()
        b = (vk.asarray(t) + x).numpy()
        print((a == t).all() and (b == t + np.arange(8)).all())
    """,
    "torch first": """
        import torch
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        t = (torch.arange(8, dtype=torch.float32, device=dev) * 2 + 1).cpu()
        import numpy as np, vkbackend as vk
        y = vk.from_dlpack(t)
        print(((y - 1).numpy() == np.arange(8, dtype=np.float32) * 2).all() and float(torch.ones(2, device=dev).sum()) == 2.0)
    """,
}


@pytest.mark.parametrize("order", sorted(CODE))
def test_torch_and_vkbackend_in_one_process(order):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(CODE[order])], capture_output=True, text=True,
                       timeout=300, env=os.environ.copy())
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().endswith("True"), r.stdout
