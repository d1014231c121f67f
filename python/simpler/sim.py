"""The simulated device driver (``libsimpler_sim``), from Python.

A thin layer over ``simpler._native.sim``: device pointers and stream/event handles are
plain ints, host data is any C-contiguous buffer-protocol object (numpy arrays, bytes,
bytearray, memoryview). Every refusal raises :class:`simpler.errors.SimError` whose
``.code`` is the driver status and ``.status_name`` its name.

Example::

    from simpler import sim
    sim.set_device(0)
    with sim.Stream() as stream:
        ptr = sim.malloc(a.nbytes)
        stream.memcpy_htod_async(ptr, a)
        stream.memcpy_dtoh_async(b, ptr)
        stream.synchronize()
        sim.free(ptr)

See docs/sim-driver.md for the semantics (sticky stream errors, destroy waits, faults).
"""
from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Optional

from simpler import _log  # noqa: F401 - native log lines -> logging "simpler"
from simpler import _native
from simpler._process_local import ProcessLocal
from simpler._ints import as_int
from simpler._typed_call import typed_call, typed_methods
from simpler._typed_call import typed_functions as _typed_functions
from simpler.errors import (STATUS_CODES, SimError, SimplerRuntimeError, SimplerTypeError,
                            SimplerValueError, status_meaning, stream_error_class)

_sim = _native.sim

#: Operation names accepted by inject_fault() and call_count().
OPERATIONS: tuple[str, ...] = (
    "malloc", "free", "memcpy", "memset", "stream_create", "stream_destroy",
    "stream_synchronize", "stream_query", "event_create", "event_destroy", "event_record",
    "event_synchronize", "launch", "host_func", "set_device", "device_reset",
)

__all__ = [
    "SimConfig", "Topology", "OPERATIONS", "api_version", "get_config", "configure",
    "device_count", "set_device", "get_device", "device_topology", "device_reset",
    "mem_get_info", "malloc", "free", "memset", "memcpy_htod", "memcpy_dtoh", "memcpy_dtod",
    "pointer_device", "Stream", "Event", "DeviceArray", "DLPACK_DEVICE_TYPE", "inject_fault",
    "clear_faults", "call_count", "reset_counters",
]

#: The DLPack device type of simulated device memory: kDLExtDev (12); the device id is
#: the sim device index. numpy only imports CPU tensors: DeviceArray.numpy() is the
#: zero-copy CPU view of the same bytes (sim device memory is host memory).
DLPACK_DEVICE_TYPE: int = 12


@dataclass(frozen=True)
class SimConfig:
    """Process-wide shape of the simulated machine."""

    device_count: int
    clusters_per_device: int
    aicpu_threads: int
    device_memory_bytes: int


@dataclass(frozen=True)
class Topology:
    """Cores of one device: each cluster is 1 AIC + 2 AIV cores."""

    clusters: int
    aic_cores: int
    aiv_cores: int
    aicpu_threads: int


def _int(value: Any, name: str) -> int:
    """An int parameter (numpy integers too; not a bool), or a TypeError naming it."""
    if type(value) is int:  # no call on the enqueue paths' common case
        return value
    number = as_int(value)
    if number is None:
        raise SimplerTypeError(f"{name} must be an int, got {type(value).__name__}")
    return number


def _check_nbytes(nbytes: int) -> int:
    nbytes = _int(nbytes, "nbytes")
    if nbytes < 0:
        raise SimplerValueError(f"nbytes must be >= 0, got {nbytes}")
    return nbytes


# The native driver takes 32-bit device ids, 64-bit addresses and sizes below 2**63. A
# Python int outside them is refused here with the error the driver gives for a bad value
# of that kind, never pybind11's "incompatible function arguments" TypeError.
_I32 = 1 << 31
_SIZE_LIMIT = 1 << 63
_ADDRESS_LIMIT = 1 << 64


def _sim_error(api: str, status: str) -> SimError:
    code = STATUS_CODES[status]
    return SimError(f"{api} failed: {status} ({code}): {status_meaning(code)}", code)


def _device(value: Any, api: str, public: str) -> int:
    device = _int(value, f"{public}: device")
    if not -_I32 <= device < _I32:
        raise _sim_error(f"{api}({device})", "SIM_ERR_INVALID_DEVICE")
    return device


