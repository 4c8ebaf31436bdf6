"""tools/setup.sh: its checks find what the build and the runtime need by looking for it (no
package database), driven here through their inputs (PATH, CXX, the VKB_*_DIRS search lists)
with fake tools and files; no root, nothing installed."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "tools" / "setup.sh"
# What the script itself runs besides the tools under test.
BASICS = ["bash", "sh", "cat", "sed", "grep", "cut", "sort", "tr", "mktemp", "rm", "basename",
          "dirname", "uname", "env", "ls", "head", "sha256sum", "readlink"]
LDCONFIG_HIT = "\tlibvulkan.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libvulkan.so.1\n"


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


@pytest.fixture
def env(tmp_path):
    """A bare environment: PATH holds only the basics (no compilers, cmake, apt-get, dpkg), an
    empty ldconfig cache; the search lists point at empty dirs under tmp_path."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in BASICS:
        real = shutil.which(tool)
        if real:
            (bin_dir / tool).symlink_to(real)
    for d in ("lib", "icd", "include"):
        (tmp_path / d).mkdir()
    # setup.sh also looks in /sbin for ldconfig: an empty cache stands in for it
    script(bin_dir / "ldconfig", 'echo "0 libs found in cache"\n')
    return {"PATH": str(bin_dir), "HOME": str(tmp_path), "VKB_LIB_DIRS": str(tmp_path / "lib"),
            "VKB_ICD_DIRS": str(tmp_path / "icd"), "VKB_INCLUDE_DIRS": str(tmp_path / "include"),
            "PYTHON": str(ROOT / ".venv" / "bin" / "python")}


def call(env, code: str):
    """Source setup.sh (functions only) and run `code`."""
    return subprocess.run(["bash", "-c", f'source "{SETUP}"; {code}'], env=env, capture_output=True,
                          text=True, timeout=60)


def ok(env, check: str) -> bool:
    return call(env, check).returncode == 0


def bin_of(env) -> Path:
    return Path(env["PATH"].split(":")[0])


def satisfy_runtime(env):
    script(bin_of(env) / "ldconfig", f"printf '{LDCONFIG_HIT}'\n")
    (Path(env["VKB_ICD_DIRS"]) / "lvp_icd.x86_64.json").write_text("{}")


@pytest.mark.skipif(not (SETUP.parent.parent / ".venv").is_dir(),
                    reason="make setup has not run in this checkout (e.g. the GPU machine's copy)")
def test_setup_is_a_quick_no_op_on_this_machine(tmp_path):
    """This machine has everything (make setup ran): setup prints nothing, installs nothing and
    takes well under the time of any install (apt-get and sudo here only record being called)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    log = tmp_path / "called"
    for tool in ("apt-get", "sudo", "dpkg-query"):
        script(fake / tool, f'echo "{tool} $*" >> "{log}"; exit 1\n')
    e = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}")
    t = time.perf_counter()
    r = subprocess.run(["bash", str(SETUP)], env=e, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - t
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""
    assert not log.exists(), log.read_text()
    assert elapsed < 10, f"setup took {elapsed:.1f} s"


def test_loader_from_ldconfig_or_the_lib_dirs(env):
    assert not ok(env, "check_loader")  # empty ldconfig cache, empty lib dir
    script(bin_of(env) / "ldconfig", "printf '\\tlibvulkan_lvp.so (libc6) => /x/libvulkan_lvp.so\\n"
                                      "\\tlibvulkan.so (libc6) => /x/libvulkan.so\\n'\n")
    assert not ok(env, "check_loader")  # other libraries' names do not count
    (Path(env["VKB_LIB_DIRS"]) / "libvulkan.so.1").write_text("")
    assert ok(env, "check_loader")  # a Fedora/Arch layout, or a user's prefix
    (Path(env["VKB_LIB_DIRS"]) / "libvulkan.so.1").unlink()
    script(bin_of(env) / "ldconfig", f"printf '{LDCONFIG_HIT}'\n")
    assert ok(env, "check_loader")


def test_loader_found_with_a_long_ldconfig_listing(env):
    """The match comes early in a long listing: pipefail must not see ldconfig's SIGPIPE."""
    script(bin_of(env) / "ldconfig", f"printf '{LDCONFIG_HIT}'; i=0; while [ $i -lt 20000 ]; do "
                                      "echo \"\\tlibx$i.so (libc6) => /x/libx$i.so\"; i=$((i+1)); done\n")
    assert ok(env, "set -o pipefail; check_loader")


