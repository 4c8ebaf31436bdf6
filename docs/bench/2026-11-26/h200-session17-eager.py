"""The programs of tools/benchmarks/programs.py against the eager submit's wait (VKBACKEND_EAGER_US:
off, 0, 25, 50, 100, 200 us since the last submit), alternated slice by slice in one process (the
host's speed drifts between processes); ms per step, each setting's median over the rounds."""
import sys, json, statistics
sys.path[:0] = ["tools"]
from vkbackend import runtime
from benchmarks import programs

st = runtime.get().stream
SETTINGS = [None, 0, 25, 50, 100, 200]
CASES = [c for c in programs.cases(quick=True) if c["program"] in ("logreg", "mlp", "many_sizes")]
out = {}
for rnd in range(4):
    for us in SETTINGS:
        st.eager = us is not None
        st.eager_seconds = (us or 0) * 1e-6
        for case in CASES:
            r = programs.run_vk(case)
            key = f"{case['program']} eager={'off' if us is None else us}"
            out.setdefault(key, []).append(round(r["ms"], 4))
            print(rnd, key, round(r["ms"], 4), flush=True)
st.eager, st.eager_seconds = True, 100e-6
print("medians:")
for k, v in out.items():
    print(f"  {k:28s} {statistics.median(v):.4f} ms  {v}")
print(json.dumps(out))