def _address(value: Any, name: str, api: str, public: str = "") -> int:
    ptr = _int(value, f"{public}: {name}" if public else name)
    if not 0 <= ptr < _ADDRESS_LIMIT:
        raise _sim_error(f"{api} ({name} {ptr})", "SIM_ERR_INVALID_POINTER")
    return ptr


def _size(value: Any, name: str = "nbytes") -> int:
    size = _int(value, name)
    if not 0 <= size < _SIZE_LIMIT:
        raise SimplerValueError(f"{name} must be in 0..2**63-1, got {size}")
    return size


def _optional_size(value: Any, name: str = "nbytes") -> Optional[int]:
    return None if value is None else _size(value, name)


def _checked_again(call: Callable[[], None], *checks: Callable[[], Any]) -> None:
    """Runs a native call whose arguments were checked only cheaply (the stream hot paths);
    when pybind11 refuses one of them, the strict checks name it instead."""
    try:
        call()
    except TypeError:
        for check in checks:
            check()
        raise


def _check_byte_value(value: int) -> int:
    value = _int(value, "value")
    if not 0 <= value <= 255:
        raise SimplerValueError(f"memset value must be a byte in [0, 255], got {value}")
    return value


# ---- configuration and devices ---------------------------------------------------------

def api_version() -> int:
    """SIM_DRIVER_API_VERSION of the loaded driver."""
    return _sim.api_version()


def get_config() -> SimConfig:
    """The configuration in effect (defaults, overridden by SIMPLER_SIM_* at first use)."""
    return SimConfig(**_sim.get_config())


@typed_call("sim.configure")
def configure(*, device_count: Optional[int] = None, clusters_per_device: Optional[int] = None,
              aicpu_threads: Optional[int] = None,
              device_memory_bytes: Optional[int] = None) -> SimConfig:
    """Change the configuration; fields left None keep their value.

    Only before any device is used in this process (else SimError
    SIM_ERR_ALREADY_INITIALIZED). Returns the new configuration.
    """
    current = get_config()
    _sim.configure(
        current.device_count if device_count is None else _count(device_count, "device_count"),
        (current.clusters_per_device if clusters_per_device is None
         else _count(clusters_per_device, "clusters_per_device")),
        current.aicpu_threads if aicpu_threads is None else _count(aicpu_threads, "aicpu_threads"),
        (current.device_memory_bytes if device_memory_bytes is None
         else _count(device_memory_bytes, "device_memory_bytes", 64 << 10, 1 << 40)),
    )
    return get_config()


def _count(value: Any, name: str, low: int = 1, high: int = 64) -> int:
    """A configuration number in the driver's documented range (docs/sim-driver.md), checked
    here so the error names the field and the range."""
    count = _int(value, f"sim.configure: {name}")
    if not low <= count <= high:
        raise SimplerValueError(f"sim.configure: {name} must be in {low}..{high}, got {count}")
    return count


def device_count() -> int:
    """Number of simulated devices."""
    return _sim.device_count()


def set_device(device: int) -> None:
    """Make `device` the current device of the calling thread."""
    _sim.set_device(_device(device, "sim_set_device", "sim.set_device"))


def get_device() -> Optional[int]:
    """The calling thread's current device, or None if set_device() was never called on it."""
    return _sim.get_device()


def device_topology(device: int) -> Topology:
    """Clusters and cores of `device`."""
    return Topology(**_sim.device_topology(_device(device, "sim_device_topology",
                                                   "sim.device_topology")))


def device_reset(device: int) -> None:
    """Wait for the device's streams, destroy them and free all its memory."""
    _sim.device_reset(_device(device, "sim_device_reset", "sim.device_reset"))


# ---- memory (synchronous) --------------------------------------------------------------

def mem_get_info() -> tuple[int, int]:
    """(free, total) bytes of the current device."""
    free_bytes, total = _sim.mem_get_info()
    return int(free_bytes), int(total)


def malloc(nbytes: int) -> int:
    """Allocate `nbytes` (> 0) on the current device; returns the device pointer (1024-aligned)."""
    return _sim.malloc(_size(nbytes, "sim.malloc: nbytes"))


def free(ptr: int) -> None:
    """Free the allocation starting exactly at `ptr` (any device)."""
    _sim.free(_address(ptr, "ptr", "sim_free", "sim.free"))