def test_lavapipe_manifest_in_the_icd_dirs(env, tmp_path):
    icd, other = Path(env["VKB_ICD_DIRS"]), tmp_path / "icd2"
    other.mkdir()
    env["VKB_ICD_DIRS"] = f"{icd}:{other}"
    (icd / "nvidia_icd.json").write_text("{}")
    assert not ok(env, "check_lavapipe")  # a GPU driver's manifest is not lavapipe
    (other / "lvp_icd.x86_64.json").write_text("{}")
    assert ok(env, "check_lavapipe")  # in any of the dirs
    env["VK_DRIVER_FILES"] = str(icd / "nvidia_icd.json")
    assert not ok(env, "check_lavapipe")  # the loader reads only the listed files then
    env["VK_DRIVER_FILES"] = f"{icd / 'nvidia_icd.json'}:{other / 'lvp_icd.x86_64.json'}"
    assert ok(env, "check_lavapipe")


def test_standard_icd_dirs_follow_the_xdg_variables(env):
    del env["VKB_ICD_DIRS"]
    env.update(XDG_CONFIG_DIRS="/cfg/a:/cfg/b", XDG_DATA_DIRS="/data/a:/data/b", XDG_DATA_HOME="/home/d",
               XDG_CONFIG_HOME="/home/c")
    dirs = call(env, "icd_dirs").stdout.strip().split(":")
    assert dirs == ["/home/c/vulkan/icd.d", "/cfg/a/vulkan/icd.d", "/cfg/b/vulkan/icd.d",
                    "/etc/vulkan/icd.d", "/home/d/vulkan/icd.d", "/data/a/vulkan/icd.d",
                    "/data/b/vulkan/icd.d"]


def test_cmake_version(env):
    assert not ok(env, "check_cmake")  # none on PATH
    for version, good in [("3.18.4", False), ("3.20.0", True), ("3.25.1", True), ("4.0.2", True),
                          ("2.8.12", False)]:
        script(bin_of(env) / "cmake", f'echo "cmake version {version}"; echo; echo "CMake suite"\n')
        assert ok(env, "check_cmake") == good, version


@pytest.fixture
def cxx():
    c = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if c is None:
        pytest.skip("no C++ compiler on this machine")
    return c


def test_headers_asked_of_the_compiler(env, tmp_path, cxx):
    inc = tmp_path / "include"
    # the real compiler, seeing only `inc` (no system headers)
    env["CXX"] = f"{cxx} -nostdinc -nostdinc++ -isystem {inc}"
    env["VKB_INCLUDE_DIRS"] = "/nonexistent"
    for check in ("check_vulkan_headers", "check_fmt", "check_pybind11"):
        assert not ok(env, check), check
    for header in ("vulkan/vulkan.h", "fmt/format.h", "pybind11/pybind11.h"):
        (inc / header).parent.mkdir(parents=True, exist_ok=True)
        (inc / header).write_text("")
    for check in ("check_vulkan_headers", "check_fmt", "check_pybind11"):
        assert ok(env, check), check


def test_headers_without_a_compiler_looked_up_in_the_include_dirs(env, tmp_path):
    assert not ok(env, "check_cxx")
    assert not ok(env, "check_vulkan_headers")
    (tmp_path / "include" / "vulkan").mkdir()
    (tmp_path / "include" / "vulkan" / "vulkan.h").write_text("")
    assert ok(env, "check_vulkan_headers")


def test_link_library_by_linking(env, tmp_path, cxx):
    """-lvulkan is rewritten to a library of our own, so that the system's libvulkan.so is out
    of the picture: missing, the link fails; present (a stub with the symbol), it succeeds."""
    lib = tmp_path / "lib"
    wrapper = script(tmp_path / "fakecxx", f'args=""; for a in "$@"; do [ "$a" = -lvulkan ] && a=-lvkbstub; '
                                           f'args="$args $a"; done; exec {cxx} -L{lib} $args\n')
    env["CXX"] = str(wrapper)
    env["PATH"] += ":" + os.environ["PATH"]  # the compiler's assembler and linker
    assert ok(env, "check_cxx")
    assert not ok(env, "check_vulkan_link")
    stub = tmp_path / "stub.cc"
    stub.write_text('extern "C" void *vkGetInstanceProcAddr(void *, const char *) { return 0; }\n')
    subprocess.run([cxx, "-shared", "-fPIC", str(stub), "-o", str(lib / "libvkbstub.so")], check=True)
    assert ok(env, "check_vulkan_link")


