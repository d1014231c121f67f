"""The host-level orchestration: submit level-2 callables to chips, dependencies inferred.

A host run is a Python function ``fn(orch, args)`` given a :class:`HostOrchestrator`. Each
``orch.submit(handle, *tensors_and_scalars, chip=None)`` becomes a task on one chip; its
dependencies come from the host byte ranges its tensors read and write (see
simpler.host.tensormap), its inputs are copied to its chip only when that chip lacks their
latest bytes (from the host, or device-to-device from the chip that wrote them, after that
writer finished), and its outputs stay on its chip until a later task elsewhere needs them
or the run ends (then they are copied back into the host arrays).

Every chip has one executor thread that runs its tasks in submission order, each after the
tasks it depends on (on any chip) finished; the chips run in parallel. Everything goes
through a :class:`simpler.host.transport.ChipTransport`.
"""
from __future__ import annotations

import itertools
import os
import threading
import queue
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from simpler import _native
from simpler._ints import as_int
from simpler._typed_call import typed_call
from simpler.errors import (ArgumentTypeError, SimplerRuntimeError, SimplerTypeError,
                            SimplerValueError)
from simpler.host._background import Background, Latch
from simpler.host.errors import ChipTaskError
from simpler.host.tensormap import HOST, DeviceBuffer, HostTensorMap, Residency
from simpler.host.transport import ChipTransport


def host_range(array: Any, what: str, writes: bool = False) -> Tuple[np.ndarray, int, int]:
    """(array, lo, hi): the host byte range of a C-contiguous numpy array (no copy); one
    the task ``writes`` must be writable (its results are copied back into it)."""
    if not isinstance(array, np.ndarray):
        raise SimplerTypeError(f"{what}: expected a numpy array, got {type(array).__name__}")
    if writes and not array.flags.writeable:
        raise SimplerValueError(f"{what}: the array is read-only but the task writes it; pass a "
                                "writable array (e.g. numpy.array(x))")
    if not array.flags.c_contiguous:
        raise SimplerValueError(f"{what}: the array must be C-contiguous (got strides "
                                f"{array.strides}); pass a contiguous view or np.ascontiguousarray()")
    if array.nbytes == 0:
        raise SimplerValueError(f"{what}: the array is empty; host tensors need at least one element")
    lo = int(array.__array_interface__["data"][0])
    return array, lo, lo + int(array.nbytes)


class _Task:
    """One orchestration step on one or more chips."""

    def __init__(self, seq: int, slots: Sequence[int], deps: List["_Task"], name: str,
                 solo: bool = False) -> None:
        self.seq = seq
        self.slots = list(slots)
        # A solo multi-chip task is run by its first chip's executor alone (it stages every
        # chip's inputs, then runs slot_body once): one MPI collective needs no part from
        # the other chips' executors, and each would cost a thread hand-off and a barrier.
        self.solo = solo
        self.runners = self.slots[:1] if solo else self.slots
        self.deps = deps
        self.name = name
        self.done = Latch()      # waited on the main thread too: Event.wait is not Ctrl-C safe
        self.error: Optional[BaseException] = None
        self.buffers: Dict[int, List[DeviceBuffer]] = {s: [] for s in slots}
        self.fills: Dict[int, List[Tuple[DeviceBuffer, int, int, Any]]] = {s: [] for s in slots}
        self.keep: List[Any] = []
        self._arrived = 0
        self._arrive_lock = threading.Lock()
        self.enqueued = False    # pushed to every runner's executor (HostRun.enqueue)
        self.body: Callable[["_Task"], None] = lambda task: None
        # Multi-chip tasks (collectives): every participant runs slot_body(task, slot), in
        # steps separated by barrier.wait(); shared holds what participants exchange.
        self.slot_body: Optional[Callable[["_Task", int], None]] = None
        self.barrier = threading.Barrier(len(self.runners)) if len(self.runners) > 1 else None
        self.shared: Dict[str, Any] = {}

    def arrive(self) -> bool:
        """True for the last participant to finish its part (it marks the task done)."""
        with self._arrive_lock:
            self._arrived += 1
            return self._arrived == len(self.runners)


