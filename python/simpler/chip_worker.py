"""simpler.task_interface.ChipWorker — one runtime build, one device context (C++ ChipWorker).

States NEW -> INITIALIZED -> CLOSED, and FAILED after a failed init (rolled back). Program
mode: ``init(device_id, bins, prewarm_config=None)``, register/run/memory. Kernel mode:
``kernel_init(device_id, bins, config)``, ``kernel_prepare_callable``, ``kernel_launch``.
``ChipWorker.probe_kernel_mode_supported(bins)`` answers before any init, taking no device.
Errors are :class:`simpler.errors.ChipWorkerError` with ``.code``. One thread at a time
(calls are serialized by a lock); ``finalize()`` runs on the thread that called init.
"""
from __future__ import annotations

import threading
from typing import Any, Optional

from simpler import _native
from simpler import errors as _errors  # noqa: F401  (the native error translator imports it)
from simpler._ints import require_int
from simpler._process_local import ProcessLocal
from simpler._typed_call import typed_methods
from simpler.errors import SimplerTypeError

__all__ = ["ChipWorker"]


def _checked(api: str, device_id: Any, bins: Any, config: Any, config_name: str,
             config_optional: bool) -> "tuple[int, Any, Any]":
    """The context arguments, refused with a SimplerTypeError naming the parameter (the
    binding's own refusal is pybind11's plain "incompatible function arguments", and it
    took a bool as a device id)."""
    number = require_int(device_id, f"ChipWorker.{api}", "device_id")
    _check_bins(api, bins)
    if not isinstance(config, _native.task_interface.CallConfig) and not (
            config_optional and config is None):
        raise SimplerTypeError(f"ChipWorker.{api}: {config_name} must be a CallConfig"
                               f"{' or None' if config_optional else ''}, "
                               f"got {type(config).__name__}")
    return number, bins, config


def _check_bins(api: str, bins: Any) -> None:
    if not isinstance(bins, _native.RuntimeBins):
        raise SimplerTypeError(f"ChipWorker.{api}: bins must be a RuntimeBins "
                               f"(simpler.find_build(platform, runtime)), got {type(bins).__name__}")


@typed_methods("ChipWorker")
class ChipWorker(ProcessLocal):
    """Loads a runtime build (``simpler.find_build(platform, runtime)``) and owns one context."""

    def __init__(self) -> None:
        self._native = _native.worker.ChipWorker()
        self._lock = threading.Lock()

    @staticmethod
    def probe_kernel_mode_supported(bins: Any) -> bool:
        """Loads the build, asks one fresh context whether it runs kernel mode, destroys the
        context before unloading. No init, no device."""
        _check_bins("probe_kernel_mode_supported", bins)
        return _native.worker.ChipWorker.probe_kernel_mode_supported(bins)

    @property
    def state(self) -> str:
        return self._native.state.name

    @property
    def mode(self) -> str:
        return self._native.mode

    @property
    def device_id(self) -> int:
        return self._native.device_id

    @property
    def generation(self) -> int:
        return self._native.generation

    @property
    def teardown_owed(self) -> bool:
        return self._native.teardown_owed

    @property
    def kernel_mode_supported(self) -> bool:
        """Never raises; False while no context is bound."""
        return self._native.kernel_mode_supported

    def _call(self, name: str, *args: Any) -> Any:
        with self._lock:
            return getattr(self._native, name)(*args)

    # ---- program mode ----
    def init(self, device_id: int, bins: Any, prewarm_config: Any = None) -> None:
        self._call("init", *_checked("init", device_id, bins, prewarm_config, "prewarm_config",
                                     config_optional=True))

    def register(self, chip_callable: Any) -> Any:
        return self._call("register", chip_callable)

    def unregister(self, handle: Any) -> None:
        self._call("unregister", handle)

    def run(self, handle: Any, args: Any, config: Any = None) -> None:
        if config is not None and not isinstance(config, _native.task_interface.CallConfig):
            raise SimplerTypeError(f"ChipWorker.run: config must be a CallConfig or None, "
                                   f"got {type(config).__name__}")
        self._call("run", handle, args, config)

    def malloc(self, size: int) -> int:
        return self._call("malloc", require_int(size, "ChipWorker.malloc", "size", low=1))

    def free(self, ptr: int) -> None:
        self._call("free", require_int(ptr, "ChipWorker.free", "ptr", low=0))

    def copy_to(self, dst: int, src: Any, nbytes: Optional[int] = None) -> None:
        self._call("copy_to", require_int(dst, "ChipWorker.copy_to", "dst", low=0), src,
                   None if nbytes is None
                   else require_int(nbytes, "ChipWorker.copy_to", "nbytes", low=0))

    def copy_from(self, dst: Any, src: int, nbytes: Optional[int] = None) -> None:
        self._call("copy_from", dst, require_int(src, "ChipWorker.copy_from", "src", low=0),
                   None if nbytes is None
                   else require_int(nbytes, "ChipWorker.copy_from", "nbytes", low=0))

    def device_memory_info(self) -> "tuple[int, int]":
        return self._call("device_memory_info")

    def committed_device_memory(self) -> int:
        return self._call("committed_device_memory")

    # ---- kernel mode ----
    def kernel_init(self, device_id: int, bins: Any, config: Any) -> None:
        self._call("kernel_init", *_checked("kernel_init", device_id, bins, config, "config",
                                            config_optional=False))

    def kernel_prepare_callable(self, chip_callable: Any) -> int:
        return self._call("kernel_prepare_callable", chip_callable)

    def kernel_launch(self, callable_id: int, args: Any, caller_stream: Any) -> None:
        self._call("kernel_launch", callable_id, args, caller_stream)

    def finalize(self) -> None:
        self._call("finalize")

    def __repr__(self) -> str:
        return f"<simpler.ChipWorker state={self.state} mode={self.mode} device={self.device_id}>"
