"""simpler.Worker — the public object frameworks hold (a thin layer over the C++ Worker).

``Worker(level=2, execution_mode="program")`` (default): simpler owns the device —
register callables, ``run`` / ``submit`` them, manage device memory.
``Worker(level=2, execution_mode="kernel")``: the caller owns the device and a stream;
simpler enqueues whole chip programs on that stream (docs/kernel-mode.md)::

    sim.set_device(0); stream = sim.Stream()
    worker = Worker(level=2, execution_mode="kernel", device_id=0,
                    platform="a2a3sim", runtime="tensormap_and_ringbuffer")
    assert worker.kernel_mode_supported
    worker.init(config=CallConfig())
    cid = worker.kernel_prepare_callable(chip_callable)
    worker.kernel_launch(cid, dx, dy, 2.5, caller_stream=stream)   # borrowed args
    launch = worker.kernel_bind(cid, dx, dy, 2.5)                  # packed once
    launch.launch(caller_stream=stream)
    stream.synchronize()
    worker.close()

Every rule is enforced by the C++ Worker (include/simpler/worker/worker.h); this module adds
Python keyword handling, numpy interop, the context manager and the GC pin.
"""
from __future__ import annotations

import inspect
import itertools
import math
import numbers
import os
import threading
import warnings
import weakref
from typing import Any, List, Optional

from simpler import _native
from simpler._ints import as_int, is_bool, is_enum, require_bool, require_int
from simpler._process_local import ProcessLocal
from simpler._typed_call import (ClassSignature, call_form, mismatch, refusal, typed_call,
                                 typed_methods)
from simpler import errors as _errors  # noqa: F401  (the native error translator imports it)
from simpler.errors import SimplerTypeError, SimplerValueError

_nw = _native.worker

__all__ = ["Worker", "RunHandle", "KernelLaunch"]

#: A bound kernel-mode launch (see :meth:`Worker.kernel_bind`).
KernelLaunch = _nw.KernelLaunch


# Live initialized kernel-mode Workers, for the messages of launches that failed on a
# caller's stream (kernel_launch_messages, used by simpler.sim's stream errors).
_KERNEL_WORKERS: "weakref.WeakSet[Worker]" = weakref.WeakSet()


def kernel_launch_messages(device_id: Optional[int], status_name: str) -> List[str]:
    """The runtime messages of failed launches naming ``status_name``, from this process's
    live kernel-mode Workers (on ``device_id``, when given)."""
    out = []
    for worker in list(_KERNEL_WORKERS):
        if device_id is not None and worker.device_id != device_id:
            continue
        try:
            message = worker.kernel_launch_error()
        except Exception:  # noqa: BLE001 - a closing worker has no message to add
            continue
        if message and status_name in message:
            out.append(message)
    return out


def _prepare_output_dir(config: Any) -> None:
    """Creates a config's output_prefix directory when a diagnostics switch is on.

    A directory that cannot be created is a DiagnosticsWarning, never an error: the run
    goes on and its results stand (the runtime also warns, on stderr, for each file it
    could not write).
    """
    if config is None or not config.output_prefix:
        return
    if not (config.enable_swimlane or config.dump_args or config.dump_dep_graph
            or config.enable_profiling):
        return
    config.validate()  # a bad output_prefix (a NUL byte, too long) is named before makedirs
    try:
        os.makedirs(config.output_prefix, exist_ok=True)
    except OSError as e:
        warnings.warn(f"simpler: diagnostics directory {config.output_prefix!r} cannot be "
                      f"created ({e.strerror or e}); the run goes on without its diagnostics "
                      f"files", _errors.DiagnosticsWarning,
                      stacklevel=4)  # the caller of init/run/submit, past the typed_call frame


# Native workers of kernel-mode Workers that were garbage-collected (or alive at exit)
# without close(): pinned for the rest of the process, never finalized on the collecting
# thread.
_PINNED: List[Any] = []
_PINNED_LOCK = threading.Lock()