def memset(ptr: int, value: int, nbytes: int) -> None:
    """Set `nbytes` of device memory at `ptr` to the byte `value`."""
    _sim.memset(_address(ptr, "ptr", "sim_memset", "sim.memset"), _check_byte_value(value),
                _size(nbytes, "sim.memset: nbytes"))


def memcpy_htod(dst_ptr: int, src: Any, nbytes: Optional[int] = None) -> None:
    """Copy a host buffer (all of it, or its first `nbytes`) to device memory at `dst_ptr`."""
    _sim.memcpy_htod(_address(dst_ptr, "dst_ptr", "sim_memcpy", "sim.memcpy_htod"), src,
                     _optional_size(nbytes, "sim.memcpy_htod: nbytes"))


def memcpy_dtoh(dst: Any, src_ptr: int, nbytes: Optional[int] = None) -> None:
    """Fill a writable host buffer (all of it, or its first `nbytes`) from device memory."""
    _sim.memcpy_dtoh(dst, _address(src_ptr, "src_ptr", "sim_memcpy", "sim.memcpy_dtoh"),
                     _optional_size(nbytes, "sim.memcpy_dtoh: nbytes"))


def memcpy_dtod(dst_ptr: int, src_ptr: int, nbytes: int) -> None:
    """Copy `nbytes` between device allocations (possibly on different devices)."""
    _sim.memcpy_dtod(_address(dst_ptr, "dst_ptr", "sim_memcpy", "sim.memcpy_dtod"),
                     _address(src_ptr, "src_ptr", "sim_memcpy", "sim.memcpy_dtod"),
                     _size(nbytes, "sim.memcpy_dtod: nbytes"))


def pointer_device(ptr: int, nbytes: int = 1) -> int:
    """The device owning [ptr, ptr+nbytes) inside one live allocation."""
    return _sim.pointer_device(_address(ptr, "ptr", "sim_pointer_device", "sim.pointer_device"),
                               _size(nbytes, "sim.pointer_device: nbytes"))


# ---- streams and events ----------------------------------------------------------------

_live_streams: "weakref.WeakSet[Stream]" = weakref.WeakSet()
# Keep-alive lists of streams that could not be destroyed when collected (rare: injected
# faults); leaking them is safer than freeing memory a stream may still touch.
_never_freed: list[list[Any]] = []


@contextlib.contextmanager
def _launch_messages(stream: "Stream", api: str) -> Iterator[None]:
    """Turns a stream's chip-status SimError (a kernel-mode launch that failed on the chip:
    SIMPLER_CHIP_ERR_*, codes -1..-999) into the error program mode raises for the same
    status (KernelFaultError, KernelTimeoutError, else ChipWorkerError; each also a
    SimError), with the runtime's message for that launch: it names the kernel and the task.
    The stream itself only carries the status."""
    try:
        yield
    except SimError as err:
        if err.code is None or not -1000 < err.code < 0:
            raise
        worker = sys.modules.get("simpler.worker")  # only if kernel-mode Workers can exist
        messages: List[str] = []
        if worker is not None:
            try:
                device: Optional[int] = stream.device
            except SimError:
                device = None
            messages = worker.kernel_launch_messages(device, err.status_name)
        if messages:
            text = " | ".join(messages)  # each ends with its [STATUS_NAME]
        else:
            text = (f"a kernel-mode launch failed on the chip: "
                    f"{status_meaning(err.code) or 'no message'} [{err.status_name}]")
        raise stream_error_class(err.code)(f"Stream.{api}: {text}", err.code) from None


def _memoryview(obj: Any, what: str) -> memoryview:
    try:
        return memoryview(obj)
    except TypeError:
        raise SimplerTypeError(f"{what} must be a numpy array or a buffer-protocol object, "
                               f"got {type(obj).__name__}") from None


def _require(obj: Any, cls: type, api: str, name: str) -> Any:
    if not isinstance(obj, cls):
        raise SimplerTypeError(f"{api}: {name} must be a simpler.sim.{cls.__name__}, "
                               f"got {type(obj).__name__}")
    return obj


