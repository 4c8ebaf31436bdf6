"""README's first command: `make demo` (python -m vkbackend demo) ends with "demo: OK"."""
import subprocess
import sys


def test_demo_passes():
    r = subprocess.run([sys.executable, "-m", "vkbackend", "demo"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert r.stdout.rstrip().endswith("demo: OK"), r.stdout[-2000:]