_GC_WARNING = ("simpler.Worker(execution_mode='kernel', device_id={device}) was "
               "garbage-collected without close(); its native context is pinned for the rest "
               "of the process. Call worker.close() on the thread that called init().")


def _pin_unclosed(native: Any, device_id: int) -> None:
    # Holds only the native object, never the Worker, so the Worker itself is collected.
    if not native.holds_native_context:
        return
    with _PINNED_LOCK:
        _PINNED.append(native)
    warnings.warn(_GC_WARNING.format(device=device_id), ResourceWarning, stacklevel=2)


class _Omitted:
    """The default of run/submit's ``args=`` (issue 4's ``run(handle, args=None, config=None)``):
    the arguments were given by position, or not at all. Shown as None in call forms."""

    def __repr__(self) -> str:
        return "None"


_OMITTED = _Omitted()


def _given(arguments: "tuple[Any, ...]", args: Any, api: str) -> "tuple[Any, ...]":
    """The run's arguments: by position, or the one ``args=`` value (a ChipStorageTaskArgs,
    a list of arguments in signature order, or None), not both."""
    if args is _OMITTED:
        return arguments
    if arguments:
        raise SimplerTypeError(f"Worker.{api}: the arguments are given twice (by position and "
                               f"as args=); pass them one way")
    return (args,)


_RUN_KEYS = itertools.count()  # next() is atomic under the GIL: runs submitted from threads
_COMPLETE_DROPPED_MIN = 32     # runs held before submit looks for dropped finished ones


@typed_methods("RunHandle")
class RunHandle(ProcessLocal):
    """An asynchronous program-mode run returned by :meth:`Worker.submit`."""

    __slots__ = ("_native", "_args", "_pending", "_key", "__weakref__")

    def __init__(self, native: Any, args: Any, pending: "dict[int, Any]", key: int) -> None:
        self._native = native
        self._args = args  # keeps HOST tensor memory alive until the run completed
        self._pending = pending
        # The Worker keeps the args of a dropped handle until its run completed, under a key
        # used once (Worker._lease), not id(self): a dropped handle's id is reused by a later
        # one, which would free the args of a run still queued.
        self._key = key
        pending[key] = (native, args, weakref.ref(self))

    @property
    def done(self) -> bool:
        """True once the run finished (non-blocking); its HOST outputs are then written."""
        finished = self._native.done()
        if finished:
            self._pending.pop(self._key, None)
        return finished

    def wait(self, timeout: Optional[float] = None) -> None:
        """Waits for the run. ``timeout`` in seconds (None = forever): TimeoutError when it
        expires (the run is not cancelled). Raises the run's error; repeatable. Ctrl-C
        raises KeyboardInterrupt within ~50 ms; the run keeps running (wait again)."""
        seconds = _require_timeout(timeout, "RunHandle.wait")
        try:
            self._native.wait(seconds)
        finally:
            if self._native.done():
                self._pending.pop(self._key, None)

    def result(self, timeout: Optional[float] = None) -> None:
        """Same as :meth:`wait`: returns None once the run succeeded, raises its error."""
        self.wait(timeout)

    def __repr__(self) -> str:
        try:
            state = "done" if self._native.done() else "running"
        except Exception:  # noqa: BLE001 - e.g. inherited by a forked child: repr never raises
            state = "unknown"
        return f"<simpler.RunHandle {state}>"


def _lib_dir_path(lib_dir: Any) -> Optional[str]:
    """``lib_dir`` as a str (None when not given); a SimplerTypeError for a non-path."""
    if lib_dir is None or lib_dir == "":
        return None
    if not isinstance(lib_dir, (str, os.PathLike)):
        raise SimplerTypeError(f"Worker: lib_dir must be a path (str or os.PathLike) or None, "
                               f"got {type(lib_dir).__name__}")
    return os.fspath(lib_dir)


