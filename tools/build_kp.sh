#!/usr/bin/env bash
# Build kp (Kompute 0.9.0) from its sdist, with the patches in third_party/kompute/,
# into a wheel for the running python3, without network access.
# Usage: tools/build_kp.sh SDIST OUTDIR      (PYTHON=... picks another interpreter)
set -euo pipefail
sdist=$(readlink -f "${1:?usage: build_kp.sh SDIST OUTDIR}")
outdir=${2:?usage: build_kp.sh SDIST OUTDIR}
python=${PYTHON:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$outdir"
outdir=$(readlink -f "$outdir")

"$python" -c 'import setuptools' 2>/dev/null || { echo "build_kp.sh: $python has no setuptools (pip install setuptools wheel)" >&2; exit 1; }
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
# setup.py appends this value character by character to `cmake --build -- -j`.
export KOMPUTE_PYTHON_NUM_PARALLEL_THREADS=$(( $(nproc) > 9 ? 9 : $(nproc) ))
"$python" -m pip wheel -q --no-deps --no-build-isolation -w "$outdir" "$src"
ls "$outdir"/kp-*.whl