# memset_async is the launch benchmark's bare-enqueue anchor: no wrapper frame there.
@typed_methods("Stream", exclude=("memset_async",))
class Stream(ProcessLocal):
    """An in-order queue of operations on the current device (created there).

    ``handle`` is the driver handle as an int, usable as ``caller_stream``. Host buffers
    and Python callables handed to async methods are kept alive by the stream until a
    synchronize(), an idle query(), or destroy().
    An operation that fails makes the stream sticky: synchronize()/query() raise that
    error from then on and later operations are skipped.
    """

    def __init__(self) -> None:
        self._handle: int = _sim.stream_create()
        self._destroyed = False
        self._abandoned = False  # left busy at exit, or inherited by a forked child
        self._pid = os.getpid()
        self._keepalive: list[Any] = []
        _live_streams.add(self)

    def _check_process(self, api: str) -> None:
        # A forked child has the stream's memory but not its executor thread: waiting on it
        # would never end. The child must leave it alone (it is never destroyed there).
        if self._pid != os.getpid():
            raise SimplerRuntimeError(
                       f"Stream.{api}: this stream belongs to the parent process (pid {self._pid}); "
                       "a forked child must not use or destroy it (create a new Stream in the child)")

    @property
    def handle(self) -> int:
        return self._handle

    @property
    def device(self) -> int:
        """The device the stream was created on."""
        return _sim.stream_device(self._handle)

    def synchronize(self) -> None:
        """Wait until everything enqueued so far ran; raise the stream's sticky error, if any.

        A failed kernel-mode launch raises what program mode raises for its status
        (KernelFaultError, KernelTimeoutError, else ChipWorkerError; each also a SimError)
        with ``.code`` the chip status (``SIMPLER_CHIP_ERR_*``) and the runtime's message,
        which names the kernel and the task.
        Ctrl-C raises KeyboardInterrupt within ~50 ms; the stream's work keeps running.
        """
        self._check_process("synchronize")
        with _launch_messages(self, "synchronize"):
            _sim.stream_synchronize(self._handle)
        # Only after a successful wait: a refused call (e.g. an injected fault) may not
        # have waited, and the stream may still read these buffers.
        self._keepalive.clear()

    def query(self) -> bool:
        """True when idle, False while work is pending; raises the sticky error, if any."""
        self._check_process("query")
        with _launch_messages(self, "query"):
            done = _sim.stream_query(self._handle)
        if done:
            self._keepalive.clear()
        return done

    def destroy(self) -> None:
        """Wait for pending work, then destroy the stream (a second call raises SimError)."""
        self._check_process("destroy")
        _sim.stream_destroy(self._handle)
        self._destroyed = True
        self._keepalive.clear()

    def memcpy_htod_async(self, dst_ptr: int, src: Any, nbytes: Optional[int] = None) -> None:
        """Enqueue a copy of a host buffer to device memory."""
        view = _memoryview(src, "source")  # holds the export: the buffer cannot be resized
        _checked_again(lambda: _sim.memcpy_htod_async(_int(dst_ptr, "dst_ptr"), view, nbytes,
                                                      self._handle),
                       lambda: _address(dst_ptr, "dst_ptr", "sim_memcpy_async"),
                       lambda: _optional_size(nbytes))
        self._keepalive.append(view)

    def memcpy_dtoh_async(self, dst: Any, src_ptr: int, nbytes: Optional[int] = None) -> None:
        """Enqueue a copy of device memory into a writable host buffer."""
        view = _memoryview(dst, "destination")
        _checked_again(lambda: _sim.memcpy_dtoh_async(view, _int(src_ptr, "src_ptr"), nbytes,
                                                      self._handle),
                       lambda: _address(src_ptr, "src_ptr", "sim_memcpy_async"),
                       lambda: _optional_size(nbytes))
        self._keepalive.append(view)

    def memcpy_dtod_async(self, dst_ptr: int, src_ptr: int, nbytes: int) -> None:
        """Enqueue a device-to-device copy."""
        _checked_again(lambda: _sim.memcpy_dtod_async(_int(dst_ptr, "dst_ptr"), _int(src_ptr, "src_ptr"),
                                                      _check_nbytes(nbytes), self._handle),
                       lambda: _address(dst_ptr, "dst_ptr", "sim_memcpy_async"),
                       lambda: _address(src_ptr, "src_ptr", "sim_memcpy_async"),
                       lambda: _size(nbytes))

    def memset_async(self, ptr: int, value: int, nbytes: int) -> None:
        """Enqueue setting `nbytes` of device memory to the byte `value`."""
        try:
            _sim.memset_async(_int(ptr, "ptr"), _check_byte_value(value), _check_nbytes(nbytes),
                              self._handle)
        except TypeError:  # pybind11 refused a value the cheap checks let through
            _address(ptr, "ptr", "sim_memset_async")
            _size(nbytes)
            raise

    def host_func(self, fn: Callable[[], Any]) -> None:
        """Enqueue a Python callable, run in stream order on the stream's thread.

        An exception it raises goes to sys.unraisablehook (host functions have no status).
        """
        if not callable(fn):
            raise SimplerTypeError(f"host_func needs a callable, got {type(fn).__name__}")
        _sim.launch_host_func(self._handle, fn)
        self._keepalive.append(fn)

    def record(self, event: "Event") -> None:
        """Enqueue a record of `event` (same device as the stream)."""
        _require(event, Event, "Stream.record", "event").record(self)

    def wait_event(self, event: "Event") -> None:
        """Later operations of this stream wait until `event`'s latest record is reached."""
        _sim.stream_wait_event(self._handle, _require(event, Event, "Stream.wait_event", "event").handle)

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self._destroyed:
            self.destroy()

    def __del__(self) -> None:
        if getattr(self, "_destroyed", True):
            return
        if self._abandoned or self._pid != os.getpid():
            _never_freed.append(self._keepalive)  # never waited for, never freed
            return
        try:
            _sim.stream_destroy(self._handle)
        except Exception:
            # Not destroyed (or already gone via device_reset): pending operations might
            # still use the kept buffers and callables, so they are never freed.
            if self._keepalive:
                _never_freed.append(self._keepalive)

    def __repr__(self) -> str:
        state = "destroyed" if self._destroyed else "live"
        return f"<simpler.sim.Stream handle={self._handle:#x} {state}>"