# kernel_launch checks its own keywords: the hot launch path pays no wrapper frame.
@typed_methods("Worker", exclude=("kernel_launch",))
class Worker(ProcessLocal):
    """A level-2 worker: one chip, in ``"program"`` or ``"kernel"`` execution mode.

    ``Worker(level=3, device_ids=[...])`` (several chips of this host) and
    ``Worker(level=4, ...)`` (several hosts, under mpirun) return the multi-chip Workers of
    simpler.host, subclasses of this class (docs/concepts.md, "Levels above the chip")."""

    def __new__(cls, level: int = 2, *args: Any, **kwargs: Any) -> "Worker":
        number = as_int(level)  # numpy integers are ints (level=np.int64(3) too)
        if cls is Worker and number in (3, 4):
            from simpler.host import dispatch_level
            return dispatch_level(number, kwargs)
        if cls is Worker and "device_ids" in kwargs:
            # Refused here, naming the level: __init__ would only say device_ids is unknown.
            if number is None:
                raise SimplerTypeError(f"Worker: level must be an int, got {type(level).__name__}")
            if number == 2:
                raise SimplerTypeError("Worker(level=2) drives one chip: pass device_id=N; "
                                       "device_ids=[...] is for level=3 (several chips of this host)")
            raise SimplerValueError(f"Worker: level must be 2, 3 or 4 (got {level}); device_ids=[...] "
                                    "is for level=3 (several chips of this host) or level=4 (hosts)")
        return super().__new__(cls)

    @typed_call("Worker")
    def __init__(self, level: int = 2, *, device_id: int = 0, platform: str = "a2a3sim",
                 runtime: str = "tensormap_and_ringbuffer", execution_mode: str = "program",
                 enable_sdma: bool = False, lib_dir: Optional["os.PathLike[str] | str"] = None) -> None:
        numbers_given = []
        for name, given in (("level", level), ("device_id", device_id)):
            value = as_int(given)  # numpy integers are ints; bools are not (docs/api.md)
            if value is None:
                raise SimplerTypeError(f"Worker: {name} must be an int, got {type(given).__name__}")
            if not -_I32 <= value < _I32:  # the native options hold 32-bit ints
                raise SimplerValueError(f"Worker: {name} {value} is out of range")
            numbers_given.append(value)
        level, device_id = numbers_given
        for name, value in (("platform", platform), ("runtime", runtime),
                            ("execution_mode", execution_mode)):
            if not isinstance(value, str):
                raise SimplerTypeError(f"Worker: {name} must be a str, got {type(value).__name__}")
        self._native = _nw.Worker(level, device_id, platform, runtime, execution_mode,
                                  require_bool(enable_sdma, "Worker: enable_sdma"),
                                  _lib_dir_path(lib_dir) or "")
        self._pin: Optional[weakref.finalize] = None
        self._images: List[Any] = []   # kernel mode: prepared ChipCallables, kept until teardown
        # Program mode: the runs not yet completed, key -> (native handle, args, weakref to
        # the RunHandle); the args keep HOST memory alive until the run completed.
        self._pending: "dict[int, Any]" = {}
        self._complete_at = _COMPLETE_DROPPED_MIN

    # ---- state --------------------------------------------------------------------------
    @property
    def level(self) -> int:
        return self._native.level

    @property
    def device_id(self) -> int:
        return self._native.device_id

    @property
    def execution_mode(self) -> str:
        return self._native.execution_mode

    @property
    def state(self) -> str:
        """``"NEW"``, ``"READY"``, ``"FAILED"`` or ``"CLOSED"``."""
        return self._native.state

    @property
    def close_grace(self) -> float:
        """Seconds close() waits for a prepare/launch in progress (default 10)."""
        return self._native.close_grace

    @close_grace.setter
    def close_grace(self, seconds: float) -> None:
        # Python and numpy numbers (numpy.float32 too, as RunHandle.wait takes); not a bool.
        value = _seconds(seconds) if isinstance(seconds, numbers.Real) else None
        if value is None:
            raise SimplerTypeError(f"Worker.close_grace: seconds must be a number, "
                                   f"got {type(seconds).__name__}")
        self._native.close_grace = value

    @property
    def kernel_mode_supported(self) -> bool:
        """Whether this (platform, runtime) runs kernel mode; answered before init through a
        probe that takes no device (cached; a missing build raises FileNotFoundError)."""
        return self._native.kernel_mode_supported()

    # ---- lifecycle ----------------------------------------------------------------------
    @typed_call("Worker.init")
    def init(self, prewarm_config: Any = None, *, config: Any = None) -> None:
        """Program mode: ``init(prewarm_config=None)``. Kernel mode: ``init(config=CallConfig(...))``
        on the device current on the calling thread."""
        _require_config(prewarm_config, "init", "prewarm_config")
        _require_config(config, "init", "config")
        _prepare_output_dir(config)
        self._native.init(prewarm_config, config)
        if self.execution_mode == "kernel":
            self._pin = weakref.finalize(self, _pin_unclosed, self._native, self.device_id)
            _KERNEL_WORKERS.add(self)

    def close(self) -> None:
        """Releases the worker's context (idempotent). Kernel mode: no stream sync, no device
        reset; only on the thread that called init(); TimeoutError past the grace period.
        Program mode: waits at most ``close_grace`` seconds for the runs in flight; a run
        still running then (a hung kernel, no watchdog) makes close() abandon the context
        (never torn down: its threads and memory stay held for the life of the process; the
        device itself is released, a new Worker may use it), warn (RuntimeWarning) and log
        the report (logger ``"simpler"``). In a forked child: RuntimeError, no native call
        (docs/faults.md)."""
        self._native.close()
        report = self._native.abandoned_report
        if report and not getattr(self, "_abandon_warned", False):
            self._abandon_warned = True
            warnings.warn(report, RuntimeWarning, stacklevel=3)  # close()'s caller (typed_call)
        if not self._native.holds_native_context:
            if self._pin is not None:
                self._pin.detach()
                self._pin = None
            self._images.clear()
            self._pending.clear()

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def committed_device_memory(self) -> int:
        """Bytes of device memory this worker's context holds (0 before init / after close)."""
        return self._native.committed_device_memory()

    # ---- program mode -------------------------------------------------------------------
    def register(self, chip_callable: Any) -> Any:
        """Registers a ChipCallable (before or after init); returns an opaque handle."""
        return self._native.register(chip_callable)

    def unregister(self, handle: Any) -> None:
        self._native.unregister(handle)

    @typed_call("Worker.run")
    def run(self, handle: Any, *arguments: Any, args: Any = _OMITTED, config: Any = None) -> None:
        """Runs the callable and blocks until it finished; raises the run's error.

        ``args``: one ChipStorageTaskArgs, or the arguments in signature order (host numpy
        arrays, sim.DeviceArray / DLPack device tensors, ChipTensors, Python or numpy
        numbers; see :meth:`kernel_launch`). Host arrays are staged to the device for the
        run and outputs copied back.

        Ctrl-C raises KeyboardInterrupt within ~50 ms; the run is not cancelled: it keeps
        running, and close() completes it (bounded by ``close_grace``)."""
        packed, config = self._program_args("run", handle, _given(arguments, args, "run"), config)
        if self.execution_mode != "program":
            self._native.run(handle, packed, config)  # raises the mode error
        _prepare_output_dir(config)
        # submit + an interruptible wait (RunHandle.wait), so Ctrl-C is honoured.
        run = self._submit_leased("run", handle, packed, config)
        run.wait()

    @typed_call("Worker.submit")
    def submit(self, handle: Any, *arguments: Any, args: Any = _OMITTED,
               config: Any = None) -> RunHandle:
        """Starts the callable and returns at once with a :class:`RunHandle` (arguments as
        for :meth:`run`; host arrays stay leased until the run completed)."""
        packed, config = self._program_args("submit", handle, _given(arguments, args, "submit"),
                                            config)
        _prepare_output_dir(config)
        return self._submit_leased("submit", handle, packed, config)

    def _submit_leased(self, api: str, handle: Any, packed: Any, config: Any) -> RunHandle:
        """Submits with the host arrays leased first: a Ctrl-C just after the native submit
        returned (before the RunHandle holds them) would free them while the run writes its
        outputs there. After such a Ctrl-C the lease is kept until close() (the run may or
        may not have been submitted); a refusal (nothing submitted) ends it."""
        self._complete_dropped_runs()
        key = next(_RUN_KEYS)
        self._pending[key] = (None, packed, None)
        try:
            native = self._native.submit(handle, packed, config, api)
        except Exception:
            self._pending.pop(key, None)
            raise
        return RunHandle(native, packed, self._pending, key)

    def _complete_dropped_runs(self) -> None:
        """Completes the finished runs whose RunHandle was dropped (fire and forget): their
        HOST outputs are copied back and their staged device copies freed. Without this they
        were held until close() and a submit loop ran the device out of memory. Amortized:
        a pass only once the runs held doubled since the last one."""
        if len(self._pending) < self._complete_at:
            return
        for key, (native, _, handle) in list(self._pending.items()):
            if handle is not None and handle() is None:   # None: leased, no handle yet
                try:
                    finished = native.done()
                except Exception:  # noqa: BLE001 - a forked child: the submit says so itself
                    return
                if finished:
                    self._pending.pop(key, None)
        self._complete_at = max(_COMPLETE_DROPPED_MIN, 2 * len(self._pending))

    def _program_args(self, api: str, handle: Any, args: "tuple[Any, ...]",
                      config: Any) -> "tuple[Any, Any]":
        from simpler.task_interface import CallConfig, ChipStorageTaskArgs
        old_args = (ChipStorageTaskArgs, type(None))
        if (len(args) == 2 and config is None and isinstance(args[0], old_args)
                and (args[1] is None or isinstance(args[1], CallConfig))):
            args, config = args[:1], args[1]  # the old run(handle, args, config) form
        elif args and config is None and isinstance(args[-1], CallConfig):
            args, config = args[:-1], args[-1]
        _require_config(config, api, "config")
        whole = (ChipStorageTaskArgs, list, tuple)
        if len(args) == 1 and (args[0] is None or isinstance(args[0], whole)):
            args = args[0]
        if args is None:
            args = []  # no arguments: packed too, so a wrong count is an ArgumentTypeError
        if isinstance(args, ChipStorageTaskArgs):
            return args, config
        return self._native.pack_args(handle, args, api), config

    def malloc(self, size: int) -> int:
        """``size`` bytes of device memory (> 0); returns the device pointer."""
        return self._native.malloc(_require_int(size, "malloc", "size", low=1))

    def free(self, ptr: int) -> None:
        """Frees a pointer this Worker's malloc returned. Ordered after the runs already
        submitted: memory a running run still uses is reused only once that run finished."""
        self._native.free(_require_int(ptr, "free", "ptr", low=0))

    def copy_to(self, dst: int, src: Any, nbytes: Optional[int] = None) -> None:
        """Copies a host buffer (numpy array, bytes, ...) to device pointer ``dst``."""
        self._native.copy_to(_require_int(dst, "copy_to", "dst", low=0), src,
                             None if nbytes is None
                             else _require_int(nbytes, "copy_to", "nbytes", low=0))

    def copy_from(self, dst: Any, src: int, nbytes: Optional[int] = None) -> None:
        """Copies device memory at ``src`` into the writable host buffer ``dst``."""
        self._native.copy_from(dst, _require_int(src, "copy_from", "src", low=0),
                               None if nbytes is None
                               else _require_int(nbytes, "copy_from", "nbytes", low=0))

    def create_buffer(self, nbytes: int) -> Any:
        """A zero-filled host buffer (buffer protocol: ``numpy.frombuffer(buf, dtype)``)."""
        nbytes = _require_int(nbytes, "create_buffer", "nbytes", low=1)
        if nbytes > _HOST_BYTES:
            raise SimplerValueError(f"Worker.create_buffer: nbytes {nbytes} is larger than the "
                                    f"host's memory ({_HOST_BYTES} bytes)")
        return self._native.create_buffer(nbytes)

    def make_tensor_arg(self, array: Any, shape: Any = None, dtype: Any = None) -> Any:
        """A HOST ChipTensor over ``array`` (a buffer from create_buffer or a C-contiguous
        numpy array); the runtime stages it for each run and copies outputs back."""
        from simpler.task_interface import DataType
        if shape is None:
            shape = getattr(array, "shape", None)
            if shape is None:
                raise SimplerValueError("Worker.make_tensor_arg: shape is required for a raw buffer")
        if dtype is None:
            np_dtype = getattr(array, "dtype", None)
            if np_dtype is None:
                raise SimplerValueError("Worker.make_tensor_arg: dtype is required for a raw buffer")
            try:
                dtype = DataType.from_numpy(np_dtype)
            except TypeError:  # e.g. a torch tensor's dtype
                raise SimplerTypeError(f"Worker.make_tensor_arg: the array's dtype {np_dtype} is "
                                       "not a numpy dtype; pass a numpy array (a torch tensor's "
                                       ".numpy()) or dtype= (a DataType)") from None
        if not isinstance(dtype, DataType):
            raise SimplerTypeError("Worker.make_tensor_arg: dtype must be a DataType, got "
                                   f"{type(dtype).__name__}")
        try:
            dims = [as_int(d) for d in shape]
        except TypeError:  # not iterable
            dims = [None]
        if None in dims:  # a bool is not a size (it passed as 1)
            raise SimplerTypeError("Worker.make_tensor_arg: shape must be a sequence of ints, "
                                   f"got {shape!r}")
        return self._native.make_tensor_arg(array, dims, dtype)

    def release_buffer(self, buffer: Any) -> None:
        self._native.release_buffer(buffer)

    def device_memory_info(self) -> "tuple[int, int]":
        """``(free, total)`` bytes of the device."""
        return self._native.device_memory_info()

    # ---- kernel mode --------------------------------------------------------------------
    def kernel_prepare_callable(self, chip_callable: Any) -> int:
        """Uploads a ChipCallable; returns the runtime's id (no dedup)."""
        try:
            return self._native.kernel_prepare_callable(chip_callable)
        finally:
            # Our own reference to every image handed down, kept until a teardown succeeds.
            if self._native.state == "READY" and _is_chip_callable(chip_callable):
                self._images.append(chip_callable)

    def kernel_launch(self, callable_id: int, *args: Any, caller_stream: Any = None,
                      **unknown: Any) -> None:
        """Enqueues the prepared callable on ``caller_stream`` (an int handle or an object
        with ``.handle``) and returns; the caller synchronizes its stream.

        ``args``: one ChipStorageTaskArgs, or the arguments in signature order -- tensors
        as sim.DeviceArray, ChipTensor (DEVICE) or any DLPack tensor on the simulated
        device, scalars as Python or numpy numbers. They are borrowed for the launch: no
        copy, no ownership; the caller keeps them alive until its stream ran the launch.
        A refused argument raises :class:`simpler.errors.ArgumentError` (or
        ArgumentTypeError) naming its index, before anything is enqueued. ``caller_stream``
        is required (None: a SimplerTypeError saying so, not Python's bare TypeError)."""
        if unknown:
            signature = inspect.signature(Worker.kernel_launch)
            raise refusal("Worker.kernel_launch", call_form("Worker.kernel_launch", signature),
                          mismatch(signature, (self, callable_id, *args),
                                   {"caller_stream": caller_stream, **unknown}) or "")
        self._native.kernel_launch(callable_id, args, caller_stream)

    # What inspect.signature shows: caller_stream is required (missing or None is refused
    # with a SimplerTypeError by the native call; the default only lets it say so).
    kernel_launch.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("callable_id", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=int),
        inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL, annotation=Any),
        inspect.Parameter("caller_stream", inspect.Parameter.KEYWORD_ONLY, annotation=Any),
    ], return_annotation=None)

    def kernel_launch_error(self) -> str:
        """The runtime's message for this Worker's latest launch that failed on the chip
        ('' if none). The caller's stream reports such a failure by status only;
        ``simpler.sim`` streams append this message to the SimError they raise."""
        return self._native.kernel_launch_error()

    def kernel_bind(self, callable_id: int, *args: Any) -> "KernelLaunch":
        """Validates and packs a launch once; ``launch(caller_stream=...)`` on the returned
        :class:`KernelLaunch` re-enqueues it cheaply and ``set_arg(i, value)`` rebinds one
        argument. Arguments as for :meth:`kernel_launch` (borrowed the same way: every
        launch uses the memory bound at that time)."""
        return self._native.kernel_bind(callable_id, args)

    def __repr__(self) -> str:
        return (f"<simpler.Worker level={self.level} mode={self.execution_mode!r} "
                f"device={self.device_id} state={self.state}>")


