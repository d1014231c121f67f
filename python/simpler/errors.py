"""Typed errors shared by every simpler layer. Native statuses arrive as `.code`."""
from __future__ import annotations

import errno

from simpler import _log  # noqa: F401 - native log lines -> logging "simpler"
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


def _status_code(code: int, api: str) -> int:
    """``code`` as a status int (numpy integers too); a code no status can have (beyond 32
    bits) as one that is unknown. A float, bool or str is refused: int() truncated 1.5 to 1."""
    from simpler._ints import as_int
    number = as_int(code)
    if number is None:
        raise SimplerTypeError(f"simpler.errors.{api}: code must be an int, got "
                               f"{type(code).__name__}")
    return number if -2 ** 31 <= number < 2 ** 31 else _UNKNOWN_CODE


def status_name(code: int) -> str:
    """Name of any native status, e.g. ``status_name(-1003) == "PTO_RUNTIME_ERR_INVALID_STATE"``."""
    return _native.status_name(_status_code(code, "status_name"))


def status_meaning(code: int) -> str:
    """One sentence on what a native status means ("" for an unknown code)."""
    return _native.status_meaning(_status_code(code, "status_meaning"))


# A value no native status has: what an out-of-range code is described as.
_UNKNOWN_CODE = 2 ** 31 - 1


class SimplerError(Exception):
    """Base of every exception simpler defines.

    ``.code`` is the native status when one exists, else the class's ``default_code``
    (argument errors: PTO_RUNTIME_ERR_INVALID_ARGUMENT; wrong state: ..._INVALID_STATE;
    timeouts: ..._TIMEOUT; not supported: ..._UNSUPPORTED; anything else:
    ..._INTERNAL), and ``.status_name`` its name: every error carries an int status. Each
    subclass also keeps the builtin base that callers already catch (RuntimeError,
    ValueError, TypeError, ...).
    """

    #: The status a refusal of this class means when no native status is behind it.
    default_code: "int | None" = STATUS_CODES["PTO_RUNTIME_ERR_INTERNAL"]

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        if code is None:
            code = self.default_code
        self.code: int | None = None if code is None else int(code)
        self.status_name: str = "" if code is None else status_name(self.code)


class SimError(SimplerError, RuntimeError):
    """The simulated driver refused a call (SIM_ERR_* status)."""


class ChipWorkerError(SimplerError, RuntimeError):
    """A ChipWorker/runtime call failed; ``.code`` is the runtime status."""


class UnsupportedRuntimeOperation(ChipWorkerError, NotImplementedError):
    """The runtime build does not support the operation (code PTO_RUNTIME_ERR_UNSUPPORTED)."""

    default_code = STATUS_CODES["PTO_RUNTIME_ERR_UNSUPPORTED"]


_INVALID_ARGUMENT: int = STATUS_CODES["PTO_RUNTIME_ERR_INVALID_ARGUMENT"]


class SignatureMismatchError(SimplerError, ValueError, TypeError):
    """Call arguments do not fit a typed signature (dtype, rank, core type).

    Raised before anything is enqueued. ``.arg_index`` is the argument's position in the
    signature (``None`` when the mismatch is not about one argument); the message says
    what was expected and what was given. ``.code``: PTO_RUNTIME_ERR_INVALID_ARGUMENT.
    """

    default_code = _INVALID_ARGUMENT

    def __init__(self, message: str, arg_index: int | None = None) -> None:
        super().__init__(message)
        self.arg_index: int | None = arg_index


class DiagnosticsWarning(SimplerError, RuntimeWarning):
    """A diagnostics file (CallConfig output_prefix) could not be written; the run and its
    results are unaffected."""


class SimplerValueError(SimplerError, ValueError):
    """A value was refused (bad argument, bad config field, bad image); the message names it.
    ``.code``: PTO_RUNTIME_ERR_INVALID_ARGUMENT unless a native status is behind it."""

    default_code = _INVALID_ARGUMENT


class SimplerTypeError(SimplerError, TypeError):
    """An argument of the wrong type, or a call with an unknown keyword or too many
    positional arguments; the message names it and what was expected.
    ``.code``: PTO_RUNTIME_ERR_INVALID_ARGUMENT."""

    default_code = _INVALID_ARGUMENT


class SimplerAttributeError(SimplerError, AttributeError):
    """An attribute that does not exist was set or read on a simpler object whose fields
    are fixed (e.g. ``CallConfig().watchdog_ms = 5``, a misspelt field); the message lists
    the fields. ``.code``: PTO_RUNTIME_ERR_INVALID_ARGUMENT."""

    default_code = _INVALID_ARGUMENT


class SimplerIndexError(SimplerError, IndexError):
    """An index outside what an object holds (``ChipStorageTaskArgs.tensor(5)`` with two
    tensors); the message gives the count. ``.code``: PTO_RUNTIME_ERR_INVALID_ARGUMENT."""

    default_code = _INVALID_ARGUMENT


class SimplerRuntimeError(SimplerError, RuntimeError):
    """A call made in the wrong state or mode (e.g. "Worker.run: requires an initialized
    (READY) worker"); the message says what to do. ``.code``: PTO_RUNTIME_ERR_INVALID_STATE."""

    default_code = STATUS_CODES["PTO_RUNTIME_ERR_INVALID_STATE"]


class WorkerTimeoutError(SimplerError, TimeoutError):
    """A bounded wait expired (RunHandle.wait, Worker.close past its grace period).
    ``.code``: PTO_RUNTIME_ERR_TIMEOUT."""

    default_code = STATUS_CODES["PTO_RUNTIME_ERR_TIMEOUT"]


