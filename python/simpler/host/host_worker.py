"""``Worker(level=3)``: one host, several chips, one process (program mode only).

    w = Worker(level=3, device_ids=[0, 1], platform="a2a3sim",
               runtime="tensormap_and_ringbuffer")
    add = w.register(vector_add_callable)         # known on every chip
    w.init()                                      # every chip up, or none

    def orchestration(orch, args):
        a, b, c = args
        h = len(a) // 2
        orch.submit(add, a[:h], b[:h], c[:h], chip=0)   # a device id of device_ids
        orch.submit(add, a[h:], b[h:], c[h:])           # least-loaded chip

    w.run(orchestration, (a, b, c))               # or w.submit(...) -> RunHandle
    w.close()                                     # every chip down; every failure reported

The chips are driven through a ChipTransport (simpler.host.transport); level 4
(simpler.host.mpi) is the same worker over an MPI transport.
"""
from __future__ import annotations

import atexit
import collections
import collections.abc
import contextlib
import itertools
import numbers
import os
import threading
import time
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from simpler._counted import counted
from simpler._ints import require_bool
from simpler._process_local import ProcessLocal
from simpler.errors import (SimplerAttributeError, SimplerRuntimeError, SimplerTypeError,
                            SimplerValueError, WorkerTimeoutError)
from simpler._typed_call import typed_call, typed_methods
from simpler.host._background import Background, Latch
from simpler.host.errors import ChipGroupError
from simpler.host.orchestrator import HostOrchestrator, HostRun
from simpler.host.transport import ChipTransport, LocalTransport
from simpler.worker import (RunHandle, Worker, _lib_dir_path, _require_config, _require_int,
                            _require_timeout)

_L2_ONLY = ("kernel_prepare_callable", "kernel_launch", "create_buffer", "make_tensor_arg",
            "release_buffer")


class CallableHandle(ProcessLocal):
    """A ChipCallable registered with a multi-chip Worker (valid on every chip)."""

    __slots__ = ("key", "callable")

    def __init__(self, key: int, callable_: Any) -> None:
        self.key = key
        self.callable = callable_

    def __repr__(self) -> str:
        return f"<simpler.host.CallableHandle {self.key} {self.callable.func_name!r}>"


_MAX_DEVICE_IDS = 1 << 12   # far above any host's chips (the simulator has at most 64)


def _short(values: List[Any]) -> str:
    """A list for a message: at most 8 items shown."""
    return str(values) if len(values) <= 8 else f"[{', '.join(map(str, values[:8]))}, ... ({len(values)} ids)]"


def validate_device_ids(device_ids: Any, platform: str, api: str) -> List[int]:
    """The device list, or ValueError naming what is wrong (nothing is taken)."""
    if device_ids is None:
        raise SimplerValueError(f"{api}: device_ids is required (a list of device ids, e.g. [0, 1])")
    if isinstance(device_ids, (str, bytes)) or not hasattr(device_ids, "__iter__"):
        raise SimplerValueError(f"{api}: device_ids must be a list of ints, got {device_ids!r}")
    if isinstance(device_ids, (collections.abc.Set, collections.abc.Mapping)):
        # Order names the chips (slot i = device_ids[i]; level 4: every rank alike).
        raise SimplerValueError(f"{api}: device_ids must be an ordered list of ints (chip i is "
                                f"device_ids[i]), got a {type(device_ids).__name__}; pass "
                                f"sorted(...) or a list in the order you mean")
    ids = list(itertools.islice(device_ids, _MAX_DEVICE_IDS + 1))   # a generator may not end
    if len(ids) > _MAX_DEVICE_IDS:
        raise SimplerValueError(f"{api}: more than {_MAX_DEVICE_IDS} device ids given; give this "
                                "host's chips")
    if not ids:
        raise SimplerValueError(f"{api}: device_ids is empty; give at least one device id")
    for d in ids:
        if not isinstance(d, numbers.Integral) or isinstance(d, (bool, np.bool_)):
            raise SimplerValueError(f"{api}: device ids must be ints, got {d!r} "
                                    f"({type(d).__name__}) in {_short(ids)}")
    ids = [int(d) for d in ids]     # numpy integers too; the chips are named by plain ints
    for d in ids:
        if d < 0:
            raise SimplerValueError(f"{api}: device id {d} is negative")
    duplicates = sorted(d for d, n in collections.Counter(ids).items() if n > 1)
    if duplicates:
        raise SimplerValueError(f"{api}: device ids {_short(duplicates)} appear more than once in "
                                f"{_short(ids)}; each chip gets one worker")
    if platform.endswith("sim"):
        from simpler import sim
        count = sim.device_count()
        if len(ids) > count:
            raise SimplerValueError(f"{api}: {len(ids)} device ids given but the simulator has {count} "
                                    "devices (sim.configure(device_count=N) before first use)")
        bad = [d for d in ids if d >= count]
        if bad:
            raise SimplerValueError(f"{api}: device ids {_short(bad)} out of range; the simulator has devices "
                                    f"0..{count - 1}")
    return ids