@typed_methods("Event")
class Event(ProcessLocal):
    """A point in a stream: record() it, then synchronize()/query() it or make another
    stream wait_event() for it. Created on the current device; an unrecorded event is complete."""

    def __init__(self) -> None:
        self._handle: int = _sim.event_create()
        self._destroyed = False

    @property
    def handle(self) -> int:
        return self._handle

    def record(self, stream: Stream) -> None:
        """Enqueue a record of this event on `stream`."""
        _sim.event_record(self._handle, _require(stream, Stream, "Event.record", "stream").handle)

    def synchronize(self) -> None:
        """Wait until the latest record was reached."""
        _sim.event_synchronize(self._handle)

    def query(self) -> bool:
        """True once the latest record was reached (or if never recorded)."""
        return _sim.event_query(self._handle)

    def destroy(self) -> None:
        """Destroy the handle (pending records still complete safely)."""
        _sim.event_destroy(self._handle)
        self._destroyed = True

    def __enter__(self) -> "Event":
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self._destroyed:
            self.destroy()

    def __del__(self) -> None:
        if getattr(self, "_destroyed", True):
            return
        try:
            _sim.event_destroy(self._handle)
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "destroyed" if self._destroyed else "live"
        return f"<simpler.sim.Event handle={self._handle:#x} {state}>"


# ---- device arrays ---------------------------------------------------------------------

def _data_type(dtype: Any) -> Any:
    from simpler.task_interface import DataType
    if isinstance(dtype, DataType):
        return dtype
    if isinstance(dtype, str) and dtype.lower() in ("bfloat16", "bf16"):
        return DataType.BFLOAT16  # numpy has no such dtype (the array's numpy view is uint16)
    return DataType.from_numpy(dtype)


