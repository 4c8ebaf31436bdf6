#!/usr/bin/env bash
# On the GPU machine of ../shared/gpu/README.md (after its enter.sh line): the test suite on the
# GPU, then the benchmarks against torch. Results go to ${OUT:-gpu-results}/.
#   tools/gpu_check.sh [pytest paths...]      BENCH="reduce,scan" limits the benchmarks
set -uo pipefail
out=${OUT:-gpu-results}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
python3 -m vkbackend info | tee "$out/info.txt"
timeout ${TEST_TIMEOUT:-900} python3 -m pytest -q -p no:cacheprovider -x --durations=15 "${@:-tests}" 2>&1 \
  | tee "$out/tests.log" | tail -30
if [ "${BENCH:-all}" != "none" ]; then
  only=""; [ "${BENCH:-all}" != "all" ] && only="--only $BENCH"
  timeout ${BENCH_TIMEOUT:-1200} python3 tools/bench.py $only --out "$out/bench" 2>&1 | tee "$out/bench.log" | tail -80
fi