class NotImplementedYetError(SimplerError, NotImplementedError):
    """A documented capability that this build does not implement yet.
    ``.code``: PTO_RUNTIME_ERR_UNSUPPORTED."""

    default_code = STATUS_CODES["PTO_RUNTIME_ERR_UNSUPPORTED"]


class SimplerFileNotFoundError(SimplerError, FileNotFoundError):
    """A file a simpler function was given does not exist (``simpler.trace.load``); the
    message names the path, ``.filename`` is it. Also a FileNotFoundError.
    ``.code``: PTO_RUNTIME_ERR_INVALID_ARGUMENT."""

    default_code = _INVALID_ARGUMENT

    def __init__(self, message: str, filename: "str | None" = None) -> None:
        super().__init__(message)
        self.errno = errno.ENOENT
        self.strerror = message
        self.filename = filename

    def __str__(self) -> str:  # OSError's would read "[Errno 2] <message>: <filename>"
        return str(self.args[0])


class RuntimeBuildNotFoundError(SimplerError, FileNotFoundError):
    """The runtime build's files are missing; the message names the path looked for.
    ``.code``: PTO_RUNTIME_ERR_UNSUPPORTED (this install cannot run that runtime)."""

    default_code = STATUS_CODES["PTO_RUNTIME_ERR_UNSUPPORTED"]


class ArgumentError(SimplerValueError):
    """A call argument was refused before anything was enqueued (wrong device, non-contiguous
    strides, a host array where device memory is needed, a read-only output, ...).

    ``.index`` (also ``.arg_index``) is the argument's position in signature order (None
    when the argument list as a whole is wrong); ``.code`` is
    PTO_RUNTIME_ERR_INVALID_ARGUMENT.
    """

    def __init__(self, message: str, index: "int | None" = None,
                 code: "int | None" = None) -> None:
        SimplerError.__init__(self, message, code)
        self.index: "int | None" = index
        self.arg_index: "int | None" = index


class ArgumentTypeError(ArgumentError, SignatureMismatchError, SimplerTypeError):
    """An argument of the wrong kind or type: a dtype other than the signature's, a number
    where a tensor is expected (or the reverse), or the wrong number of arguments. Also a
    TypeError, a SimplerTypeError and a SignatureMismatchError."""


class KernelFaultError(ChipWorkerError):
    """A kernel crashed (a caught SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT) or reported a fault
    (code SIMPLER_CHIP_ERR_KERNEL_FAULT). After a crash the context is failed: only close()
    is allowed (docs/faults.md)."""

    default_code = STATUS_CODES["SIMPLER_CHIP_ERR_KERNEL_FAULT"]


class KernelTimeoutError(ChipWorkerError, TimeoutError):
    """The run's watchdog (CallConfig.watchdog_timeout_ms) saw no progress for the timeout
    (code SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT). The stuck run was abandoned and the context
    is failed: only close() is allowed (docs/faults.md)."""

    default_code = STATUS_CODES["SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT"]


class ClusterUnavailableError(ChipWorkerError):
    """A cluster (MIX) task asked for more clusters than the chip has, so it could never
    start; refused at submit (code SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE), nothing of it ran.
    Submit ``block_num`` at most the chip's cluster count (``simpler.sim`` topology), or split
    the work into several cluster tasks."""

    default_code = STATUS_CODES["SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE"]


class StreamChipError(ChipWorkerError, SimError):
    """A kernel-mode launch failed on the chip; raised by the caller's stream
    (``Stream.synchronize()`` / ``query()``). ``.code`` is the chip status. Both a
    ChipWorkerError (as program mode raises) and a SimError (what a stream raised before)."""


class StreamKernelFaultError(KernelFaultError, StreamChipError):
    """A kernel-mode launch's kernel crashed or reported a fault: a KernelFaultError (as
    program mode raises) raised by the caller's stream."""


class StreamKernelTimeoutError(KernelTimeoutError, StreamChipError):
    """A kernel-mode launch was timed out by its watchdog: a KernelTimeoutError (as program
    mode raises) raised by the caller's stream."""


class StreamClusterUnavailableError(ClusterUnavailableError, StreamChipError):
    """A kernel-mode launch's cluster task asked for more clusters than the chip has: a
    ClusterUnavailableError (as program mode raises) raised by the caller's stream."""


def stream_error_class(code: int) -> type:
    """The class a stream raises for a chip status (SIMPLER_CHIP_ERR_*, PTO_RUNTIME_ERR_*)
    of a failed kernel-mode launch: the program-mode class, also a SimError."""
    if code == STATUS_CODES["SIMPLER_CHIP_ERR_KERNEL_FAULT"]:
        return StreamKernelFaultError
    if code == STATUS_CODES["SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT"]:
        return StreamKernelTimeoutError
    if code == STATUS_CODES["SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE"]:
        return StreamClusterUnavailableError
    return StreamChipError


def chip_worker_error_class(code: int) -> type:
    """The ChipWorkerError subclass a native status maps to."""
    if code == STATUS_CODES["SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE"]:
        return ClusterUnavailableError
    if code == STATUS_CODES["SIMPLER_CHIP_ERR_KERNEL_FAULT"]:
        return KernelFaultError
    if code == STATUS_CODES["SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT"]:
        return KernelTimeoutError
    if code == STATUS_CODES["PTO_RUNTIME_ERR_UNSUPPORTED"]:
        return UnsupportedRuntimeOperation
    return ChipWorkerError


from simpler._typed_call import typed_functions as _typed_functions  # noqa: E402 - it imports us

_typed_functions(globals(), "simpler.errors", ["status_name", "status_meaning"])
