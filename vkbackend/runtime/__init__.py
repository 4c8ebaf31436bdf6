"""The process-wide runtime: device, buffer pool, recording stream, kernel and pipeline caches."""
from __future__ import annotations

import ctypes
import dataclasses
import os
import threading
import warnings

from .. import config
from . import compiler, fusion
from .devices import MEMORY_BUDGET, SM_BUILTINS, Device, open_device
from .fusion import Fuser
from .kernel import Kernel, PipelineCache
from .memory import Pool
from .stream import STAGING_LIMIT, Stream


class Runtime:
    def __init__(self):
        unread = config.unknown()
        if unread:
            warnings.warn(f"vkbackend: environment variable(s) that nothing reads: {', '.join(unread)} "
                          "(docs/configuration.md lists them all)", RuntimeWarning, stacklevel=3)
        self.device: Device = open_device()
        mgr = self.device.manager
        # One lock for recording, submits and the pool: kp's sequences are not thread-safe, and a
        # thread waiting for the GPU releases the GIL.
        self.lock = threading.RLock()
        # kp counts a tensor's elements in 32 bits: 2**32 - 1 words at most, whatever maxBufferSize
        self.pool = Pool(mgr, min(self.device.max_buffer_size, (2**32 - 1) * 4), _pool_limit(self.device),
                         config.get("VKBACKEND_MEMORY_LIMIT"), self.lock,
                         host_backed=self.device.is_software,
                         bind_bytes=self.device.max_storage_buffer_range,
                         suballoc_bytes=config.get("VKBACKEND_SUBALLOC_LIMIT"))
        self.stream = Stream(mgr, self.pool, self.lock,
                             staging_limit=config.get("VKBACKEND_STAGING_LIMIT") or STAGING_LIMIT)
        eager = config.get("VKBACKEND_EAGER_US")
        if eager is False:
            self.stream.eager = False
        elif eager is not None:
            self.stream.eager_seconds = eager * 1e-6
        self.pipelines = PipelineCache(mgr, self.device.push_descriptors)
        fusion_after = config.get("VKBACKEND_FUSION")
        if fusion_after:
            self.stream.fuser = Fuser(self, fusion_after)
            self.pool.on_release = self.stream.fuser.released
        self._kernels: dict = {}
        # Tests poison every fresh buffer so that an element a kernel forgets to write shows up.
        self.poison = config.get("VKBACKEND_POISON")

    def kernel(self, shader: str, defines: dict | None = None, workgroup: int = 256, spec: tuple = ()) -> Kernel:
        key = (shader, tuple(sorted((defines or {}).items())), workgroup, tuple(spec))
        k = self._kernels.get(key)
        if k is None:
            k = self._kernels[key] = Kernel(self, shader, defines or {}, workgroup, spec)
        return k

    def release(self, buf) -> None:
        self.pool.release(buf)

    def memory_stats(self) -> dict:
        """Bytes of device memory: handed out to arrays, cached for reuse (released buffers and
        slab space no array uses), the peak in use, the cache's limit, held in slabs (small
        arrays' pieces, counted in in_use and cached too) and the device's local heaps; the
        host memory of the staging area that transfers go through (arrays keep no host copy);
        and per memory heap its size, whether it is device-local, and the driver's budget for
        this process and the process's usage of it (None where the device lacks
        VK_EXT_memory_budget)."""
        p = self.pool
        return {"in_use": p.in_use, "cached": p.cached, "peak_in_use": p.peak_in_use, "limit": p.limit,
                "slabs": p.slab_bytes,
                "capacity": p.capacity, "device_local": self.device.device_local_bytes,
                "staging": self.stream.staging_bytes,
                "heaps": self.device.manager.memory_heaps(MEMORY_BUDGET in self.device.extensions)}

    def stats(self) -> dict:
        s = dict(self.stream.stats)
        s.update(self.stream.fuser.stats if self.stream.fuser else dict.fromkeys(fusion.STATS, 0))
        s.update({f"pipeline_{k}": v for k, v in self.pipelines.stats.items()})
        s["pipelines_created"] = s.pop("pipeline_created")
        s["pipelines_cached"] = len(self.pipelines)
        s.update(self.pool.stats)
        s["buffers_cached"] = self.pool.cached_buffers()
        s.update({f"shader_{k}": v for k, v in compiler.stats.items()})
        return s