# Introspection shows the documented signature: **unknown only catches misspelt keywords.
_launch_signature = inspect.signature(Worker.kernel_launch)
Worker.kernel_launch.__signature__ = _launch_signature.replace(  # type: ignore[attr-defined]
    parameters=[p for p in _launch_signature.parameters.values() if p.kind != p.VAR_KEYWORD])


# inspect.signature(Worker) is the documented level-2 call (docs/api.md), not __new__'s
# (level=2, *args, **kwargs), which only hands levels 3 and 4 on.
_init_signature = inspect.signature(Worker.__init__)
Worker.__signature__ = ClassSignature(Worker, _init_signature.replace(  # type: ignore[attr-defined]
    parameters=list(_init_signature.parameters.values())[1:]))

_I32 = 2 ** 31
# Physical memory: the bound of a host buffer (a larger request is a typo, not a buffer).
_HOST_BYTES = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _require_int(value: Any, api: str, name: str, low: Optional[int] = None) -> int:
    """:func:`simpler._ints.require_int` for ``Worker.<api>`` (levels 3/4 use it too)."""
    return require_int(value, f"Worker.{api}", name, low)


def _require_timeout(timeout: Any, api: str) -> Optional[float]:
    """None, or a number of seconds >= 0 (returned as a float): else a typed error naming
    ``timeout``."""
    if timeout is None:
        return None
    seconds = _seconds(timeout)
    if seconds is None:
        raise SimplerTypeError(f"{api}: timeout must be a number of seconds or None, "
                               f"got {type(timeout).__name__}")
    if not seconds >= 0:  # NaN too
        raise SimplerValueError(f"{api}: timeout must be >= 0 seconds (or None to wait "
                                f"forever), got {timeout!r}")
    return seconds


def _seconds(value: Any) -> Optional[float]:
    """A Python or numpy number as a float (an int too large for one is +-inf), or None
    for anything else (a bool, a str, an enum member: float(DataType.INT32) is 5.0)."""
    if isinstance(value, (str, bytes)) or is_bool(value) or is_enum(value):
        return None
    try:
        return float(value)
    except OverflowError:  # 10**400: a number of seconds all the same
        return math.inf if value > 0 else -math.inf
    except (TypeError, ValueError):
        return None


def _require_config(value: Any, api: str, name: str) -> Any:
    """A CallConfig or None, or a TypeError naming the parameter."""
    from simpler.task_interface import CallConfig
    if value is not None and not isinstance(value, CallConfig):
        raise SimplerTypeError(f"Worker.{api}: {name} must be a CallConfig or None, "
                               f"got {type(value).__name__}")
    return value


def _is_chip_callable(obj: Any) -> bool:
    from simpler.task_interface import ChipCallable
    return isinstance(obj, ChipCallable)
