#!/usr/bin/env bash
# The array API standard's conformance suite (data-apis/array-api-tests, a copy at
# ../shared/array-api-tests: its PROVENANCE.md) against vkbackend on lavapipe, at one vector width.
#   tools/array_api_tests.sh                 the whole suite (make test-array-api)
#   tools/array_api_tests.sh test_linalg.py  some of its files, or -k/-x/... (passed to pytest)
# Environment: ARRAY_API_TESTS_DIR (the suite; default ../shared/array-api-tests), MAX_EXAMPLES
# (hypothesis examples per test, default 50: a minute or two on two cores), LP_WIDTH (256).
# The suite runs unmodified; tests/array_api/vk_suite_plugin.py lets it import (it reads xp.float64
# and a complex dtype at import) and tests/array_api/skips.txt names the tests skipped, each with
# its reason: defects of the suite and dtypes vkbackend does not have, nothing else. The
# QR-based decompositions in test_linalg.py run without float64 (see FLOAT32_ONLY below).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
suite=$(cd "${ARRAY_API_TESTS_DIR:-../shared/array-api-tests}" 2>/dev/null && pwd) || {
  echo "array_api_tests: no suite at ${ARRAY_API_TESTS_DIR:-../shared/array-api-tests} (set ARRAY_API_TESTS_DIR)" >&2; exit 1; }
PY=$root/.venv/bin/python
"$PY" -c 'import hypothesis, ndindex, pytest_jsonreport' 2>/dev/null || {
  echo "array_api_tests: hypothesis, ndindex and pytest-json-report are missing from .venv: run make setup" >&2; exit 1; }
w=${LP_WIDTH:-256}
# QR and what is built on it (det, slogdet, inv, solve, matrix_power, svd's U, pinv) compute in
# float32 only so far: their tests run with float64 skipped (the suite's own
# ARRAY_API_TESTS_SKIP_DTYPES); the rest of test_linalg.py (cholesky, eigh, eigvalsh, svdvals,
# matrix_rank and matrix_norm in float64 too) and every other file with every dtype the device has.
FLOAT32_ONLY="det or inv or matrix_power or pinv or qr or solve or (svd and not svdvals)"
args=() files=() linalg=""
for a in "$@"; do
  case "$a" in
    test_linalg.py*) linalg="$suite/array_api_tests/$a" ;;
    test_*.py*) files+=("$suite/array_api_tests/$a") ;;
    *) args+=("$a") ;;
  esac
done
if [ ${#files[@]} -eq 0 ] && [ -z "$linalg" ]; then
  files=("$suite/array_api_tests" "--ignore=$suite/array_api_tests/test_linalg.py")
  linalg="$suite/array_api_tests/test_linalg.py"
fi
# The suite's directory is shared and read-only to us: no bytecode, no pytest cache, and
# hypothesis's example database in a scratch directory (cwd there too: nothing lands in either tree).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
run() {  # run SKIP_DTYPES PYTEST_ARGS...
  local skip=$1; shift
  VKBACKEND_DEVICE=llvmpipe LP_NATIVE_VECTOR_WIDTH=$w MESA_SHADER_CACHE_DIR=$HOME/.cache/vkbackend/mesa-w$w \
  VKBACKEND_POISON=1 PYTHONDONTWRITEBYTECODE=1 HYPOTHESIS_STORAGE_DIRECTORY=$scratch/hypothesis \
  PYTHONPATH=$root/tests/array_api:$suite:$root${PYTHONPATH:+:$PYTHONPATH} \
  ARRAY_API_TESTS_MODULE=vkbackend ARRAY_API_TESTS_SKIP_DTYPES=$skip \
    "$PY" -m pytest -p vk_suite_plugin -p no:cacheprovider --rootdir "$suite" \
      --skips-file "$root/tests/array_api/skips.txt" --max-examples "${MAX_EXAMPLES:-50}" --disable-deadline \
      -q -rfE --tb=short "$@"
}
status=0
if [ ${#files[@]} -gt 0 ]; then run "" "${files[@]}" "${args[@]}" || status=$?; fi
if [ -n "$linalg" ]; then
  run "" "$linalg" -k "not ($FLOAT32_ONLY)" "${args[@]}" || status=$?
  run float64 "$linalg" -k "$FLOAT32_ONLY" "${args[@]}" || status=$?
fi
exit $status