@typed_methods("DeviceArray")
class DeviceArray(ProcessLocal, _sim.DeviceArray):
    """A C-contiguous array in the current device's memory that owns its allocation.

    ``DeviceArray(shape, dtype=numpy.float32, stream=None)`` allocates (uninitialized) on
    the calling thread's current device. It is freed when collected (or by ``free()``):
    in stream order when tied to a ``stream`` -- the free is enqueued there, so work
    already queued on that stream finishes first -- else at once. Pass it straight to
    ``Worker.kernel_launch`` / ``kernel_bind`` / ``run``. ``numpy()`` is a zero-copy
    view (sim device memory is host memory); ``__dlpack__`` exports it on the simulated
    device (:data:`DLPACK_DEVICE_TYPE`).
    """

    def __init__(self, shape: Any, dtype: Any = "float32", *, stream: Any = None) -> None:
        dims = [as_int(shape)] if not hasattr(shape, "__iter__") else [as_int(d) for d in shape]
        if None in dims:
            raise SimplerTypeError(f"DeviceArray: shape must be an int or a sequence of ints, "
                                   f"got {shape!r}")
        if any(not -_SIZE_LIMIT <= d < _SIZE_LIMIT for d in dims):
            raise SimplerValueError(f"DeviceArray: shape {tuple(dims)} has a dimension that "
                                    "does not fit 64 bits")
        super().__init__(dims, _data_type(dtype), stream)

    @classmethod
    def from_numpy(cls, array: Any, *, stream: Any = None) -> "DeviceArray":
        """A new device array holding a copy of ``array`` (copied synchronously)."""
        import numpy as np
        try:
            host = np.ascontiguousarray(array)
        except (TypeError, ValueError) as e:  # e.g. a torch bfloat16 tensor: numpy lacks it
            raise SimplerTypeError(f"DeviceArray.from_numpy: cannot read a "
                                   f"{type(array).__name__} as a numpy array ({e})") from None
        out = cls(host.shape or (1,), host.dtype, stream=stream)
        if host.nbytes:
            memcpy_htod(out.ptr, host)
        return out

    @classmethod
    def zeros(cls, shape: Any, dtype: Any = "float32", *, stream: Any = None) -> "DeviceArray":
        """A zero-filled device array."""
        out = cls(shape, dtype, stream=stream)
        if out.nbytes:
            memset(out.ptr, 0, out.nbytes)
        return out

    @property
    def dtype(self) -> Any:
        """The numpy dtype (uint16 for BFLOAT16, which numpy lacks)."""
        import numpy as np
        return np.asarray(self).dtype

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def numpy(self) -> Any:
        """A zero-copy numpy view of the device memory (CPU device for DLPack). It keeps
        the array alive; read it after the stream work that writes it has finished.
        ValueError once the array was freed or its device was reset."""
        import numpy as np
        if self.ptr == 0:
            raise SimplerValueError("DeviceArray: the array was freed (free(), or "
                                    "sim.device_reset of its device); allocate a new one")
        return np.asarray(self)

    def to_numpy(self) -> Any:
        """A host copy (synchronize the stream that writes the array first)."""
        return self.numpy().copy()

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        state = f"ptr={self.ptr:#x}" if self.ptr else "freed"
        return (f"<simpler.sim.DeviceArray shape={self.shape} dtype={self.data_type.name} "
                f"device={self.device} {state}>")


# Seconds the exit handler waits, in total, for the streams' pending work.
EXIT_GRACE_SECONDS = 10.0


@atexit.register
def _drain_streams_at_exit() -> None:
    # No Python host function may run once the interpreter starts finalizing, so pending
    # work is waited for now, with a bound: a stream still busy after the grace period (a
    # hung kernel) is abandoned and reported, and the process exits anyway. Streams a
    # forked child inherited are never waited for (their executor is not in the child).
    deadline = time.monotonic() + EXIT_GRACE_SECONDS
    for stream in list(_live_streams):
        if stream._destroyed or stream._abandoned or stream._pid != os.getpid():
            continue
        try:
            left_us = max(0, int((deadline - time.monotonic()) * 1e6))
            if not _sim.stream_wait(stream.handle, left_us):
                stream._abandoned = True
                # Through logging (logger "simpler", like the native log lines) so that an
                # embedding framework captures it; with no handler configured Python still
                # prints a WARNING to stderr.
                logging.getLogger("simpler").warning(
                    "sim: at exit, %r was still busy after %g s; abandoned (a hung kernel? "
                    "see docs/faults.md)", stream, EXIT_GRACE_SECONDS)
        except Exception:
            pass


# ---- test hooks ------------------------------------------------------------------------

def inject_fault(op: str, count: int = 1, status: int = 0) -> None:
    """The next `count` calls of `op` (see OPERATIONS) fail with `status`
    (0 = SIM_ERR_INJECTED_FAULT). A "launch" fault surfaces on the stream when the job runs."""
    _sim.inject_fault(str(op), _int(count, "count"), _int(status, "status"))


def clear_faults() -> None:
    """Drop every pending injected fault."""
    _sim.clear_faults()


def call_count(op: str) -> int:
    """Calls of `op` since the last reset_counters() (failing calls included)."""
    return _sim.call_count(str(op))


def reset_counters() -> None:
    """Zero every operation counter."""
    _sim.reset_counters()


# A call that does not fit a function's signature is a SimplerTypeError naming it.
_typed_functions(globals(), "sim", __all__)
