"""Benchmark modules for tools/bench.py. Each module <name>.py defines:

    NAME: str
    def cases(quick: bool) -> list[dict]      # JSON-able dicts, each with a unique "name"
    def run_vk(case: dict) -> dict            # metrics, at least {"ms": ...}; e.g. "gbps", "tflops"
    def run_torch(case: dict) -> dict | None  # the same metrics for the torch/CUDA reference;
                                              # imports torch inside (never at module level)

run_vk runs in the benchmark process (kp loaded); run_torch in a separate process, since importing
torch and kp into one process aborts. Time with common.time_vk / common.time_torch.
"""