class _ChipExecutor:
    """One thread per chip: its tasks in submission order, each after its dependencies."""

    def __init__(self, run: "HostRun", slot: int) -> None:
        self._run = run
        self.slot = slot
        self._outstanding = 0
        self._count_lock = threading.Lock()
        # SimpleQueue: put() is one C call. queue.Queue takes a Condition whose Python-level
        # __exit__ a Ctrl-C can interrupt, leaving its lock held and the executor deaf.
        self._queue: "queue.SimpleQueue[Optional[_Task]]" = queue.SimpleQueue()
        self._thread = Background(self._loop)

    @property
    def outstanding(self) -> int:
        """Tasks enqueued on this chip and not finished yet."""
        return self._outstanding

    def _count(self, delta: int) -> None:
        with self._count_lock:
            self._outstanding += delta

    def push(self, task: _Task) -> None:
        self._count(1)
        self._queue.put(task)

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join()

    def _loop(self) -> None:
        while True:
            task = self._queue.get()
            if task is None:
                return
            try:
                self._execute(task)
            finally:
                self._count(-1)

    def _execute(self, task: _Task) -> None:
        for dep in task.deps:
            dep.done.wait()
        failed = next((d for d in task.deps if d.error is not None), None)
        transport = self._run.transport
        if failed is not None and task.error is None:
            task.error = ChipTaskError(
                f"host task #{task.seq} ({task.name}) on {transport.chip_name(self.slot)} was "
                f"skipped: task #{failed.seq} it depends on failed", transport.chip_name(self.slot),
                task.seq, failed.error)
        for slot in task.slots if task.solo else (self.slot,):
            if task.error is not None:
                break
            try:
                self._prepare(task, slot)
            except BaseException as error:  # noqa: BLE001 - reported by the run
                task.error = self._wrap(task, error, slot)   # names the chip that failed
        if task.slot_body is not None:
            self._participate(task)
            return
        if task.error is None:
            try:
                task.body(task)
            except BaseException as error:  # noqa: BLE001 - reported by the run
                task.error = self._wrap(task, error)
        task.done.set()

    def _participate(self, task: _Task) -> None:
        """This chip's part of a multi-chip task; the last participant out marks it done."""
        try:
            if task.barrier is not None:
                task.barrier.wait()       # every participant has its inputs staged
            if task.error is None:
                task.slot_body(task, self.slot)
        except threading.BrokenBarrierError:
            pass                          # another participant failed: it set task.error
        except BaseException as error:  # noqa: BLE001 - reported by the run
            if task.error is None:
                task.error = self._wrap(task, error)
            if task.barrier is not None:
                task.barrier.abort()      # release the participants waiting for this one
        if task.arrive():
            task.done.set()

    def _prepare(self, task: _Task, slot: int) -> None:
        """Allocates the task's buffers on ``slot`` and brings its inputs there up to date."""
        transport = self._run.transport
        for buf in task.buffers[slot]:
            if buf.ptr is None:
                buf.ptr = transport.malloc(slot, buf.nbytes)
        for dst, lo, hi, src in task.fills[slot]:
            if src is HOST or src == HOST:
                host = self._run.host_view(lo, hi)
                transport.copy_to(slot, dst.addr(lo), host)
                self._run.h2d_bytes += hi - lo
            else:
                transport.copy_peer(slot, dst.addr(lo), src.slot, src.addr(lo), hi - lo)
                self._run.count_peer(slot, src.slot, hi - lo)

    def _wrap(self, task: _Task, error: BaseException, slot: Optional[int] = None) -> BaseException:
        if isinstance(error, ChipTaskError):
            return error
        name = self._run.transport.chip_name(self.slot if slot is None else slot)
        wrapped = ChipTaskError(f"host task #{task.seq} ({task.name}) on {name} failed: {error}",
                                name, task.seq, error)
        wrapped.__cause__ = error
        return wrapped


