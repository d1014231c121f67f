"""Typed errors shared by every simpler layer. Native statuses arrive as `.code`."""
from __future__ import annotations

from simpler import _native

# Host runtime statuses frameworks already check.
PTO_RUNTIME_ERR_BASE: int = _native.PTO_RUNTIME_ERR_BASE
PTO_RUNTIME_ERR_INTERNAL: int = _native.PTO_RUNTIME_ERR_INTERNAL
PTO_RUNTIME_ERR_UNSUPPORTED: int = _native.PTO_RUNTIME_ERR_UNSUPPORTED
PTO_RUNTIME_ERR_PREPARED_INCOMPATIBLE: int = _native.PTO_RUNTIME_ERR_PREPARED_INCOMPATIBLE
PTO_RUNTIME_ERR_INVALID_STATE: int = _native.PTO_RUNTIME_ERR_INVALID_STATE
PTO_RUNTIME_ERR_INVALID_ARGUMENT: int = _native.PTO_RUNTIME_ERR_INVALID_ARGUMENT
PTO_RUNTIME_ERR_CALLABLE_COUNT_EXCEEDED: int = _native.PTO_RUNTIME_ERR_CALLABLE_COUNT_EXCEEDED
PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED: int = _native.PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED
PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT: int = _native.PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT
PTO_RUNTIME_ERR_CAPACITY_EXCEEDED: int = _native.PTO_RUNTIME_ERR_CAPACITY_EXCEEDED
PTO_RUNTIME_ERR_TIMEOUT: int = _native.PTO_RUNTIME_ERR_TIMEOUT


def status_name(code: int) -> str:
    """Name of any native status, e.g. ``status_name(-1003) == "PTO_RUNTIME_ERR_INVALID_STATE"``."""
    return _native.status_name(int(code))


class SimplerError(RuntimeError):
    """A native call failed. ``.code`` is the native status, ``.status_name`` its name."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code: int = int(code)
        self.status_name: str = status_name(self.code)


class SimError(SimplerError):
    """The simulated driver refused a call (SIM_ERR_* status)."""


class ChipWorkerError(SimplerError):
    """A ChipWorker/runtime call failed; ``.code`` is the runtime status."""


class UnsupportedRuntimeOperation(ChipWorkerError, NotImplementedError):
    """The runtime build does not support the operation (code PTO_RUNTIME_ERR_UNSUPPORTED)."""
