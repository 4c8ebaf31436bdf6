import os

import pytest

import vkbackend as vk
from vkbackend.runtime import devices as device_mod
from vkbackend.runtime.probe import probe_subgroup


def test_subgroup_size_matches_what_a_shader_reads(dev):
    for wg in (1, 7, 64, 100, 256):
        size, count = probe_subgroup(wg)
        assert size == dev.subgroup_size
        if wg % size == 0:  # lavapipe drops a partial last subgroup from gl_NumSubgroups
            assert count == wg // size


def test_lavapipe_subgroup_size_follows_vector_width(dev):
    width = os.environ.get("LP_NATIVE_VECTOR_WIDTH")
    if not dev.is_software or width is None:
        pytest.skip("only meaningful on lavapipe with LP_NATIVE_VECTOR_WIDTH set")
    assert dev.subgroup_size == int(width) // 32


def test_report_fields(dev):
    r = dev.report()
    assert r["name"] and r["vendor"] and r["driver"]
    assert r["min_subgroup_size"] <= r["subgroup_size"] <= r["max_subgroup_size"]
    assert set(r["subgroup_features"]) <= set(device_mod.SUBGROUP_FEATURE_BITS)
    assert "basic" in r["subgroup_features"]
    assert r["max_workgroup_invocations"] >= 128 and r["max_shared_memory"] >= 16384
    assert not set(r["subgroup_features"]) & set(r["disabled_subgroup_features"])


def test_disable_env_parsing(monkeypatch):
    monkeypatch.setenv("VKBACKEND_DISABLE_SUBGROUP", "arithmetic, shuffle")
    assert device_mod._disabled_from_env() == {"arithmetic", "shuffle"}
    monkeypatch.setenv("VKBACKEND_DISABLE_SUBGROUP", "all")
    assert "basic" not in device_mod._disabled_from_env()
    monkeypatch.setenv("VKBACKEND_DISABLE_SUBGROUP", "arithmetik")
    with pytest.raises(ValueError, match="arithmetik"):
        device_mod._disabled_from_env()


def test_device_choice(monkeypatch):
    devices = [{"device_name": "llvmpipe (LLVM 15)"}, {"device_name": "NVIDIA H100 80GB HBM3"}]
    monkeypatch.delenv("VKBACKEND_DEVICE", raising=False)
    assert device_mod._choose_index(devices) == 1          # a GPU before lavapipe
    assert device_mod._choose_index(devices[:1]) == 0      # lavapipe when there is no GPU
    monkeypatch.setenv("VKBACKEND_DEVICE", "llvm")
    assert device_mod._choose_index(devices) == 0
    monkeypatch.setenv("VKBACKEND_DEVICE", "1")
    assert device_mod._choose_index(devices) == 1
    monkeypatch.setenv("VKBACKEND_DEVICE", "5")
    with pytest.raises(vk.DeviceError, match="only 2 device"):
        device_mod._choose_index(devices)
    monkeypatch.setenv("VKBACKEND_DEVICE", "radeon")
    with pytest.raises(vk.DeviceError, match="radeon"):
        device_mod._choose_index(devices)


def test_info_cli_json():
    import json
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "vkbackend", "info", "--json"], capture_output=True,
                         text=True, check=True)
    r = json.loads(out.stdout)
    assert r["probed_subgroup_size"] == r["subgroup_size"]


def test_multiprocessors_say_where_they_come_from(dev):
    """What planners fill with workgroups: gl_SMCountNV on a device that lists
    VK_NV_shader_sm_builtins (opened with it), lavapipe's threads, else the estimate, named so."""
    if device_mod.SM_BUILTINS in dev.extensions:
        assert device_mod.SM_BUILTINS in dev.enabled_extensions
        assert dev.multiprocessors_source == "queried" and dev.multiprocessors >= 1
        if "H200" in dev.name:
            assert dev.multiprocessors == 132
    elif dev.is_software:
        assert (dev.multiprocessors, dev.multiprocessors_source) == (device_mod.lavapipe_threads(), "lavapipe threads")
    else:
        assert (dev.multiprocessors, dev.multiprocessors_source) == (device_mod.MULTIPROCESSORS_ESTIMATE, "estimate")
    assert dev.report()["multiprocessors"] == dev.multiprocessors


def test_lavapipe_threads_count_as_mesa_does(monkeypatch):
    """llvmpipe's screen: LP_NUM_THREADS, else the CPU count where there is more than one, at
    most LP_MAX_THREADS (none: the workgroups run on the submitting thread, counted as one)."""
    monkeypatch.delenv("LP_NUM_THREADS", raising=False)
    for cpus, threads in ((6, 6), (1, 1), (None, 1), (200, device_mod.LAVAPIPE_MAX_THREADS)):
        monkeypatch.setattr(os, "cpu_count", lambda cpus=cpus: cpus)
        assert device_mod.lavapipe_threads() == threads, cpus
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    for value, threads in (("3", 3), (" 12 ", 12), ("0", 1), ("0x4", 4), ("many", 6), ("99", 32)):
        monkeypatch.setenv("LP_NUM_THREADS", value)
        assert device_mod.lavapipe_threads() == threads, value


def test_extensions_are_asked_for_only_where_listed(dev, monkeypatch):
    """open_device reopens the device with VK_NV_shader_sm_builtins and VK_KHR_push_descriptor
    where the device lists them (kp enables only the extensions it is asked for), leaves it as it
    is elsewhere, and leaves push descriptors out when VKBACKEND_DISABLE_FEATURE names them; shown
    with extensions this device lists standing in for them."""
    from vkbackend.runtime._kpmod import kp
    mgr = kp.Manager(dev.index)
    listed = mgr.device_capabilities()["extensions"]
    unlisted = [e for e in listed if e not in (device_mod.SM_BUILTINS, device_mod.PUSH_DESCRIPTOR)]
    same, asked = device_mod._with_extensions(kp, mgr, dev.index, unlisted, frozenset())
    assert same is mgr and asked == ()
    stand_ins = [e for e in ("VK_KHR_maintenance1", "VK_KHR_shader_float16_int8") if e in listed]
    if len(stand_ins) < 2:
        mgr.destroy()
        pytest.skip("the device lists fewer than two of the stand-in extensions")
    monkeypatch.setattr(device_mod, "SM_BUILTINS", stand_ins[0])
    monkeypatch.setattr(device_mod, "PUSH_DESCRIPTOR", stand_ins[1])
    reopened, asked = device_mod._with_extensions(kp, mgr, dev.index, listed, frozenset())
    try:
        assert reopened is not mgr and asked == tuple(stand_ins)
        assert reopened.device_capabilities()["device_name"] == dev.name
    finally:
        reopened.destroy()
    mgr = kp.Manager(dev.index)
    reopened, asked = device_mod._with_extensions(kp, mgr, dev.index, listed, frozenset({"pushDescriptor"}))
    try:
        assert asked == (stand_ins[0],)
    finally:
        reopened.destroy()
