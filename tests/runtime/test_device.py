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
