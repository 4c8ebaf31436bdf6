"""tools/bench.py's --rounds: one case's rounds reported as its median round."""
import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("bench", Path(__file__).resolve().parents[2] / "tools" / "bench.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_median_round_keeps_its_metrics_and_lists_every_time():
    runs = [{"ms": 3.0, "gbps": 1.0}, {"ms": 1.0, "gbps": 3.0}, {"ms": 2.0, "gbps": 2.0}]
    assert bench._median(runs) == {"ms": 2.0, "gbps": 2.0, "rounds_ms": [3.0, 1.0, 2.0]}
    # an even count takes the lower middle (the faster of the two)
    assert bench._median(runs[:2])["ms"] == 1.0


def test_a_single_round_as_it_is_and_a_failed_round_shows():
    one = {"ms": 5.0}
    assert bench._median([one]) is one
    failed = [{"ms": 1.0}, {"error": "boom"}, {"ms": 2.0}]
    assert bench._median(failed) is failed[1]