@typed_methods("Worker", exclude=("__init__",))  # __init__ names its level itself
class HostWorker(Worker):
    """A multi-chip Worker (level 3 here; level 4 subclasses it with an MPI transport)."""

    @typed_call("Worker(level=3)", "Worker")
    def __init__(self, level: int = 3, *, device_ids: Optional[Sequence[int]] = None,
                 device_id: Optional[int] = None, platform: str = "a2a3sim",
                 runtime: str = "tensormap_and_ringbuffer", execution_mode: str = "program",
                 enable_sdma: bool = False, lib_dir: Any = None) -> None:
        api = f"Worker(level={level})"
        check_mode(level, execution_mode, platform, runtime)
        require_bool(enable_sdma, f"{api}: enable_sdma")
        if device_id is not None:
            raise SimplerValueError(f"{api}: takes device_ids=[...] (one chip worker per id), "
                                    "not device_id")
        ids = validate_device_ids(device_ids, platform, api)
        self._setup(level, LocalTransport(ids, platform, runtime, lib_dir=_lib_dir_path(lib_dir),
                                          enable_sdma=enable_sdma), ids)

    def _setup(self, level: int, transport: ChipTransport, chips: Sequence[Any]) -> None:
        self._level = level
        self._transport = transport
        self._chips = list(chips)           # user-facing chip ids, by slot
        self._state = "NEW"
        self._keys = itertools.count(1)
        self._callables: Dict[int, Any] = {}
        self._run_lock = threading.Lock()
        self._lifecycle = threading.Lock()
        self._in_flight: List["HostRunHandle"] = []
        self._pid = os.getpid()
        _LIVE.add(self)
        self._closing = False   # close() began: no new run may start (it would find no chips)
        self._admit = threading.Lock()   # a submit is in _in_flight before close() looks, or refused
        self._last_run: Optional[HostRun] = None
        self._reduce_ready = False
        self._totals: Dict[int, int] = {}
        self._orchestrating: Optional[int] = None   # the thread running an orchestration
        self._init_thread: Optional[int] = None     # close() must come from it (level 2's rule)
        self._local_chips = transport               # this process's chips (level 4: its rank's)
        self._close_grace = Worker(level=2).close_grace   # the level-2 default

    # ---- state --------------------------------------------------------------------------
    @property
    def level(self) -> int:
        return self._level

    @property
    def device_ids(self) -> List[Any]:
        """The chips of this Worker, in slot order."""
        return list(self._chips)

    @property
    def device_id(self) -> Any:
        raise SimplerAttributeError(f"Worker(level={self._level}) has several chips: use device_ids")

    @property
    def execution_mode(self) -> str:
        return "program"

    @property
    def state(self) -> str:
        """``"NEW"``, ``"READY"``, ``"FAILED"`` or ``"CLOSED"``."""
        return self._state

    @property
    def close_grace(self) -> float:
        """Seconds close() waits for each chip's runs in flight before abandoning a stuck
        one (the level-2 ``close_grace`` of every chip of this process; default 10)."""
        return self._close_grace

    @close_grace.setter
    def close_grace(self, seconds: float) -> None:
        check = Worker(level=2)            # validates only (takes nothing): level 2's rules
        check.close_grace = seconds
        self._close_grace = check.close_grace
        self._local_chips.set_close_grace(self._close_grace)

    @property
    def kernel_mode_supported(self) -> bool:
        """Always False: kernel mode is level 2 only (answered without probing)."""
        return False

    @property
    def last_run_stats(self) -> Dict[str, int]:
        """Counters of the latest host run: ``tasks``, ``h2d_bytes``, ``d2h_bytes`` and
        ``peer_bytes`` (device-to-device), for checking where data moved."""
        return self._last_run.stats() if self._last_run is not None else {}

    @property
    def transport(self) -> ChipTransport:
        return self._transport

    # ---- lifecycle ----------------------------------------------------------------------
    @typed_call("Worker.init")
    def init(self, prewarm_config: Any = None, *, config: Any = None) -> None:
        """Brings every chip up, or none (a failure on chip k rolls back 0..k-1 and raises
        ChipGroupError naming device k); installs the callables registered before."""
        if config is not None:
            raise SimplerValueError(f"Worker(level={self._level}).init: config= is the kernel-mode "
                                    "keyword; program mode takes prewarm_config")
        _require_config(prewarm_config, "init", "prewarm_config")   # before any chip is taken
        with self._lifecycle:
            if self._state != "NEW":
                raise SimplerRuntimeError(f"Worker(level={self._level}).init: the worker is "
                                          f"{self._state}; init() only once, on a NEW worker")
            self._local_chips.check_build()   # bad input: refused, the worker stays NEW
            try:
                self._transport.init(prewarm_config)
            except BaseException:
                self._state = "FAILED"
                raise
            try:
                for key, callable_ in self._callables.items():
                    self._transport.register(key, callable_.bytes())
            except BaseException:
                self._transport.close()
                self._state = "FAILED"
                raise
            self._state = "READY"
            self._init_thread = threading.get_ident()
            self._cache_totals()

    def _require_init_thread(self) -> None:
        # The chips' level-2 contexts are bound to the thread that called init(): refused
        # here, before close() begins, so the worker stays READY and usable (as at level 2).
        if self._state == "READY" and threading.get_ident() != self._init_thread:
            raise SimplerRuntimeError(f"Worker(level={self._level}).close: must be called on the thread "
                                      "that called init() (the chips' contexts are bound to it); the "
                                      "worker stays READY")

    def _cache_totals(self) -> None:
        # Device capacities, for refusing a tensor that cannot fit before anything moves.
        self._totals = {s: self._transport.memory_info(s)[1] for s in range(len(self._chips))}

    def close(self) -> None:
        """Completes the runs in flight, then tears every chip down (idempotent). Every chip
        is attempted; failures are raised together as ChipGroupError (``.failures`` by
        device), and a later close() retries the chips that failed."""
        self._refuse_inside_orchestration("close")
        with self._lifecycle:
            if self._state in ("NEW", "FAILED", "CLOSED"):
                self._state = "CLOSED"   # a failed init released everything (as level 2)
                return
            self._require_init_thread()
            self._begin_close()
            with self._runs_finished():   # a run() on another thread finishes first
                failures = self._transport.close()
            self._reduce_ready = False
            if failures:
                named = {self._chips[slot]: e for slot, e in failures.items()}
                raise ChipGroupError(
                    f"Worker(level={self._level}).close: teardown failed on "
                    + "; ".join(f"{_chip_name(c)}: {e}" for c, e in named.items())
                    + " (the chips not named are down; call close() again to retry the others)", named)
            self._state = "CLOSED"

    @contextlib.contextmanager
    def _runs_finished(self) -> Iterator[None]:
        """Waits for the runs in flight (submitted or run() on another thread) for at most
        close_grace; a run still stuck then (a kernel that never returns, no watchdog) is
        left to the chips' close, which abandons its context after the same grace."""
        deadline = time.monotonic() + self._close_grace
        for run in list(self._in_flight):
            run._join(max(0.0, deadline - time.monotonic()))
        self._join_completion(max(0.0, deadline - time.monotonic()))
        locked = self._run_lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
        try:
            yield
        finally:
            if locked:
                self._run_lock.release()

    def _join_completion(self, timeout: Optional[float] = None) -> None:
        last = self._last_run
        if last is not None and last.completion is not None:
            last.completion.join(timeout)

    def _begin_close(self) -> None:
        with self._admit:
            self._closing = True

    def _require_ready(self, api: str) -> None:
        if self._state != "READY":
            raise SimplerRuntimeError(f"Worker(level={self._level}).{api}: the worker is {self._state}; "
                                      "call init() first (and not after close())")
        if self._closing:
            raise SimplerRuntimeError(f"Worker(level={self._level}).{api}: close() was called (it "
                                      "completes the runs already started, then closes every chip); "
                                      "start no new work")

    # ---- callables ----------------------------------------------------------------------
    def register(self, chip_callable: Any) -> CallableHandle:
        """Registers a ChipCallable on every chip (before or after init)."""
        self._check_registrable(chip_callable)
        key = next(self._keys)
        if self._state == "READY":
            self._transport.register(key, chip_callable.bytes())
        self._callables[key] = chip_callable
        return CallableHandle(key, chip_callable)

    def _check_registrable(self, chip_callable: Any) -> None:
        from simpler.task_interface import ChipCallable
        if not isinstance(chip_callable, ChipCallable):
            raise SimplerTypeError("Worker.register: expected a ChipCallable, got "
                                   f"{type(chip_callable).__name__}")
        if self._state in ("CLOSED", "FAILED"):
            raise SimplerRuntimeError(f"Worker(level={self._level}).register: the worker is "
                                      f"{self._state}")

    def unregister(self, handle: Any) -> None:
        """Removes a callable from every chip; refused while a host run is in flight (its
        tasks may still run it: some chips would drop it and others refuse, as level 2 does)."""
        key, _ = self._resolve(handle, "unregister")
        last = self._last_run
        completing = last is not None and last.completion is not None and last.completion.is_alive()
        if self._in_flight or completing or not self._run_lock.acquire(blocking=False):
            raise SimplerRuntimeError(f"Worker(level={self._level}).unregister: a host run is in flight "
                                      "(or this is its orchestration); unregister after it finished "
                                      "(run() returned, RunHandle.wait())")
        try:
            if self._state == "READY":
                self._transport.unregister(key)
            del self._callables[key]
        finally:
            self._run_lock.release()

    def _ensure_reduce_program(self) -> None:
        """Registers the collectives' reduction program on every chip (once per init)."""
        from simpler.host.collectives import REDUCE_KEY, reduce_program_image
        if not self._reduce_ready:
            self._transport.register(REDUCE_KEY, reduce_program_image())
            self._reduce_ready = True

    def _check_fits(self, slot: int, nbytes: int, what: str) -> None:
        """ValueError when ``nbytes`` exceeds the chip's device memory (before anything moves)."""
        total = self._totals.get(slot)
        if total is None:
            total = self._totals[slot] = self._transport.memory_info(slot)[1]
        if nbytes > total:
            raise SimplerValueError(f"{what}: {nbytes} bytes do not fit on chip {self._chips[slot]!r} "
                                    f"({total} bytes of device memory); split the tensor over chips")

    def _resolve(self, handle: Any, api: str) -> Tuple[int, Any]:
        # Keys count from 1 in every Worker: another Worker's handle must not name ours.
        if not isinstance(handle, CallableHandle) or self._callables.get(handle.key) is not handle.callable:
            raise SimplerValueError(f"Worker(level={self._level}).{api}: unknown callable handle (not "
                                    "returned by this Worker's register(), or unregistered)")
        return handle.key, self._callables[handle.key]

    # ---- runs ---------------------------------------------------------------------------
    @typed_call("Worker.run")
    def run(self, fn: Callable[..., Any], args: Any = None, config: Any = None) -> None:
        """Runs a host orchestration ``fn(orch, args)`` and blocks until every task it
        submitted finished and its outputs are back in the host arrays; raises the first
        failure (ChipTaskError naming the chip) or the orchestration's own error."""
        self._check_orchestration(fn, config)
        self._refuse_inside_orchestration("run")
        with self._run_lock:
            self._require_ready("run")
            self._execute(fn, args, config)

    @typed_call("Worker.submit")
    def submit(self, fn: Callable[..., Any], args: Any = None,
               config: Any = None) -> "HostRunHandle":
        """Starts :meth:`run` on a background thread and returns a RunHandle at once."""
        self._check_orchestration(fn, config)
        self._refuse_inside_orchestration("submit")
        with self._admit:
            self._require_ready("submit")
            handle = HostRunHandle(self, fn, args, config)
            self._in_flight.append(handle)
            handle._start()
        return handle

    def _check_orchestration(self, orchestration: Any, config: Any) -> None:
        if isinstance(orchestration, CallableHandle):
            raise SimplerTypeError(f"Worker(level={self._level}).run: pass a host orchestration "
                                   "function fn(orch, args) that calls orch.submit(handle, ...)")
        if not callable(orchestration):
            raise SimplerTypeError(f"Worker(level={self._level}).run: expected a function "
                                   f"fn(orch, args), got {type(orchestration).__name__}")
        if _require_config(config, "run", "config") is not None:
            config.validate()

    def _execute(self, orchestration: Callable[..., Any], args: Any, config: Any) -> None:
        self._join_completion()   # a run interrupted by Ctrl-C completes first (runs are serial)
        run = HostRun(self._transport, self._callables, config)
        self._last_run = run
        try:   # from here a Ctrl-C finishes the run (else its executor threads leak)
            orch = self._orchestrator(run)
            self._orchestrating = threading.get_ident()
            orchestration(orch, args)
        except BaseException as error:
            run.finish(orchestration_failed=True)
            raise error
        finally:
            self._orchestrating = None
        error = run.finish()
        if error is not None:
            raise error

    def _refuse_inside_orchestration(self, api: str) -> None:
        """run()/close() from inside a host orchestration would wait for that run: a hang."""
        if self._orchestrating == threading.get_ident():
            raise SimplerRuntimeError(f"Worker(level={self._level}).{api}: called from inside a host "
                                      f"orchestration, which would wait for itself; submit tasks "
                                      f"with orch.submit, and call {api}() after run() returns")

    def _orchestrator(self, run: HostRun) -> HostOrchestrator:
        return HostOrchestrator(self, run)

    def _slot_of(self, chip: Any, api: str) -> int:
        parts = chip if isinstance(chip, tuple) else (chip,)
        # True == 1 and 1.0 == 1, but neither names a chip: ints only (numpy's too).
        if all(isinstance(p, numbers.Integral) and not isinstance(p, (bool, np.bool_)) for p in parts):
            try:
                return self._chips.index(chip)
            except ValueError:
                pass
        raise SimplerValueError(f"Worker(level={self._level}).{api}: chip {chip!r} is not one of "
                                f"this Worker's chips {self._chips}")

    # ---- per-chip memory ----------------------------------------------------------------
    def malloc(self, size: int, device_id: Any = None) -> int:  # type: ignore[override]
        """Device memory on chip ``device_id``."""
        slot = self._memory_slot(device_id, "malloc")
        return self._transport.malloc(slot, _require_int(size, "malloc", "size", low=1))

    def free(self, ptr: int, device_id: Any = None) -> None:  # type: ignore[override]
        slot = self._memory_slot(device_id, "free")
        self._transport.free(slot, _require_int(ptr, "free", "ptr", low=0))

    def copy_to(self, dst: int, src: Any, nbytes: Optional[int] = None, *,  # type: ignore[override]
                device_id: Any = None) -> None:
        slot = self._memory_slot(device_id, "copy_to")
        dst = _require_int(dst, "copy_to", "dst", low=0)   # checked here, not on another rank
        self._transport.copy_to(slot, dst, _prefix(src, nbytes, "copy_to", writable=False))

    def copy_from(self, dst: Any, src: int, nbytes: Optional[int] = None, *,  # type: ignore[override]
                  device_id: Any = None) -> None:
        slot = self._memory_slot(device_id, "copy_from")
        src = _require_int(src, "copy_from", "src", low=0)
        self._transport.copy_from(slot, _prefix(dst, nbytes, "copy_from", writable=True), src)

    def device_memory_info(self, device_id: Any = None) -> Tuple[int, int]:  # type: ignore[override]
        return self._transport.memory_info(self._memory_slot(device_id, "device_memory_info"))

    def committed_device_memory(self, device_id: Any = None) -> int:  # type: ignore[override]
        """Bytes held on chip ``device_id``, or on all chips when None (0 unless READY)."""
        if self._state != "READY":
            return 0
        if device_id is None:
            return sum(self._transport.committed(s) for s in range(len(self._chips)))
        return self._transport.committed(self._slot_of(device_id, "committed_device_memory"))

    def _memory_slot(self, device_id: Any, api: str) -> int:
        if device_id is None:
            raise SimplerValueError(f"Worker(level={self._level}).{api}: device_id= is required (one of "
                                    f"{self._chips})")
        slot = self._slot_of(device_id, api)
        self._require_ready(api)
        return slot

    def __repr__(self) -> str:
        return f"<simpler.Worker level={self._level} chips={self._chips} state={self._state}>"


