"""float16 backward-weight, n32 c64 56^2 3x3 -> 64 (conv_coopmat_wgrad.comp, packed) on the H200: a
sweep of its configuration (VKBACKEND_CONV_CONFIG wgrad16.*) through tools/benchmarks/conv.py,
two rounds alternated in one process, with the plan each took."""
import sys, json
sys.path[:0] = ["tools"]
from benchmarks import conv

CONFIGS = ["", "wgrad16.splits=15", "wgrad16.splits=58", "wgrad16.splits=116",
           "wgrad16.BK=64", "wgrad16.BK=64,wgrad16.splits=58", "wgrad16.STAGES=1",
           "wgrad16.SGM=1,wgrad16.SGN=2", "wgrad16.SGM=2,wgrad16.SGN=1", "wgrad16.SGM=4,wgrad16.SGN=2",
           "wgrad16.path=coopmat", "wgrad16.BK=16"]
out = {}
for rnd in range(2):
    for cfg in CONFIGS:
        case = {"name": "n32_c64 wgrad f16", "shape": "n32_c64_56_k3_co64", "pass": "backward_weight",
                "dtype": "float16"}
        if cfg:
            case["config"] = cfg
        r = conv.run_vk(case)
        out.setdefault(cfg or "default", []).append(r)
        print(rnd, f"{cfg or 'default':40s}", {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()},
              flush=True)
print(json.dumps(out))
