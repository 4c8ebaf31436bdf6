#!/usr/bin/env bash
# Build kp (Kompute 0.9.0) from its sdist, with the patches in third_party/kompute/, for the
# running python3, without network access.
# Usage: tools/build_kp.sh SDIST OUTDIR                a kp wheel (module `kp`) in OUTDIR
#        tools/build_kp.sh --module NAME SDIST OUTDIR  only the extension module, named NAME, in
#                                                      OUTDIR (setup.py builds vkbackend's private
#                                                      vkbackend._kp so: --module _kp)
# PYTHON=... picks another interpreter.
set -euo pipefail
module=""
if [ "${1:-}" = "--module" ]; then
  module=${2:?usage: build_kp.sh --module NAME SDIST OUTDIR}
  shift 2
fi
sdist=$(readlink -f "${1:?usage: build_kp.sh [--module NAME] SDIST OUTDIR}")
outdir=${2:?usage: build_kp.sh [--module NAME] SDIST OUTDIR}
python=${PYTHON:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$sdist" ] || { echo "build_kp.sh: no kp sdist at $sdist" >&2; exit 1; }
mkdir -p "$outdir"
outdir=$(readlink -f "$outdir")

if [ -z "$module" ]; then
  "$python" -c 'import setuptools' 2>/dev/null || { echo "build_kp.sh: $python has no setuptools (pip install setuptools wheel)" >&2; exit 1; }
fi
for tool in cmake c++; do  # and patch or git, below
  command -v $tool >/dev/null || { echo "build_kp.sh: $tool not found (apt-get install cmake g++)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$sdist" -C "$work"
src=$(echo "$work"/kp-*)
for p in "$root"/third_party/kompute/*.patch; do
  if command -v patch >/dev/null; then
    patch -d "$src" -p1 --quiet --forward < "$p"
  else
    (cd "$src" && git apply -p1 "$p")   # git apply works outside a repository too
  fi
done

# Use the system's Vulkan headers, fmt and pybind11 instead of fetching them.
export KOMPUTE_OPT_USE_BUILT_IN_VULKAN_HEADER=OFF KOMPUTE_OPT_USE_BUILT_IN_FMT=OFF \
       KOMPUTE_OPT_USE_BUILT_IN_PYBIND11=OFF KOMPUTE_OPT_INSTALL=OFF \
       KOMPUTE_OPT_DISABLE_VULKAN_VERSION_CHECK=ON
jobs=$(( $(nproc) > 9 ? 9 : $(nproc) ))

if [ -n "$module" ]; then
  # The arguments kp's setup.py gives CMake (with patch 0003's fix), plus the module's name and a
  # pybind11 registry of its own (patch 0007).
  read -r pyexe pyinc < <("$python" -c 'import sys, sysconfig; print(sys.executable, sysconfig.get_path("include"))')
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_LIBRARY_OUTPUT_DIRECTORY="$work/out" -DCMAKE_CXX_FLAGS="-fPIC -DVERSION_INFO=\\\"0.9.0\\\"" \
    -DKOMPUTE_OPT_BUILD_PYTHON=ON -DKOMPUTE_OPT_LOG_LEVEL=Off -DKOMPUTE_OPT_USE_SPDLOG=Off \
    -DKOMPUTE_PYTHON_MODULE_NAME="$module" -DKOMPUTE_PYBIND11_INTERNALS_KIND="_vkbackend$module" \
    -DPYTHON_EXECUTABLE="$pyexe" -DPYTHON_INCLUDE_DIR="$pyinc" >"$work/cmake.log" 2>&1 ||
    { cat "$work/cmake.log" >&2; echo "build_kp.sh: CMake could not configure kp (above); it needs the Vulkan headers, fmt's and pybind11's headers and Python's" >&2; exit 1; }
  cmake --build "$work/build" -j "$jobs" >"$work/build.log" 2>&1 ||
    { tail -50 "$work/build.log" >&2; echo "build_kp.sh: the kp build failed (above)" >&2; exit 1; }
  cp "$work/out/$module".*so "$outdir"/
  ls "$outdir/$module".*so
  exit 0
fi

# setup.py appends this value character by character to `cmake --build -- -j`.
export KOMPUTE_PYTHON_NUM_PARALLEL_THREADS=$jobs
"$python" -m pip wheel -q --no-deps --no-build-isolation -w "$outdir" "$src"
ls "$outdir"/kp-*.whl