def task_config(config: Any, seq: int, chip: Any) -> Any:
    """The CallConfig of one task's chip run: with a diagnostics switch on, its files go to
    ``<output_prefix>/task-<seq>-<chip>/`` (every chip run of a host run writes its own
    swimlane.json, ...; one shared directory kept only the last run's files)."""
    if config is None or not (config.enable_swimlane or config.dump_args or config.dump_dep_graph
                              or config.enable_profiling):
        return config
    name = "-".join(str(part) for part in (chip if isinstance(chip, tuple) else (chip,)))
    own = config.copy()
    path = os.path.join(config.output_prefix, f"task-{seq:04d}-chip-{name}")
    try:
        own.output_prefix = path
        own.validate()
    except ValueError as e:   # too long once the task directory is added
        raise SimplerValueError(f"CallConfig.output_prefix: the task directory {path!r} is refused "
                                f"({e}); each task writes into <output_prefix>/task-<NNNN>-chip-"
                                "<chip>/, so shorten output_prefix") from None
    return own


class HostRun:
    """State of one host run: its tasks, dependency map, residency and chip executors."""

    def __init__(self, transport: ChipTransport, images: Dict[int, Any], config: Any = None) -> None:
        self.transport = transport
        self.images = images
        self.config = config
        self.finished = False    # finish() started: no task may join the run any more
        self.completion: Optional[Background] = None   # finishing after a Ctrl-C
        self.tensors = HostTensorMap()
        self.residency = Residency()
        self.tasks: List[_Task] = []
        self.peer_bytes = 0      # device-to-device bytes (counted by the copies done)
        self.h2d_bytes = 0
        self.local_bytes = 0     # device-to-device within one chip (between range buffers)
        self.d2h_bytes = 0
        self.mpi_collectives = 0  # level 4: collectives carried by MPI's own collectives
        self._assigned = [0] * transport.chip_count
        self.peer_received = [0] * transport.chip_count
        self._count_lock = threading.Lock()
        self._seq = itertools.count(1)
        self._views: List[Tuple[int, int, np.ndarray]] = []
        self.executors: List[_ChipExecutor] = []
        try:
            for slot in range(transport.chip_count):
                self.executors.append(_ChipExecutor(self, slot))
        except BaseException:   # Ctrl-C: the threads already started would wait forever
            for executor in self.executors:
                executor.stop()
            raise

    # ---- host memory ----------------------------------------------------------------------
    def remember(self, array: np.ndarray, lo: int, hi: int) -> None:
        self._views.append((lo, hi, array.reshape(-1).view(np.uint8)))

    def host_view(self, lo: int, hi: int) -> np.ndarray:
        """Bytes [lo, hi) of a host array this run was given (writable)."""
        for vlo, vhi, flat in self._views:
            if vlo <= lo and hi <= vhi:
                return flat[lo - vlo:hi - vlo]
        raise AssertionError("host range outside every array of the run")

    # ---- submission -----------------------------------------------------------------------
    def new_task(self, slots: Sequence[int], name: str,
                 accesses: Sequence[Tuple[np.ndarray, int, int, bool, bool]],
                 solo: bool = False) -> _Task:
        """A task over ``slots`` with its dependencies from ``accesses`` =
        (array, lo, hi, reads, writes); not yet enqueued. ``solo``: see _Task."""
        if self.finished:   # its buffers would never be freed nor its outputs copied back
            raise SimplerRuntimeError("HostOrchestrator: its run has finished; use the orch only "
                                      "inside the orchestration function it was given to")
        deps: List[_Task] = []
        seen = set()
        for array, lo, hi, reads, writes in accesses:
            self.remember(array, lo, hi)
            for dep in self.tensors.dependencies(lo, hi, write=writes):
                if id(dep) not in seen:
                    seen.add(id(dep))
                    deps.append(dep)
        task = _Task(next(self._seq), slots, deps, name, solo)
        for array, lo, hi, reads, writes in accesses:
            if reads:
                self.tensors.record(lo, hi, False, task)
            if writes:
                self.tensors.record(lo, hi, True, task)
            task.keep.append(array)
        return task

    def stage(self, task: _Task, slot: int, lo: int, hi: int, reads: bool) -> DeviceBuffer:
        """The device buffer of [lo, hi) on ``slot`` for ``task``, with the copies that bring
        it up to date when the task reads it."""
        buf = self.residency.buffer(slot, lo, hi)
        if buf not in task.buffers[slot]:
            task.buffers[slot].append(buf)
        if reads:
            for plo, phi, src in self.residency.plan_read(buf):
                task.fills[slot].append((buf, plo, phi, src))
        return buf

    def enqueue(self, task: _Task) -> None:
        self.tasks.append(task)
        for slot in task.runners:
            self._assigned[slot] += 1
            self.executors[slot].push(task)
        task.enqueued = True   # a Ctrl-C before this: _complete finishes the task itself

    def least_loaded(self, candidates: Sequence[int]) -> int:
        """Fewest unfinished tasks; ties go to the chip given fewest tasks in this run."""
        return min(candidates, key=lambda s: (self.executors[s].outstanding, self._assigned[s], s))

    def count_peer(self, dst_slot: int, src_slot: int, nbytes: int) -> None:
        """Counts a device-to-device copy (between chips, or between two buffers of one)."""
        with self._count_lock:
            if dst_slot == src_slot:
                self.local_bytes += nbytes
            else:
                self.peer_bytes += nbytes
                self.peer_received[dst_slot] += nbytes

    def count_mpi_collective(self) -> None:
        with self._count_lock:
            self.mpi_collectives += 1

    def stats(self) -> Dict[str, Any]:
        return {"tasks": len(self.tasks), "h2d_bytes": self.h2d_bytes,
                "d2h_bytes": self.d2h_bytes, "peer_bytes": self.peer_bytes,
                "local_bytes": self.local_bytes, "peer_received": list(self.peer_received),
                "mpi_collectives": self.mpi_collectives}

    # ---- completion -----------------------------------------------------------------------
    def finish(self, orchestration_failed: bool = False) -> Optional[BaseException]:
        """Waits for every task, copies the latest bytes back to the host (when every task
        succeeded and the orchestration returned: a failed run copies nothing back, as at
        level 2), frees every device buffer and stops the executors. Returns the first
        error (by task number), or None."""
        self.finished = True
        try:
            return self._complete(orchestration_failed)
        except BaseException:
            # Ctrl-C (it raises nothing else): the run is not cancelled (as at level 2); it
            # completes on a thread of its own, which the next run and close() wait for.
            # Every step of _complete may run again (a freed buffer's ptr is None).
            self.completion = Background(self._complete, orchestration_failed)
            raise

    def _complete(self, orchestration_failed: bool) -> Optional[BaseException]:
        # A task Ctrl-C interrupted in enqueue() reached some of its executors or none: it
        # fails, its participants are released, and the executors drain what they hold.
        cut = [t for t in self.tasks if not t.enqueued]
        for task in cut:
            task.error = task.error or SimplerRuntimeError(
                f"host task #{task.seq} ({task.name}): interrupted while it was submitted")
            if task.barrier is not None:
                task.barrier.abort()
        for executor in self.executors:
            executor.stop()
        for task in cut:
            task.done.set()
        for task in self.tasks:
            if not task.done.is_set():   # (set by now; is_set takes no Condition)
                task.done.wait()
        error = next((t.error for t in self.tasks if t.error is not None), None)
        # Exception, not BaseException: a Ctrl-C goes to finish(), which hands the rest of
        # the completion to a thread (a Ctrl-C taken as the run's error left outputs behind).
        if error is None and not orchestration_failed:
            try:
                for lo, hi, buf in self.residency.latest_on_device():
                    self.transport.copy_from(buf.slot, self.host_view(lo, hi), buf.addr(lo))
                    self.d2h_bytes += hi - lo
            except Exception as copy_error:  # noqa: BLE001 - reported, buffers still freed
                error = copy_error
        for buf in self.residency.buffers():
            ptr, buf.ptr = buf.ptr, None   # first: a Ctrl-C inside free() must not free it twice
            if ptr is not None:
                try:
                    self.transport.free(buf.slot, ptr)
                except Exception as free_error:  # noqa: BLE001
                    error = error or free_error
        return error