def _level2_only(name: str) -> Callable[..., Any]:
    def refuse(self: HostWorker, *args: Any, **kwargs: Any) -> Any:
        raise SimplerRuntimeError(f"Worker(level={self._level}).{name}: a level-2 API (kernel mode and "
                                  "host buffers are level 2 only; pass numpy arrays to orch.submit)")
    refuse.__name__ = name
    return refuse


for _name in _L2_ONLY:
    setattr(HostWorker, _name, _level2_only(_name))


_LIVE: "weakref.WeakSet[HostWorker]" = weakref.WeakSet()


@atexit.register
def _finish_runs_at_exit() -> None:
    """Runs in flight complete (at most close_grace each) before the interpreter finalizes:
    a daemon thread returning from a chip run then was killed inside native code (abort:
    "terminate called without an active exception")."""
    for worker in list(_LIVE):
        if worker._pid == os.getpid():   # a forked child has none of the threads
            try:
                with worker._runs_finished():
                    pass
            except BaseException:  # noqa: BLE001 - exiting anyway
                pass


@typed_methods("RunHandle")
class HostRunHandle(RunHandle):
    """A host run started by ``Worker.submit`` at level 3/4 (same interface as at level 2)."""

    __slots__ = ("_owner", "_fn", "_fn_args", "_config", "_thread", "_error", "_finished")

    def __init__(self, owner: HostWorker, fn: Callable[..., Any], args: Any, config: Any) -> None:
        self._owner = owner
        self._fn = fn
        self._fn_args = args
        self._config = config
        self._error: Optional[BaseException] = None
        self._finished = Latch()                    # Event.wait is not Ctrl-C safe either
        self._thread: Optional[Background] = None   # Thread.start() is not Ctrl-C safe

    def _start(self) -> None:
        self._thread = Background(self._body)

    def _body(self) -> None:
        try:
            with self._owner._run_lock:
                self._owner._execute(self._fn, self._fn_args, self._config)
        except BaseException as error:  # noqa: BLE001 - raised by wait()
            self._error = error
        finally:
            self._finished.set()
            try:
                self._owner._in_flight.remove(self)
            except ValueError:
                pass

    def _join(self, timeout: Optional[float] = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: Optional[float] = None) -> None:
        """Waits for the run (None = forever); TimeoutError on expiry (not cancelled);
        raises the run's error; repeatable."""
        timeout = _require_timeout(timeout, "HostRunHandle.wait")
        if timeout is not None and timeout >= threading.TIMEOUT_MAX:
            timeout = None    # inf: forever (a lock's acquire raises OverflowError beyond TIMEOUT_MAX)
        if not self._finished.wait(None if timeout is None else float(timeout)):
            raise WorkerTimeoutError(f"HostRunHandle.wait: the host run did not finish within {timeout} s; "
                                     "it keeps running (wait again, or wait(None) for no bound)")
        if self._error is not None:
            raise self._error

    def result(self, timeout: Optional[float] = None) -> None:
        self.wait(timeout)

    def __repr__(self) -> str:   # level 2's reads a native handle this one does not have
        return f"<simpler.RunHandle {'done' if self.done else 'running'}>"


