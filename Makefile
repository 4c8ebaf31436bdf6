# The two commands of README.md: `make demo` and `make test`. Both set up what is missing first.
PY := .venv/bin/python
# lavapipe's subgroup size follows LP_NATIVE_VECTOR_WIDTH: 128 -> 4, 256 -> 8, 512 -> 16.
WIDTHS := 128 256 512
# Mesa's on-disk shader cache does not key on the vector width: one cache per width, or a kernel
# compiled for one subgroup size runs at another.
MESA_CACHE = $(HOME)/.cache/vkbackend/mesa
# Every subgroup feature off: the shared-memory fallbacks.
NO_SUBGROUP := vote,arithmetic,ballot,shuffle,shuffle_relative,clustered,quad
# A loop budget far below lavapipe's 65535, enforced in every kernel (vkbackend/runtime/loop_guard.py):
# a planner that ignores the budget gives wrong numbers here at the suite's small sizes.
SMALL_BUDGET := 1024
PYTEST_ARGS ?=

# The array API standard's conformance suite (tools/array_api_tests.sh): a copy beside the checkout.
ARRAY_API_TESTS_DIR ?= ../shared/array-api-tests

.PHONY: setup demo test test-array-api test-gpu info shaders bench clean

setup:
	@bash tools/setup.sh

demo: setup
	@$(PY) -m vkbackend demo

test: setup
	@set -e; for w in $(WIDTHS); do \
	  echo "== lavapipe, LP_NATIVE_VECTOR_WIDTH=$$w"; \
	  MESA_SHADER_CACHE_DIR=$(MESA_CACHE)-w$$w LP_NATIVE_VECTOR_WIDTH=$$w VKBACKEND_DEVICE=llvmpipe \
	    $(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS); \
	done
	@echo "== lavapipe, LP_NATIVE_VECTOR_WIDTH=256, loop budget lowered to $(SMALL_BUDGET) (every kernel carries the counter)"
	@MESA_SHADER_CACHE_DIR=$(MESA_CACHE)-w256 LP_NATIVE_VECTOR_WIDTH=256 VKBACKEND_DEVICE=llvmpipe \
	  VKBACKEND_LOOP_BUDGET=$(SMALL_BUDGET) $(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)
	@echo "== lavapipe, LP_NATIVE_VECTOR_WIDTH=256, subgroup features off: $(NO_SUBGROUP)"
	@MESA_SHADER_CACHE_DIR=$(MESA_CACHE)-w256 LP_NATIVE_VECTOR_WIDTH=256 VKBACKEND_DEVICE=llvmpipe \
	  VKBACKEND_DISABLE_SUBGROUP=$(NO_SUBGROUP) \
	  $(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) tests/shaders tests/primitives tests/ops

# The array API conformance suite at one vector width, 50 examples per test (1-3 minutes on two
# cores); its skips, each with a reason: tests/array_api/skips.txt. Not part of `make test` while
# it still fails (README: the array API, conformance).
test-array-api: setup
	@echo "== array API conformance suite ($(ARRAY_API_TESTS_DIR)), lavapipe, LP_NATIVE_VECTOR_WIDTH=256"
	@ARRAY_API_TESTS_DIR=$(ARRAY_API_TESTS_DIR) LP_WIDTH=256 bash tools/array_api_tests.sh

test-gpu: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

info: setup
	@$(PY) -m vkbackend info

shaders: setup
	@$(PY) -m vkbackend compile-shaders

bench: setup
	$(PY) tools/bench.py

clean:
	rm -rf .venv build *.egg-info
