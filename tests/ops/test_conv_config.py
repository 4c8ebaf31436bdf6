"""VKBACKEND_CONV_CONFIG (ops/conv/config.py): every key declared with the prefixes that read it
and the values it takes; anything else is a ValueError naming the item and what is allowed,
raised before any GPU work, by every public convolution and gradient. No kernel runs here."""
from pathlib import Path

import numpy as np
import pytest

import vkbackend as vk
from vkbackend.ops.conv import config
from tests.conftest import no_gpu_work

DOC = Path(__file__).resolve().parents[2] / "docs" / "conv.md"


def _operands(dtype=np.float32):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 16, 6, 6)).astype(dtype)
    w = rng.standard_normal((24, 16, 3, 3)).astype(dtype)
    g = rng.standard_normal((2, 24, 4, 4)).astype(dtype)
    return x, w, g


# (config, words the message must contain: the item and what is allowed)
BAD = [
    # values a key does not take (path=packed and fwd.path=coopmat/cast used to crash or be ignored)
    ("path=packed", ["'path=packed'", "fwd.path (one of gemm, direct, narrow, winograd, matmul, col2im)", "f16.path"]),
    ("fwd.path=coopmat", ["'fwd.path=coopmat'", "one of gemm, direct, narrow, winograd, matmul, col2im"]),
    ("fwd.path=cast", ["'fwd.path=cast'", "one of gemm, direct"]),
    ("wgrad.path=direct", ["'wgrad.path=direct'", "one of gemm, winograd"]),
    ("f16.path=gemm", ["'f16.path=gemm'", "one of packed, coopmat, cast"]),
    ("fwd.NN=6", ["'fwd.NN=6'", "4 or 8"]),
    ("WT=3", ["'WT=3'", "2 or 4"]),
    ("phased=2", ["'phased=2'", "0 or 1"]),
    ("fwd.CU=0", ["'fwd.CU=0'", "1 to 16"]),
    ("RT=17", ["'RT=17'", "1 to 16"]),
    ("BM=48", ["'BM=48'", "a power of two"]),
    ("wgrad.TN=2", ["'wgrad.TN=2'", "a power of two >= 4"]),
    ("wgrad.splits=0", ["'wgrad.splits=0'", "an integer >= 1"]),
    ("fwd.gridx=-1", ["'fwd.gridx=-1'", "an integer >= 1"]),
    ("BK=eight", ["'BK=eight'", "a power of two"]),
    ("fwd.gather=diagonal", ["'fwd.gather=diagonal'", "one of uniform, flat, table"]),
    # keys under a prefix that does not read them (accepted and ignored before)
    ("wgrad.RT=4", ["'wgrad.RT=4'", "fwd.RT (1 to 16)"]),
    ("f16.TM=8", ["'f16.TM=8'", "fwd.TM", "wgrad.TM"]),
    ("f16.splits=3", ["'f16.splits=3'", "wgrad.splits", "wgrad16.splits"]),
    ("wgrad16.gridx=2", ["'wgrad16.gridx=2'", "fwd.gridx", "f16.gridx"]),
    ("fwd.SGM=2", ["'fwd.SGM=2'", "f16.SGM", "wgrad16.SGM"]),
    ("wgrad.WG=64", ["'wgrad.WG=64'", "fwd.WG"]),
    ("SGN=2", ["'SGN=2'", "f16.SGN", "wgrad16.SGN"]),   # float16-only key without a prefix
    # unknown keys and prefixes, items without '='
    ("colour=blue", ["'colour'", "BM", "path"]),
    ("bwd.BM=64", ["'bwd'", "fwd, wgrad, f16, wgrad16"]),
    ("BM", ["key=value", "'BM'"]),
    ("BM=64,,TM", ["key=value", "'TM'"]),
]


@pytest.mark.parametrize("text,words", BAD, ids=[b[0] for b in BAD])
def test_bad_items_name_the_item_and_what_is_allowed(text, words):
    with pytest.raises(ValueError) as e:
        config.parse(text)
    msg = str(e.value)
    assert msg.startswith("VKBACKEND_CONV_CONFIG"), msg
    for word in words:
        assert word in msg, (word, msg)


@pytest.mark.parametrize("text", ["path=packed", "fwd.path=coopmat", "fwd.path=cast", "wgrad.RT=4", "f16.TM=8",
                                  "wgrad.path=direct", "BM=32,colour=blue"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
def test_every_entry_point_raises_before_gpu_work(monkeypatch, text, dtype):
    monkeypatch.setenv("VKBACKEND_CONV_CONFIG", text)
    x, w, g = _operands(dtype)
    wt = np.ascontiguousarray(w.transpose(1, 0, 2, 3))   # (C_in, C_out, kH, kW)
    gt = np.zeros((2, 24, 8, 8), dtype)                  # conv_transpose2d(x, wt)'s shape
    calls = [lambda: vk.conv2d(x, w), lambda: vk.conv_general(x, w), lambda: vk.conv_transpose2d(g, w),
             lambda: vk.conv_vjp(x, w, g, input_grad=False),            # backward-weight alone
             lambda: vk.conv_vjp(x, w, g, weight_grad=False),           # backward-input alone
             lambda: vk.conv_transpose_vjp(x, wt, gt, input_grad=False)]
    for call in calls:
        with no_gpu_work(), pytest.raises(ValueError, match="VKBACKEND_CONV_CONFIG"):
            call()


def test_unprefixed_keys_apply_where_declared():
    """Without a prefix a key applies to fwd. and wgrad. where each declares it; a float32
    forward-only path leaves backward-weight on its GEMM kernel; later items override."""
    got = config.parse("BM=64;RT=4,splits=3")
    assert got["fwd"] == {"BM": 64, "RT": 4} and got["wgrad"] == {"BM": 64, "splits": 3}
    assert got["f16"] == {} and got["wgrad16"] == {}
    for path in ("direct", "narrow", "matmul"):
        got = config.parse(f"path={path}")
        assert got["fwd"] == {"path": path} and got["wgrad"] == {"path": "gemm"}
    got = config.parse("path=winograd,WT=2")
    assert got["fwd"] == got["wgrad"] == {"path": "winograd", "WT": 2}
    got = config.parse("path=direct,wgrad.path=winograd,fwd.path=gemm")
    assert got["fwd"] == {"path": "gemm"} and got["wgrad"] == {"path": "winograd"}
    got = config.parse(" f16.BM = 96 , wgrad16.path=cast ; f16.gather=table,f16.phased=0")
    assert got["f16"] == {"BM": 96, "gather": "table", "phased": 0} and got["wgrad16"] == {"path": "cast"}
    assert got["fwd"] == got["wgrad"] == {}


def test_every_declared_key_parses_where_declared():
    """Each key under each of its prefixes with a value it takes, and refused under the others."""
    sample = {"a power of two": "8", "a power of two >= 4": "8", "an integer >= 1": "3", "1 to 16": "16",
              "0 or 1": "0", "4 or 8": "4", "2 or 4": "2", "1 or 2": "1"}
    for key in config.KEYS:
        value = key.words[0] if key.words else sample.get(key.allowed, "16")
        for prefix in config.PREFIXES:
            item = f"{prefix}.{key.name}={value}"
            declared = config.declared(key.name, prefix)
            if declared is None:
                with pytest.raises(ValueError, match="do not read"):
                    config.parse(item)
            elif declared is key:
                want = value if key.words else int(value)
                assert config.parse(item)[prefix] == {key.name: want}, item


def test_docs_list_the_keys():
    """docs/conv.md carries config.table(): every key, its prefixes, values and default."""
    assert config.table() in DOC.read_text(encoding="utf-8")
