"""Typed errors shared by every simpler layer. Native statuses arrive as `.code`."""
from __future__ import annotations

from simpler import _native

# Every native status as a module constant (PTO_RUNTIME_ERR_*, SIMPLER_CHIP_ERR_*,
# SIM_ERR_*, SIMPLER_OK, ...), generated from the one list in abi/status.h: nothing here
# repeats a name or a value. ``STATUS_CODES`` maps each name to its code.
STATUS_CODES: dict[str, int] = dict(_native.STATUS_CODES)
globals().update(STATUS_CODES)
PTO_RUNTIME_ERR_BASE: int = _native.PTO_RUNTIME_ERR_BASE
SIM_ERR_BASE: int = _native.SIM_ERR_BASE


def __getattr__(name: str) -> int:  # for type checkers: the constants are set above
    raise AttributeError(f"module 'simpler.errors' has no attribute {name!r}")


def status_name(code: int) -> str:
    """Name of any native status, e.g. ``status_name(-1003) == "PTO_RUNTIME_ERR_INVALID_STATE"``."""
    return _native.status_name(int(code))


def status_meaning(code: int) -> str:
    """One sentence on what a native status means ("" for an unknown code)."""
    return _native.status_meaning(int(code))


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