class HostOrchestrator:
    """What a host orchestration function receives: ``submit`` level-2 callables to chips.

    ``chip`` is one of the Worker's ``device_ids``; None lets simpler pick the chip with
    the fewest unfinished tasks."""

    def __init__(self, owner: Any, run: HostRun) -> None:
        self._owner = owner
        self._run = run

    @property
    def chip_count(self) -> int:
        return self._run.transport.chip_count

    @typed_call("HostOrchestrator.submit", "orch.submit")
    def submit(self, handle: Any, *args: Any, chip: Optional[int] = None) -> int:
        """Submits a registered ChipCallable with its arguments in signature order: a numpy
        array for each IN/OUT/INOUT entry, an int or float for each SCALAR entry. Returns
        the task number. Validation errors (ValueError/TypeError) are raised before
        anything is enqueued."""
        from simpler.task_interface import CHIP_TENSOR_MAX_DIMS, ArgDirection, DataType
        key, callable_ = self._owner._resolve(handle, "submit")
        signature = list(callable_.signature)
        specs = list(callable_.arg_specs)
        name = f"'{callable_.func_name}'"
        if len(args) != len(signature):
            count = f"{len(signature)} argument{'' if len(signature) == 1 else 's'}"
            raise SimplerValueError(f"HostOrchestrator.submit({name}): the callable takes "
                                    f"{count} (signature {[d.name for d in signature]}),"
                                    f" got {len(args)}")
        slot = self._slot(chip, "submit")
        tensors: List[Tuple[np.ndarray, int, int, bool, bool]] = []
        scalars: List[int] = []
        dtypes: List[int] = []
        for index, (direction, value) in enumerate(zip(signature, args)):
            what = f"HostOrchestrator.submit({name}) argument {index} ({direction.name})"
            if direction == ArgDirection.SCALAR:
                # Level 2's packer: the same bits, the same refusals (docs/kernel-mode.md).
                scalars.append(_native.worker.pack_scalar(specs[index], value,
                                                          f"HostOrchestrator.submit({name})", index))
                continue
            reads = direction in (ArgDirection.IN, ArgDirection.INOUT)
            writes = direction in (ArgDirection.OUT, ArgDirection.INOUT)
            array, lo, hi = host_range(value, what, writes)
            if not 1 <= array.ndim <= CHIP_TENSOR_MAX_DIMS:   # else the chip run refuses it
                raise SimplerValueError(f"{what}: a {array.ndim}-d array; chip tensors have "
                                        f"1..{CHIP_TENSOR_MAX_DIMS} dimensions (e.g. x.reshape(-1))")
            try:
                dtype = DataType.from_numpy(array.dtype)
            except (ValueError, TypeError) as error:
                raise SimplerValueError(f"{what}: unsupported dtype {array.dtype}: {error}") from None
            if dtype == DataType.UINT16 and specs[index].typed and specs[index].dtype == DataType.BFLOAT16:
                # numpy has no bfloat16 and host arrays are the only tensors here: a uint16
                # array of its bits is one (as the collectives' dtype=BFLOAT16 takes it).
                dtype = DataType.BFLOAT16
            _check_spec(specs[index], array, dtype, what, index)
            dtypes.append(int(dtype))
            tensors.append((array, lo, hi, reads, writes))
        run = self._run
        if slot is None:
            slot = run.least_loaded(range(self.chip_count))
        for index, (array, lo, hi, _, _) in enumerate(tensors):
            self._owner._check_fits(slot, hi - lo, f"HostOrchestrator.submit({name}) tensor {index}")
        task = run.new_task([slot], name, tensors)
        refs = []
        written = []
        for (array, lo, hi, reads, writes), dtype in zip(tensors, dtypes):
            buf = run.stage(task, slot, lo, hi, reads)
            refs.append((buf, tuple(int(d) for d in array.shape), dtype))
            if writes:
                written.append(buf)
        for buf in written:
            run.residency.record_write(buf)
        transport = run.transport
        config = task_config(run.config, task.seq, self._owner.device_ids[slot])

        def body(t: _Task) -> None:
            tensors_ = [(b.addr(b.lo), shape, dtype) for b, shape, dtype in refs]
            transport.run(slot, key, tensors_, scalars, config)

        task.body = body
        run.enqueue(task)
        return task.seq

    # ---- collectives (simpler.host.collectives) -------------------------------------------
    @typed_call("HostOrchestrator.all_reduce", "orch.all_reduce")
    def all_reduce(self, tensors: Sequence[Any], op: str = "sum", *,
                   chips: Optional[Sequence[Any]] = None, dtype: Any = None) -> int:
        """``tensors[i]`` (on ``chips[i]``; default every chip) becomes op over all of them
        (``"sum"``, ``"max"``, ``"min"``; float32/float16/bfloat16/int32). Ring."""
        return self._collective("all_reduce", tensors, op, chips, dtype)

    @typed_call("HostOrchestrator.reduce_scatter", "orch.reduce_scatter")
    def reduce_scatter(self, inputs: Sequence[Any], outputs: Sequence[Any], op: str = "sum", *,
                       chips: Optional[Sequence[Any]] = None, dtype: Any = None) -> int:
        """``outputs[i]`` = chunk i (numpy.array_split order) of op over ``inputs``. Ring."""
        return self._collective("reduce_scatter", inputs, outputs, op, chips, dtype)

    @typed_call("HostOrchestrator.all_gather", "orch.all_gather")
    def all_gather(self, inputs: Sequence[Any], outputs: Sequence[Any], *,
                   chips: Optional[Sequence[Any]] = None, dtype: Any = None) -> int:
        """Every ``outputs[i]`` = the concatenation of ``inputs`` (sizes may differ). Ring."""
        return self._collective("all_gather", inputs, outputs, chips, dtype)

    @typed_call("HostOrchestrator.broadcast", "orch.broadcast")
    def broadcast(self, tensors: Sequence[Any], root: int = 0, *,
                  chips: Optional[Sequence[Any]] = None, dtype: Any = None) -> int:
        """Every ``tensors[i]`` = ``tensors[root]`` (root: an index into the group). Tree."""
        return self._collective("broadcast", tensors, root, chips, dtype)

    @typed_call("HostOrchestrator.all_to_all", "orch.all_to_all")
    def all_to_all(self, inputs: Sequence[Any], outputs: Sequence[Any], *,
                   chips: Optional[Sequence[Any]] = None, dtype: Any = None) -> int:
        """``outputs[j]`` = the chunks j of every input, in group order. Pairwise."""
        return self._collective("all_to_all", inputs, outputs, chips, dtype)

    def _collective(self, kind: str, *args: Any) -> int:
        from simpler.host.collectives import COLLECTIVES
        return COLLECTIVES[kind](self._owner, self._run, *args)

    def dependencies(self, task: int) -> List[int]:
        """Numbers of the tasks ``task`` waits for (inferred from the tensors)."""
        return sorted(d.seq for d in self._task(task).deps)

    def chip_of(self, task: int) -> Any:
        """The chip a task was placed on (a device id of the Worker)."""
        return self._owner.device_ids[self._task(task).slots[0]]

    def _task(self, number: int) -> _Task:
        value = as_int(number)    # numpy integers are task numbers; a bool is not (task #1)
        if value is None:
            raise SimplerTypeError(f"HostOrchestrator: a task number is the int submit returned, "
                                   f"got {type(number).__name__}")
        if not 1 <= value <= len(self._run.tasks):
            raise SimplerValueError(f"HostOrchestrator: no task #{value} in this run")
        return self._run.tasks[value - 1]

    def _slot(self, chip: Any, api: str) -> Optional[int]:
        if chip is None:
            return None
        return self._owner._slot_of(chip, api)


def _check_spec(spec: Any, array: np.ndarray, dtype: Any, what: str, index: int) -> None:
    """A typed signature's dtype and rank, checked here so a mismatch is refused before
    anything is enqueued (the chip would refuse it only when the task runs)."""
    if not spec.typed:
        return
    if spec.dtype is not None and dtype != spec.dtype:
        raise ArgumentTypeError(f"{what}: expected a {spec.dtype.name} array, got {dtype.name} "
                                f"(numpy {array.dtype})", index)
    if spec.rank and array.ndim != spec.rank:
        raise ArgumentTypeError(f"{what}: expected an array of rank {spec.rank}, got rank "
                                f"{array.ndim}", index)
