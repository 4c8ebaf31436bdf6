#!/usr/bin/env bash
# The array API standard's conformance suite (data-apis/array-api-tests, a copy at
# ../shared/array-api-tests: its PROVENANCE.md) against vkbackend on lavapipe, at one vector width.
#   tools/array_api_tests.sh                 the whole suite (make test-array-api)
#   tools/array_api_tests.sh test_linalg.py  some of its files, or -k/-x/... (passed to pytest)
# Environment: ARRAY_API_TESTS_DIR (the suite; default ../shared/array-api-tests), MAX_EXAMPLES
# (hypothesis examples per test, default 50: a minute or two on two cores), LP_WIDTH (256).
# The suite runs unmodified; tests/array_api/vk_suite_plugin.py lets it import (it reads xp.float64
# and a complex dtype at import) and tests/array_api/skips.txt names the tests skipped, each with
# its reason: defects of the suite and dtypes vkbackend does not have, nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
suite=$(cd "${ARRAY_API_TESTS_DIR:-../shared/array-api-tests}" 2>/dev/null && pwd) || {
  echo "array_api_tests: no suite at ${ARRAY_API_TESTS_DIR:-../shared/array-api-tests} (set ARRAY_API_TESTS_DIR)" >&2; exit 1; }
PY=$root/.venv/bin/python
"$PY" -c 'import hypothesis, ndindex, pytest_jsonreport' 2>/dev/null || {
  echo "array_api_tests: hypothesis, ndindex and pytest-json-report are missing from .venv: run make setup" >&2; exit 1; }
w=${LP_WIDTH:-256}
args=() files=()
for a in "$@"; do
  case "$a" in
    test_*.py*) files+=("$suite/array_api_tests/$a") ;;
    *) args+=("$a") ;;
  esac
done
if [ ${#files[@]} -eq 0 ]; then
  files=("$suite/array_api_tests")
fi
# The suite's directory is shared and read-only to us: no bytecode, no pytest cache, and
# hypothesis's example database in a scratch directory (cwd there too: nothing lands in either tree).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
VKBACKEND_DEVICE=llvmpipe LP_NATIVE_VECTOR_WIDTH=$w MESA_SHADER_CACHE_DIR=$HOME/.cache/vkbackend/mesa-w$w \
VKBACKEND_POISON=1 PYTHONDONTWRITEBYTECODE=1 HYPOTHESIS_STORAGE_DIRECTORY=$scratch/hypothesis \
PYTHONPATH=$root/tests/array_api:$suite:$root${PYTHONPATH:+:$PYTHONPATH} \
ARRAY_API_TESTS_MODULE=vkbackend \
  "$PY" -m pytest -p vk_suite_plugin -p no:cacheprovider --rootdir "$suite" \
    --skips-file "$root/tests/array_api/skips.txt" --max-examples "${MAX_EXAMPLES:-50}" --disable-deadline \
    -q -rfE --tb=short "${files[@]}" "${args[@]}"