def test_check_reports_each_missing_thing_with_three_install_commands(env):
    r = subprocess.run(["bash", str(SETUP), "--check"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    out = r.stdout
    for what in ("libvulkan.so.1", "lvp_icd", "cmake 3.20", "C++ compiler", "patch", "vulkan/vulkan.h",
                 "libvulkan.so, for -lvulkan", "fmt/format.h", "pybind11/pybind11.h"):
        assert what in out, what
    commands = {line.split()[0]: line for line in out.splitlines()
                if line.startswith(("  apt-get ", "  dnf ", "  pacman "))}
    apt, dnf, pacman = commands["apt-get"], commands["dnf"], commands["pacman"]
    for pkg in ("libvulkan1", "mesa-vulkan-drivers", "libvulkan-dev", "libfmt-dev", "pybind11-dev", "cmake", "g++"):
        assert f" {pkg} " in apt + " ", pkg
    assert apt.count("libvulkan-dev") == 1  # headers and link library: one package, named once
    for pkg in ("vulkan-loader", "vulkan-headers", "vulkan-loader-devel", "fmt-devel", "pybind11-devel", "gcc-c++"):
        assert f" {pkg} " in dnf + " ", pkg
    for pkg in ("vulkan-icd-loader", "vulkan-swrast", "vulkan-headers", "fmt", "pybind11", "gcc"):
        assert f" {pkg} " in pacman + " ", pkg


def test_ensure_without_a_package_manager_passes_when_all_is_there(env):
    """A Fedora/Arch machine, or a user without root, with everything installed: no dpkg-query,
    no apt-get, and nothing to complain about."""
    satisfy_runtime(env)
    r = call(env, 'ensure "${RUNTIME_REQS[@]}"; echo done')
    assert r.returncode == 0 and r.stdout.strip() == "done" and r.stderr == ""


def test_ensure_stops_with_the_commands_when_it_cannot_install(env):
    script(bin_of(env) / "id", "echo 1000\n")  # not root, no sudo
    log = bin_of(env).parent / "apt-called"
    script(bin_of(env) / "apt-get", f'echo "$*" >> "{log}"\n')
    script(bin_of(env) / "ldconfig", f"printf '{LDCONFIG_HIT}'\n")
    r = call(env, 'ensure "${RUNTIME_REQS[@]}"; echo unreachable')
    assert r.returncode == 1 and "unreachable" not in r.stdout
    assert "lavapipe" in r.stderr and "libvulkan.so.1" not in r.stderr  # only what is missing
    assert "apt-get update && apt-get install -y mesa-vulkan-drivers" in r.stderr
    assert "dnf install -y mesa-vulkan-drivers" in r.stderr and "pacman -S --needed vulkan-swrast" in r.stderr
    assert not log.exists()


def test_ensure_installs_with_apt_as_root_on_debian(env, tmp_path):
    """Root with apt-get: the missing packages are installed, then checked again."""
    script(bin_of(env) / "id", "echo 0\n")
    log = tmp_path / "apt-called"
    manifest = Path(env["VKB_ICD_DIRS"]) / "lvp_icd.x86_64.json"
    # the fake apt-get "installs" mesa-vulkan-drivers: its lavapipe manifest appears
    script(bin_of(env) / "apt-get", f'echo "$*" >> "{log}"\ncase "$*" in *mesa-vulkan-drivers*) '
                                     f'echo {{}} > "{manifest}";; esac\n')
    script(bin_of(env) / "ldconfig", f"printf '{LDCONFIG_HIT}'\n")
    r = call(env, 'ensure "${RUNTIME_REQS[@]}"; echo done')
    assert r.returncode == 0 and r.stdout.strip().endswith("done"), r.stderr
    calls = log.read_text().splitlines()
    assert calls[0].startswith("update") and "install" in calls[1] and "mesa-vulkan-drivers" in calls[1]
    assert "libvulkan1" not in calls[1]


def test_ensure_reports_what_apt_could_not_provide(env, tmp_path):
    script(bin_of(env) / "id", "echo 0\n")
    script(bin_of(env) / "apt-get", "exit 0\n")  # installs nothing
    r = call(env, 'ensure "${RUNTIME_REQS[@]}"')
    assert r.returncode == 1
    assert "libvulkan.so.1" in r.stderr and "lavapipe" in r.stderr