def check_mode(level: int, execution_mode: Any, platform: Any = "a2a3sim",
               runtime: Any = "tensormap_and_ringbuffer") -> None:
    """The options every level checks before anything is taken (ValueError/TypeError)."""
    for name, value in (("platform", platform), ("runtime", runtime)):
        if not isinstance(value, str):
            raise SimplerTypeError(f"Worker(level={level}): {name} must be a str, "
                                   f"got {type(value).__name__}")
    if execution_mode == "kernel":
        raise SimplerValueError(f"Worker(level={level}, execution_mode='kernel'): kernel mode is level 2 "
                                "only; use level=2 with one device, or program mode at this level")
    if execution_mode != "program":
        raise SimplerValueError(f"Worker: execution_mode must be 'program' or 'kernel' (got "
                                f"{execution_mode!r})")


def _chip_name(chip: Any) -> str:
    return f"device {chip}" if isinstance(chip, int) else f"chip {chip}"


def _prefix(buffer: Any, nbytes: Optional[int], api: str, writable: bool) -> Any:
    """The first ``nbytes`` (default all) of a host buffer, checked as level 2 checks it: a
    larger ``nbytes`` than the buffer is an error, not a shorter copy."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise SimplerTypeError(f"Worker.{api}: expected a host buffer (numpy array, bytes, ...), "
                               f"got {type(buffer).__name__}") from None
    if not view.c_contiguous or (writable and view.readonly):
        raise SimplerTypeError(f"Worker.{api}: expected a C-contiguous{' writable' if writable else ''} "
                               f"buffer, got {type(buffer).__name__}")
    view = view.cast("B") if view.ndim != 1 or view.format != "B" else view
    if nbytes is None:
        return view
    nbytes = _require_int(nbytes, api, "nbytes", low=0)
    if nbytes > view.nbytes:
        raise SimplerValueError(f"Worker.{api}: nbytes {nbytes} exceeds the host buffer's "
                                f"{counted(view.nbytes, 'byte')}")
    return view[:nbytes]