def _pool_limit(device: Device) -> int:
    """Bytes of released buffers the pool keeps for reuse: VKBACKEND_POOL_LIMIT, else a quarter
    of the device's local memory."""
    limit = config.get("VKBACKEND_POOL_LIMIT")
    return device.device_local_bytes // 4 if limit is None else limit


_runtime: Runtime | None = None
_opening = threading.Lock()
_forked_from: int | None = None  # in a child forked after the runtime opened: the parent's pid


def _after_fork_in_child() -> None:
    """The parent's Vulkan device does not survive fork(): in the child, destroying it hangs
    (lavapipe waits for its queue thread, which the child lacks) and using it is undefined. Keep
    every object of it alive for good, so nothing is destroyed at exit, and refuse to use it."""
    global _runtime, _forked_from
    if _runtime is not None:
        leak(_runtime)
        _runtime, _forked_from = None, os.getppid()
        _exit_without_destructors()


def _exit_without_destructors() -> None:
    """End the child through os._exit once Python's own exit work (atexit, flushing) is done: the
    parent's driver state is in this process too, and its library destructors crash in a child
    (NVIDIA: SIGSEGV at exit). The exit status is sys.exit's code, 1 after an uncaught exception,
    else 0."""
    import atexit
    import sys
    status = [0]
    plain_exit, plain_hook = sys.exit, sys.excepthook

    def exit_(code=None):
        status[0] = 0 if code is None else code if isinstance(code, int) else 1
        plain_exit(code)

    def hook(*exc):
        status[0] = 1
        plain_hook(*exc)

    def end():  # atexit runs it first (last registered): run the others, then leave
        atexit.unregister(end)
        atexit._run_exitfuncs()
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:  # noqa: BLE001 - closed or replaced streams
                pass
        os._exit(status[0])
    sys.exit, sys.excepthook = exit_, hook
    atexit.register(end)


os.register_at_fork(after_in_child=_after_fork_in_child)


def leak(obj) -> None:
    """Keep `obj` alive until the process ends (a child's copy of a parent's Vulkan object)."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))


def forked() -> bool:
    return _forked_from is not None


def _warm_bindings(rt: Runtime) -> None:
    """Run, on the opening thread, the kp calls whose first use initialises pybind11's numpy
    bindings (C++ function-local statics): a second thread arriving there while the first imports
    numpy with the GIL released waits on the static's guard holding the GIL, and both hang."""
    buf = rt.pool.acquire(1)  # a new (mapped) tensor, then its data() view
    buf.host()
    rt.release(buf)


def _multiprocessors(rt: Runtime) -> Device:
    """rt's device with the multiprocessor count its driver tells a shader where Vulkan does not:
    NVIDIA's gl_SMCountNV, on a device opened with VK_NV_shader_sm_builtins (devices.SM_BUILTINS);
    elsewhere, or where the probe cannot run, the device as opened (lavapipe's threads or the
    estimate)."""
    dev = rt.device
    if SM_BUILTINS not in dev.enabled_extensions:
        return dev
    buf = rt.pool.acquire(1)
    try:
        rt.kernel("runtime/probe_multiprocessors.comp", {}, 32)([buf], (), (1,))
        rt.stream.synchronize(downloads=[buf])
        count = int(buf.host()[0])
    except Exception as e:  # noqa: BLE001 - not shipped and no glslang, or a driver refusing it
        warnings.warn(f"vkbackend: runtime/probe_multiprocessors.comp did not run ({e}); planners assume "
                      f"{dev.multiprocessors} multiprocessors", RuntimeWarning, stacklevel=3)
        return dev
    finally:
        rt.release(buf)
    if count < 1:
        return dev
    return dataclasses.replace(dev, multiprocessors=count, multiprocessors_source="queried")


def get() -> Runtime:
    """The process's runtime, opened on first use (by any thread, once)."""
    global _runtime
    if _runtime is None:
        if _forked_from is not None:
            raise RuntimeError(
                f"vkbackend's device was opened by process {_forked_from} before it forked this one: "
                "Vulkan objects do not survive fork(). Use multiprocessing with the 'spawn' or "
                "'forkserver' start method (multiprocessing.get_context('spawn')), or open vkbackend "
                "only in the child")
        with _opening:
            if _runtime is None:
                rt = Runtime()
                _warm_bindings(rt)
                rt.device = _multiprocessors(rt)
                _runtime = rt
    return _runtime


def is_open() -> bool:
    return _runtime is not None
