"""``Worker(level=4)``: several hosts on Open MPI (one rank per host), rank 0 orchestrates.

Every rank builds ``Worker(level=4, device_ids=[...])`` over its own chips and calls
``init()`` and ``close()``. Rank 0 runs the host orchestrations (the level-3 API, unchanged:
``run``/``submit``, ``orch.submit(..., chip=(rank, device))``, the collectives); its chips
are slots of an :class:`MpiTransport`, which forwards what concerns another rank's chips to
that rank as MPI messages. The other ranks *serve* their chips until rank 0 closes.

Why rank 0 and not SPMD: one orchestration sees every task, so dependencies across hosts,
least-loaded placement and the validation of every argument (shapes, ids, sizes) happen in
one place, before anything moves; under SPMD every rank would have to make the same timing-
dependent placement decisions and agree on them, and host arrays would have to exist on all
ranks. The cost is that host arrays live on rank 0 and inputs travel from it.

Plumbing: the native progress engine ``simpler._mpi_native`` (src/python/mpi) owns three
duplicated communicators — ``ctrl`` (fixed-size binary request headers, replies,
heartbeats), ``data`` (bulk transfers, one tag each) and ``coll`` (MPI collectives). On each
rank its progress thread serves transfers and collectives on device memory without entering
Python, and hands the rest (runs, allocations, lifecycle messages) to this module's
dispatcher thread. Rank 0's requests are sent and their replies awaited by the calling
thread itself. Every wait is bounded by liveness: ranks exchange heartbeats every
``heartbeat`` seconds, and a rank not heard from for ``rank_timeout`` seconds is declared
dead — the waiter gets :class:`simpler.host.RankError` naming it, never a hang.
Requires MPI_THREAD_MULTIPLE (Open MPI from Debian provides it).
"""
from __future__ import annotations

import atexit
import numbers
import pickle
import queue
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from simpler._ints import is_bool, require_bool
from simpler._typed_call import typed_call, typed_methods
from simpler.errors import (PTO_RUNTIME_ERR_TIMEOUT, ChipWorkerError, RuntimeBuildNotFoundError,
                            SimplerRuntimeError, SimplerTypeError, SimplerValueError,
                            WorkerTimeoutError)
from simpler.host.errors import ChipGroupError, RankError
from simpler.host.host_worker import CallableHandle, HostWorker, check_mode, validate_device_ids
from simpler.host.mpi_rendezvous import rendezvous
from simpler.host.transport import ChipTransport, LocalTransport, TensorRef
from simpler.worker import _lib_dir_path, _require_config

_INLINE = 8 << 10        # transfers up to this size ride inside the request / reply message
# Larger all_reduces take simpler's ring: MPI's path copies device memory out and back
# (collective.h) and lost to the ring past this size (docs/performance.md section 5).
MPI_ALL_REDUCE_MAX_BYTES = 16 << 20

# The wire format (src/python/mpi/wire.h): header field order and kinds.
_KIND_PYTHON, _KIND_COPY_TO, _KIND_COPY_FROM, _KIND_LOCAL_COPY, _KIND_COLLECTIVE = 2, 3, 4, 5, 6
_FLOW_SEPARATE, _FLOW_INLINE = 0, 1
_OK, _PYTHON_ERROR, _NATIVE_ERROR = 0, 1, 2
_DONE, _PEER_DEAD = 0, 1


def _header(kind: int, slot: int = 0, addr: int = 0, nbytes: int = 0, peer: int = 0,
            tag: int = 0, flow: int = 0, addr2: int = 0, aux: int = 0, dtype: int = 0,
            op: int = 0, count: int = 0, root: int = 0, nbytes2: int = 0) -> List[int]:
    """A request header in wire order (the rid is filled in by the native layer)."""
    return [kind, 0, slot, addr, nbytes, peer, tag, flow, addr2, aux, dtype, op, count, root,
            nbytes2]


def _mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as error:  # pragma: no cover - python3-mpi4py is a setup package
        raise ImportError("Worker(level=4) needs mpi4py (Debian: python3-mpi4py) and Open MPI; "
                          "run scripts/setup.sh") from error
    return MPI


def _describe(error: BaseException) -> Tuple[str, str, Optional[int], Optional[int]]:
    """An exception as plain data (type name, message, status code, rank it names)."""
    return (type(error).__name__, str(error), getattr(error, "code", None),
            getattr(error, "rank", None))


# What another rank raised, by class name, as the SimplerError of the same builtin kind.
_PLAIN = {"ValueError": SimplerValueError, "TypeError": SimplerTypeError,
          "TimeoutError": WorkerTimeoutError, "RuntimeError": SimplerRuntimeError,
          "FileNotFoundError": RuntimeBuildNotFoundError}
_PLAIN.update({cls.__name__: cls for cls in set(_PLAIN.values())})


def _rebuild(described: Tuple[Any, ...], rank: int) -> BaseException:
    """The exception a rank reported, raised on this one (typed; the message names the rank)."""
    kind, message, code, named_rank = (tuple(described) + (None,) * 4)[:4]
    message = f"rank {rank}: {message}"
    if kind in _PLAIN:
        return _PLAIN[kind](message)
    if kind == "RankError":
        return RankError(message, rank if named_rank is None else named_rank,
                         PTO_RUNTIME_ERR_TIMEOUT if code is None else code)
    if code is not None:
        return ChipWorkerError(message, code)
    return RankError(message, rank)


def _native() -> Any:
    try:
        from simpler import _mpi_native
    except ImportError as error:
        raise ImportError("Worker(level=4) needs simpler._mpi_native, which is built only when "
                          "CMake finds MPI (Debian: libopenmpi-dev; run scripts/setup.sh, then "
                          "scripts/build.sh)") from error
    return _mpi_native


class _Link:
    """This rank's MPI plumbing: the native progress engine plus the dispatcher thread that
    runs Python handlers for what the engine hands over."""

    def __init__(self, comm: Any, rank_timeout: float, heartbeat: float) -> None:
        MPI = _mpi()
        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            raise SimplerRuntimeError("Worker(level=4): MPI was initialized without THREAD_MULTIPLE; "
                                      "import simpler (or mpi4py with its default) before MPI_Init")
        native = _native()
        self.ctrl = comm.Dup()
        self.data = comm.Dup()
        self.coll = comm.Dup()
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.rank_timeout = rank_timeout
        self.heartbeat = heartbeat
        self.handlers: Dict[str, Callable[..., None]] = {}
        self.peers: List[int] = list(range(1, self.size)) if self.rank == 0 else [0]
        self.native = native.Link(MPI._handleof(self.ctrl), MPI._handleof(self.data),
                                  MPI._handleof(self.coll), rank_timeout, heartbeat, self.peers)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._dispatch, daemon=True,
                                        name=f"simpler-mpi-rank{self.rank}")
        # A script that exits without close(): stop the threads before the interpreter
        # finalizes (a thread waiting in native code then would abort the process) and
        # before mpi4py's MPI_Finalize (registered earlier, so it runs later).
        atexit.register(_Link._stop_at_exit, weakref.ref(self))

    @staticmethod
    def _stop_at_exit(ref: "weakref.ReferenceType[_Link]") -> None:
        link = ref()
        if link is not None:
            link.stop()

    def start(self) -> None:
        self.native.start()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=max(5.0, self.rank_timeout))
        self.native.stop()

    def free(self) -> None:
        # The duplicated communicators are not freed: MPI_Comm_free may synchronize with a
        # rank that is dead or silent, and a close must never wait for one. Three handles
        # per Worker are released by MPI_Finalize.
        self.handlers.clear()

    def new_tag(self) -> int:
        return self.native.new_tag()

    def send(self, dest: int, message: tuple) -> None:
        """A lifecycle message (no reply); dropped when ``dest`` is dead (its waiters learn
        that from check())."""
        self.native.post(dest, pickle.dumps(message))

    def go_silent(self, seconds: float) -> None:
        self.native.go_silent(seconds)

    # ---- liveness -----------------------------------------------------------------------
    def check(self, rank: int, what: str) -> None:
        if self.native.alive(rank):
            return
        silent = self.native.silent_for(rank)
        raise RankError(f"rank {rank} stopped answering (silent for {silent:.1f} s, "
                        f"rank_timeout={self.rank_timeout} s); {what} abandoned", rank,
                        PTO_RUNTIME_ERR_TIMEOUT)

    def wait_event(self, event: threading.Event, rank: int, what: str) -> None:
        while not event.wait(min(0.05, self.heartbeat)):
            self.check(rank, what)

    # ---- the dispatcher thread ----------------------------------------------------------
    def _dispatch(self) -> None:
        while not self._stop.is_set():
            message = self.native.next_message(0.05)
            if message is None:
                continue
            source, kind, rid, payload = message
            if kind != _KIND_PYTHON:      # a copy this rank cannot serve natively
                self.native.reply(source, rid, _NATIVE_ERROR, 0, (
                    "transfers between ranks need device memory MPI can address (the "
                    "simulator's); this platform's chips have none").encode())
                continue
            try:
                decoded = pickle.loads(payload)
                if rid:
                    handler = self.handlers.get("req")
                    if handler is not None:
                        handler(source, rid, *decoded)
                else:
                    handler = self.handlers.get(decoded[0])
                    if handler is not None:
                        handler(source, decoded)
            except Exception as error:  # noqa: BLE001 - this thread must keep serving
                if rid:                   # the requester gets the error, not a wait
                    self.native.reply(source, rid, _PYTHON_ERROR, 0, pickle.dumps(
                        _describe(error)))


class _Pending:
    """A request to another rank in flight; ``result()`` waits for its reply."""

    def __init__(self, link: _Link, rank: int, call: Any, what: str, python: bool) -> None:
        self.link = link
        self.rank = rank
        self.call = call
        self.what = what
        self.python = python

    def result(self) -> Any:
        return _outcome(self.link, self.rank, self.what, self.call.wait(self.link.native),
                        self.python)

    def abandon(self) -> None:
        """Tells the rank to drop the request: it never replies to it, and a collective or
        receive of it no longer writes device memory (the failed run frees it next)."""
        self.call.abandon(self.link.native)


def _outcome(link: _Link, rank: int, what: str, result: tuple, python: bool) -> Any:
    outcome, status, code, payload, error = result
    if outcome == _PEER_DEAD:
        link.check(rank, what)
        raise RankError(f"rank {rank} stopped answering; {what} abandoned", rank,
                        PTO_RUNTIME_ERR_TIMEOUT)
    if outcome != _DONE:
        raise RankError(f"rank {rank}: MPI failed during {what}: {error}", rank)
    if status == _OK:
        return pickle.loads(payload) if python else None
    if status == _PYTHON_ERROR:
        raise _rebuild(pickle.loads(payload), rank)
    message = payload.decode(errors="replace")
    if code:
        raise ChipWorkerError(f"rank {rank}: {message}", code)
    raise SimplerValueError(f"rank {rank}: {message}")


def _settle(pending: Sequence[_Pending]) -> None:
    """Awaits every request; on the first failure the rest are abandoned, then it raises."""
    for index, call in enumerate(pending):
        try:
            call.result()
        except BaseException:
            for rest in pending[index + 1:]:
                rest.abandon()
            raise


class _Client:
    """Rank 0's side: requests to the serving ranks."""

    def __init__(self, link: _Link) -> None:
        self.link = link
        self.native = link.native

    def start(self, rank: int, op: str, *args: Any) -> _Pending:
        """A request served by the rank's Python layer (runs, allocations, registrations)."""
        self.link.check(rank, op)
        call = self.native.begin(rank, [_KIND_PYTHON], pickle.dumps((op, args)))
        return _Pending(self.link, rank, call, f"{op} on rank {rank}", True)

    def call(self, rank: int, op: str, *args: Any) -> Any:
        return self.start(rank, op, *args).result()

    def data(self, rank: int, header: List[int], what: str, payload: bytes = b"",
             send: Any = None, recv: Any = None) -> None:
        """A transfer or collective served by the rank's native progress engine."""
        self.link.check(rank, what)
        result = self.native.call(rank, header, payload, send, recv)
        _outcome(self.link, rank, f"{what} on rank {rank}", result, False)

    def begin_data(self, rank: int, header: List[int], what: str, payload: bytes = b"") -> _Pending:
        self.link.check(rank, what)
        call = self.native.begin(rank, header, payload)
        return _Pending(self.link, rank, call, f"{what} on rank {rank}", False)


class _Server:
    """A serving rank: executes rank 0's Python-level requests on this rank's chips
    (transfers and collectives are served by the native progress engine itself)."""

    def __init__(self, link: _Link, local: LocalTransport) -> None:
        self.link = link
        self.local = local
        self.shutdown = threading.Event()
        self._queues: List["queue.Queue[Optional[Callable[[], None]]]"] = []
        self._threads: List[threading.Thread] = []
        for slot in range(local.chip_count + 1):   # one per chip, plus one for admin calls
            q: "queue.Queue[Optional[Callable[[], None]]]" = queue.Queue()
            t = threading.Thread(target=self._worker, args=(q,), daemon=True,
                                 name=f"simpler-mpi-serve{slot}")
            t.start()
            self._queues.append(q)
            self._threads.append(t)
        if local.addressable:
            link.native.serve_devices(local.device_ids)
        link.handlers["req"] = self._on_request
        link.handlers["shutdown"] = lambda source, message: self.shutdown.set()

    @staticmethod
    def _worker(q: "queue.Queue[Optional[Callable[[], None]]]") -> None:
        while True:
            job = q.get()
            if job is None:
                return
            job()

    def stop(self) -> None:
        for q in self._queues:
            q.put(None)
        for t in self._threads:
            t.join(timeout=30)

    def _reply(self, rid: int, fn: Callable[[], Any]) -> None:
        try:
            status, payload = _OK, pickle.dumps(fn())
        except BaseException as error:  # noqa: BLE001 - sent to rank 0
            status, payload = _PYTHON_ERROR, pickle.dumps(_describe(error))
        self.link.native.reply(0, rid, status, 0, payload)

    def _on_request(self, source: int, rid: int, op: str, args: tuple) -> None:
        local = self.local
        if op in ("register", "unregister"):
            self._queues[-1].put(lambda: self._reply(rid, lambda: getattr(local, op)(*args)))
        elif op == "run":
            slot, key, tensors, scalars, config = args
            self._queues[slot].put(lambda: self._reply(
                rid, lambda: local.run(slot, key, tensors, scalars, _config(config))))
        elif op in ("malloc", "free", "memory_info", "committed"):
            slot = args[0]
            self._queues[slot].put(lambda: self._reply(rid, lambda: getattr(local, op)(*args)))
        else:
            self.link.native.reply(0, rid, _PYTHON_ERROR, 0, pickle.dumps(
                ("ValueError", f"unknown request {op!r}", None)))


def _outgoing(local: LocalTransport, slot: int, src: int, nbytes: int) -> Any:
    """What an outgoing transfer sends: the device memory itself when addressable."""
    view = local.device_view(slot, src, nbytes)
    if view is not None:
        return view
    staging = np.empty(nbytes, dtype=np.uint8)
    local.read_device(slot, staging, src)
    return staging


def _landing(local: LocalTransport, slot: int, dst: int, nbytes: int) -> Tuple[Any, bool]:
    """Where an incoming transfer lands: the device memory itself when it can be addressed
    (simulator), else a staging buffer copied to the chip afterwards."""
    view = local.device_view(slot, dst, nbytes)
    if view is not None:
        return view, True
    return np.empty(nbytes, dtype=np.uint8), False


def _config(config: Optional[dict]) -> Any:
    if config is None:
        return None
    from simpler.task_interface import CallConfig
    return CallConfig(**config)


class MpiTransport(ChipTransport):
    """Rank 0's view of every chip of every rank: slot = (rank, device)."""

    def __init__(self, link: _Link, local: LocalTransport, chips: Sequence[Tuple[int, int]]) -> None:
        self.link = link
        self.local = local
        self.client = _Client(link)
        self.chips = list(chips)
        per_rank = local.chip_count
        self._where = [(rank, index % per_rank) for index, (rank, _) in enumerate(chips)]
        self.collective_lock = threading.Lock()   # MPI collectives launch in one order
        self.native = link.native
        self.mpi_collectives = True               # Worker(level=4).mpi_collectives
        self.mpi_poisoned = False                 # a collective was abandoned: ring only
        self._plans: Dict[Tuple[int, ...], Optional[List[List[int]]]] = {}   # mpi_plan's
        # Worker(level=4).mpi_all_reduce_max_bytes
        self.mpi_all_reduce_max_bytes = MPI_ALL_REDUCE_MAX_BYTES
        self._direct = local.addressable
        if self._direct:                          # before the link starts
            self.native.serve_devices(local.device_ids)

    @property
    def chip_count(self) -> int:
        return len(self.chips)

    def chip_name(self, slot: int) -> str:
        rank, device = self.chips[slot]
        return f"rank {rank} device {device}"

    def _loc(self, slot: int) -> Tuple[int, int]:
        return self._where[slot]

    def register(self, key: int, image: bytes) -> None:
        calls = [self.client.start(r, "register", key, image) for r in range(1, self.link.size)]
        self.local.register(key, image)
        for call in calls:
            call.result()

    def unregister(self, key: int) -> None:
        calls = [self.client.start(r, "unregister", key) for r in range(1, self.link.size)]
        self.local.unregister(key)
        for call in calls:
            call.result()

    def run(self, slot: int, key: int, tensors: Sequence[TensorRef], scalars: Sequence[int],
            config: Any = None) -> None:
        rank, local = self._loc(slot)
        if rank == 0:
            self.local.run(local, key, tensors, scalars, config)
            return
        self.client.call(rank, "run", local, key, list(tensors), list(scalars),
                         None if config is None else config.to_dict())

    def _simple(self, slot: int, op: str, *args: Any) -> Any:
        rank, local = self._loc(slot)
        if rank == 0:
            return getattr(self.local, op)(local, *args)
        return self.client.call(rank, op, local, *args)

    def malloc(self, slot: int, nbytes: int) -> int:
        return self._simple(slot, "malloc", nbytes)

    def free(self, slot: int, ptr: int) -> None:
        self._simple(slot, "free", ptr)

    def memory_info(self, slot: int) -> Tuple[int, int]:
        return tuple(self._simple(slot, "memory_info"))  # type: ignore[return-value]

    def committed(self, slot: int) -> int:
        return self._simple(slot, "committed")

    def copy_to(self, slot: int, dst: int, src: Any) -> None:
        rank, local = self._loc(slot)
        if rank == 0:
            self.local.copy_to(local, dst, src)
            return
        buf = np.ascontiguousarray(np.frombuffer(memoryview(src).cast("B"), dtype=np.uint8))
        self._send_to(rank, local, dst, buf)

    def _send_to(self, rank: int, local: int, dst: int, buf: Any) -> None:
        n = buf.nbytes
        if n <= _INLINE:
            self.client.data(rank, _header(_KIND_COPY_TO, local, dst, n, flow=_FLOW_INLINE),
                             "copy to the chip", payload=buf.tobytes())
        else:
            self.client.data(rank, _header(_KIND_COPY_TO, local, dst, n, tag=self.link.new_tag()),
                             "copy to the chip", send=buf)

    def _receive_from(self, rank: int, local: int, src: int, staging: Any) -> None:
        n = staging.nbytes
        if n <= _INLINE:
            header = _header(_KIND_COPY_FROM, local, src, n, flow=_FLOW_INLINE)
        else:
            header = _header(_KIND_COPY_FROM, local, src, n, tag=self.link.new_tag())
        self.client.data(rank, header, "copy from the chip", recv=staging)

    def copy_from(self, slot: int, dst: Any, src: int) -> None:
        rank, local = self._loc(slot)
        if rank == 0:
            self.local.copy_from(local, dst, src)
            return
        view = memoryview(dst).cast("B")
        if view.readonly:
            raise SimplerValueError("copy_from: the destination buffer is read-only")
        self._receive_from(rank, local, src, np.frombuffer(view, dtype=np.uint8))

    def copy_peer(self, dst_slot: int, dst: int, src_slot: int, src: int, nbytes: int) -> None:
        (ra, la), (rb, lb) = self._loc(dst_slot), self._loc(src_slot)
        if ra == 0 and rb == 0:
            self.local.copy_peer(la, dst, lb, src, nbytes)
        elif ra == rb:
            self.client.data(ra, _header(_KIND_LOCAL_COPY, la, dst, nbytes, addr2=src, aux=lb),
                             "copy between chips")
        elif (ra == 0 or rb == 0) and self._direct:
            # The hot path: the local end is rank 0's own device memory, read or written by
            # the native layer directly (one call, no staging, no Python on the other side).
            flow = _FLOW_INLINE if nbytes <= _INLINE else _FLOW_SEPARATE
            tag = 0 if flow == _FLOW_INLINE else self.link.new_tag()
            if rb == 0:
                result = self.native.transfer(ra, _KIND_COPY_TO, la, dst, nbytes, 0, tag, flow,
                                              lb, src)
            else:
                result = self.native.transfer(rb, _KIND_COPY_FROM, lb, src, nbytes, 0, tag, flow,
                                              la, dst)
            if result is not None:
                peer = ra or rb
                _outcome(self.link, peer, f"copy between chips with rank {peer}", result, False)
        elif rb == 0:
            self._send_to(ra, la, dst, _outgoing(self.local, lb, src, nbytes))
        elif ra == 0:
            staging, direct = _landing(self.local, la, dst, nbytes)
            self._receive_from(rb, lb, src, staging)
            if not direct:
                self.local.write_device(la, dst, staging)
        else:                            # rank to rank, point to point
            tag = self.link.new_tag()
            receive = self.client.begin_data(
                ra, _header(_KIND_COPY_TO, la, dst, nbytes, peer=rb, tag=tag), "receive")
            send = self.client.begin_data(
                rb, _header(_KIND_COPY_FROM, lb, src, nbytes, peer=ra, tag=tag), "send")
            try:
                # Both replies at once: a receive refused by ra replies at once, while rb's
                # send then never completes and rb never replies (awaiting rb first hung).
                failed = self.native.wait_first_failure([send.call, receive.call])
                if failed >= 0:
                    (send, receive)[failed].result()   # raises what that rank reported
                _settle([send, receive])
            except BaseException:
                send.abandon()
                receive.abandon()
                # rb's data may sit unmatched at ra (ra refused or dropped the receive):
                # a later transfer must never draw this tag and match it.
                self.native.hold_tag(tag)
                raise

    # ---- MPI's own collectives (simpler.host.mpi_collectives) -------------------------------
    def mpi_plan(self, slots: Sequence[int]) -> Optional[List[List[int]]]:
        """Per rank, the group indices of its chips, when the group has a chip on every rank
        and device memory is addressable (MPI's collectives can carry the collective between
        the ranks), else None (simpler's ring / tree carries it)."""
        size = self.link.size
        if not self._direct or not self.mpi_collectives or self.mpi_poisoned or size < 2:
            return None
        key = tuple(slots)
        if key not in self._plans:        # a group's plan never changes: once per group
            plan: List[List[int]] = [[] for _ in range(size)]
            for index, slot in enumerate(slots):
                plan[self._loc(slot)[0]].append(index)
            self._plans[key] = plan if all(plan) else None
        return self._plans[key]            # shared: callers only read it

    def mpi_group(self, slots: Sequence[int],
                  plan: Optional[List[List[int]]] = None) -> Optional[List[int]]:
        """The chip index on each rank when ``slots`` is one chip on every rank in rank order
        (every collective then is one MPI collective), else None. ``plan``: mpi_plan(slots),
        when the caller has it."""
        plan = self.mpi_plan(slots) if plan is None else plan
        if plan is None or plan != [[rank] for rank in range(self.link.size)]:
            return None
        return [self._loc(slot)[1] for slot in slots]

    def local_index(self, slot: int) -> int:
        """The chip index of a slot on its own rank."""
        return self._loc(slot)[1]

    def launch_collective(self, parts: Sequence[Tuple[List[int], List[int]]],
                          what: str) -> Tuple[Any, List[_Pending]]:
        """Posts one collective on every rank — parts[r] = (header, counts) of rank r — in
        one order on all of them (under one lock); returns rank 0's posted part and the
        pending replies of the others."""
        with self.collective_lock:
            remote = [self.client.begin_data(rank, header, what,
                                             np.asarray(counts, dtype=np.int64).tobytes())
                      for rank, (header, counts) in enumerate(parts) if rank > 0]
            local = self.native.post_collective(parts[0][0], parts[0][1])
        return local, remote

    def collective(self, parts: Sequence[Tuple[List[int], List[int]]], what: str) -> None:
        """One MPI collective on every rank (parts[r] is rank r's), awaited on all of them;
        if any rank fails or goes silent, the others drop their part before the run's
        failure path frees the device buffers (docs/multi-host.md, Faults)."""
        local, remote = self.launch_collective(parts, what)
        try:
            # The other ranks' replies first, all at once: a part refused on one rank
            # replies at once, and then no other part (this rank's included) completes.
            # This rank's part progresses meanwhile: every wait here calls into MPI.
            failed = self.native.wait_first_failure([pending.call for pending in remote])
            if failed >= 0:
                remote[failed].result()      # raises what that rank reported
            _settle(remote)
            self.wait_collective(local, what)
        except BaseException:
            for pending in remote:
                pending.abandon()
            local.abandon(self.native)
            # Some ranks may have posted it and others not: the next collective would pair
            # with this one. MPI's collectives are off for this Worker from here on.
            self.mpi_poisoned = True
            raise

    def wait_collective(self, local: Any, what: str) -> None:
        outcome, error = local.wait(self.native, list(range(1, self.link.size)))
        if outcome == _PEER_DEAD:
            rank = int(error.split()[-1])
            self.link.check(rank, what)
            raise RankError(f"rank {rank} stopped answering; {what} abandoned", rank,
                            PTO_RUNTIME_ERR_TIMEOUT)
        if outcome != _DONE:
            raise RankError(f"rank 0: MPI failed during {what}: {error}", 0)

    def close(self) -> Dict[int, BaseException]:  # pragma: no cover - MpiWorker closes
        return self.local.close()


_MAX_SECONDS = 1e6   # rank_timeout and heartbeat: 11.6 days, as Worker.close_grace


@typed_methods("Worker", exclude=("__init__",))
class MpiWorker(HostWorker):
    """``Worker(level=4)``: every rank's chips; rank 0 orchestrates, the others serve."""

    @typed_call("Worker(level=4)", "Worker")
    def __init__(self, level: int = 4, *, device_ids: Optional[Sequence[int]] = None,
                 device_id: Optional[int] = None, platform: str = "a2a3sim",
                 runtime: str = "tensormap_and_ringbuffer", execution_mode: str = "program",
                 enable_sdma: bool = False, lib_dir: Any = None, comm: Any = None,
                 rank_timeout: float = 10.0, heartbeat: Optional[float] = None,
                 mpi_collectives: bool = True) -> None:
        api = "Worker(level=4)"
        check_mode(level, execution_mode, platform, runtime)
        if device_id is not None:
            raise SimplerValueError(f"{api}: takes device_ids=[...] (this rank's chips), not device_id")
        # Finite: an infinite (or NaN) timeout would wait for a dead rank forever.
        for name, value in (("rank_timeout", rank_timeout), ("heartbeat", heartbeat)):
            if value is None and name == "heartbeat":
                continue
            # numpy numbers are numbers (np.float32(5)); a bool is not a number of seconds.
            # Bounded: the native engine counts nanoseconds in 64 bits (1e12 s overflowed it).
            if (is_bool(value) or not isinstance(value, numbers.Real)
                    or not 0 < value <= _MAX_SECONDS):
                raise SimplerValueError(f"{api}: {name} must be a positive number of seconds, at "
                                        f"most {_MAX_SECONDS:.0e}, got {value!r}")
        if heartbeat is not None and heartbeat > rank_timeout / 2:
            # Fewer than two heartbeats per rank_timeout: healthy ranks get declared dead.
            raise SimplerValueError(f"{api}: heartbeat ({heartbeat} s) must be at most half of "
                                    f"rank_timeout ({rank_timeout} s); a rank silent for rank_timeout "
                                    "is declared dead")
        require_bool(mpi_collectives, f"{api}: mpi_collectives")
        require_bool(enable_sdma, f"{api}: enable_sdma")
        ids = validate_device_ids(device_ids, platform, api)
        MPI = _mpi()
        if comm is not None and not isinstance(comm, MPI.Intracomm):
            raise SimplerTypeError(f"{api}: comm must be an mpi4py intracommunicator (e.g. "
                                   f"MPI.COMM_WORLD), got {type(comm).__name__}")
        self._comm = comm if comm is not None else MPI.COMM_WORLD
        self._rank = self._comm.Get_rank()
        self._size = self._comm.Get_size()
        self._rank_timeout = float(rank_timeout)
        self._mpi_collectives = bool(mpi_collectives)
        self._mpi_all_reduce_max_bytes = MPI_ALL_REDUCE_MAX_BYTES
        self._heartbeat = float(heartbeat) if heartbeat else min(0.25, self._rank_timeout / 5)
        self._local = LocalTransport(ids, platform, runtime, lib_dir=_lib_dir_path(lib_dir),
                                     enable_sdma=enable_sdma)
        self._own_ids = ids                       # checked against rank 0's at init
        chips = [(rank, d) for rank in range(self._size) for d in ids]
        self._link: Optional[_Link] = None
        self._server: Optional[_Server] = None
        self._setup(level, self._local, chips)

    # ---- identity -----------------------------------------------------------------------
    @property
    def rank(self) -> int:
        return self._rank

    @property
    def world_size(self) -> int:
        return self._size

    @property
    def is_orchestrator(self) -> bool:
        """True on rank 0, the rank that runs host orchestrations."""
        return self._rank == 0

    @property
    def rank_timeout(self) -> float:
        return self._rank_timeout

    @property
    def mpi_collectives(self) -> bool:
        """Whether collectives spanning every rank may take MPI's own collectives (True by
        default; False makes every collective take simpler's ring / tree, e.g. to compare).
        Settable on rank 0 between runs."""
        return self._mpi_collectives

    @mpi_collectives.setter
    def mpi_collectives(self, value: bool) -> None:
        value = require_bool(value, "Worker(level=4).mpi_collectives")
        self._require_setting_on_rank_0("mpi_collectives")
        self._mpi_collectives = value
        if self._transport is not None and hasattr(self._transport, "mpi_collectives"):
            self._transport.mpi_collectives = self._mpi_collectives

    @property
    def mpi_all_reduce_max_bytes(self) -> int:
        """The largest ``all_reduce`` (bytes per chip) that MPI's collective carries; a larger
        one takes simpler's ring, which moves it without MPI's path's two host copies
        (docs/multi-host.md). Settable on rank 0 between runs; every path gives the same
        results."""
        return self._mpi_all_reduce_max_bytes

    @mpi_all_reduce_max_bytes.setter
    def mpi_all_reduce_max_bytes(self, value: int) -> None:
        what = "Worker(level=4).mpi_all_reduce_max_bytes"
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise SimplerTypeError(f"{what} must be an int (bytes), got {value!r}")
        if value < 0:
            raise SimplerValueError(f"{what} must be >= 0 bytes (0: every all_reduce takes the "
                                    f"ring), got {value}")
        self._require_setting_on_rank_0("mpi_all_reduce_max_bytes")
        self._mpi_all_reduce_max_bytes = int(value)
        if self._transport is not None and hasattr(self._transport, "mpi_all_reduce_max_bytes"):
            self._transport.mpi_all_reduce_max_bytes = self._mpi_all_reduce_max_bytes

    # ---- lifecycle ----------------------------------------------------------------------
    @typed_call("Worker.init")
    def init(self, prewarm_config: Any = None, *, config: Any = None) -> None:
        """Collective: every rank brings its chips up, or every rank rolls back (a failure
        anywhere raises ChipGroupError naming (rank, device) on every rank)."""
        if config is not None:
            raise SimplerValueError("Worker(level=4).init: config= is the kernel-mode keyword")
        with self._lifecycle:
            if self._state != "NEW":
                raise SimplerRuntimeError(f"Worker(level=4).init: the worker is {self._state}; "
                                          "init() only once, on a NEW worker")
            _require_config(prewarm_config, "init", "prewarm_config")
            # Bad input, refused before the rendezvous (the worker stays NEW); a rank that
            # refuses it is a rank that never reached init() for the others.
            self._local.check_build()
            try:
                rendezvous(self._comm, self._rank_timeout)   # before any collective MPI call
            except BaseException:
                self._state = "FAILED"
                raise
            link = self._link = _Link(self._comm, self._rank_timeout, self._heartbeat)
            statuses: Dict[int, Any] = {}
            ids_of: Dict[int, Any] = {}
            arrived = threading.Event()
            verdict: List[Any] = []
            decided = threading.Event()

            def on_status(source: int, message: tuple) -> None:
                statuses[source] = message[1]
                ids_of[source] = message[2]
                if len(statuses) == self._size - 1:
                    arrived.set()

            def on_verdict(source: int, message: tuple) -> None:
                verdict.append(message[1])
                decided.set()

            link.handlers["init_status"] = on_status
            link.handlers["init_verdict"] = on_verdict
            if self._rank != 0:
                self._server = _Server(link, self._local)
            else:
                self._transport = MpiTransport(link, self._local, self._chips)
                self._transport.mpi_collectives = self._mpi_collectives
                self._transport.mpi_all_reduce_max_bytes = self._mpi_all_reduce_max_bytes
            link.start()
            mine = {}
            try:
                self._local.init(prewarm_config)
            except ChipGroupError as error:
                mine = {d: _describe(e) for d, e in error.failures.items()}
            except BaseException as error:  # noqa: BLE001 - reported to every rank
                mine = {-1: _describe(error)}
            try:
                if self._rank == 0:
                    if self._size > 1:
                        self._wait_all(arrived, statuses, "init")
                    failures = {(0, d): e for d, e in mine.items()}
                    for rank, status in sorted(statuses.items()):
                        failures.update({(rank, d): e for d, e in status.items()})
                        if ids_of[rank] != self._own_ids:   # rank 0 names every rank's chips
                            failures[(rank, None)] = _describe(SimplerValueError(
                                f"device_ids {ids_of[rank]} differ from rank 0's {self._own_ids}; "
                                "give every rank the same device_ids"))
                    for rank in range(1, self._size):
                        link.send(rank, ("init_verdict", failures))
                else:
                    link.send(0, ("init_status", mine, self._own_ids))
                    link.wait_event(decided, 0, "init")
                    failures = verdict[0]
            except BaseException:
                self._abandon()
                self._state = "FAILED"
                raise
            if failures:
                if not mine:
                    self._local.close()
                self._abandon()
                self._state = "FAILED"
                named = {chip: _rebuild(desc, chip[0]) for chip, desc in failures.items()}
                raise ChipGroupError(
                    "Worker(level=4).init: "
                    + "; ".join(f"rank {r}{'' if d is None else f' device {d}'}: {desc[1]}"
                                for (r, d), desc in failures.items())
                    + " — every rank rolled its chips back", named)
            self._state = "READY"
            self._init_thread = threading.get_ident()
            if self._rank == 0:
                for key, callable_ in self._callables.items():
                    self._transport.register(key, callable_.bytes())
                self._cache_totals()

    def _wait_all(self, arrived: threading.Event, statuses: Dict[int, Any], what: str) -> None:
        assert self._link is not None
        while not arrived.wait(0.05):
            for rank in range(1, self._size):
                if rank not in statuses:
                    self._link.check(rank, what)

    def _abandon(self) -> None:
        if self._server is not None:
            self._server.stop()
        if self._link is not None:
            self._link.stop()
            self._link.free()
        self._link = None
        self._server = None

    def close(self) -> None:
        """Collective. Rank 0: completes its runs, tells every rank to close, waits for
        their reports (a dead rank is reported, not waited for), closes its chips. Other
        ranks: serve until rank 0 closes (or is found dead), then close their chips.
        Failures of every rank are raised together as ChipGroupError keyed (rank, device)."""
        self._refuse_inside_orchestration("close")
        with self._lifecycle:
            if self._state in ("NEW", "FAILED", "CLOSED"):
                self._state = "CLOSED"   # a failed init released everything (as level 2)
                return
            self._require_init_thread()
            self._begin_close()
            if self._rank == 0:
                self._close_orchestrator()
            else:
                self._close_server()

    def _close_orchestrator(self) -> None:
        link = self._link
        assert link is not None
        with self._runs_finished():       # within close_grace, as at level 3
            pass
        reports: Dict[int, Any] = {}
        arrived = threading.Event()

        def on_closed(source: int, message: tuple) -> None:
            reports[source] = message[1]
            if len(reports) == self._size - 1:
                arrived.set()

        link.handlers["closed"] = on_closed
        failures: Dict[Any, BaseException] = {}
        for rank in range(1, self._size):   # a silent rank that resumes closes too
            link.send(rank, ("shutdown",))
        if self._size > 1:
            for rank in range(1, self._size):
                while rank not in reports:
                    try:
                        link.check(rank, "close")
                    except RankError as error:
                        failures[(rank, None)] = error
                        break
                    arrived.wait(0.05)
        for rank, report in reports.items():
            failures.update({(rank, d): _rebuild(desc, rank) for d, desc in report.items()})
        local = self._local.close()
        failures.update({(0, self._local.device_ids[s]): e for s, e in local.items()})
        self._abandon()
        self._state = "CLOSED"
        self._raise_close(failures)

    def _close_server(self) -> None:
        link, server = self._link, self._server
        assert link is not None and server is not None
        error: Optional[BaseException] = None
        try:
            link.wait_event(server.shutdown, 0, "serving (waiting for rank 0 to close)")
        except RankError as dead:
            error = dead
        server.stop()
        local = self._local.close()
        report = {self._local.device_ids[s]: _describe(e) for s, e in local.items()}
        if error is not None:
            report[None] = _describe(error)
        link.send(0, ("closed", report))   # small, eager: never waits for rank 0
        self._abandon()
        self._state = "CLOSED"
        failures: Dict[Any, BaseException] = {(self._rank, self._local.device_ids[s]): e
                                              for s, e in local.items()}
        if error is not None and not failures:
            raise error                    # rank 0 died or went silent: named, typed
        if error is not None:
            failures[(0, None)] = error
        self._raise_close(failures)

    def _raise_close(self, failures: Dict[Any, BaseException]) -> None:
        if not failures:
            return
        raise ChipGroupError(
            "Worker(level=4).close: "
            + "; ".join(f"rank {r}" + ("" if d is None else f" device {d}") + f": {e}"
                        for (r, d), e in failures.items())
            + " (this rank's chips are released)", failures)

    # ---- rank 0 only --------------------------------------------------------------------
    def _require_orchestrator(self, api: str) -> None:
        if self._rank != 0:
            raise SimplerRuntimeError(f"Worker(level=4).{api}: only rank 0 runs host orchestrations "
                                      f"and addresses chips; rank {self._rank} serves its chips "
                                      "(docs/multi-host.md)")

    def _require_setting_on_rank_0(self, name: str) -> None:
        # Rank 0 picks every collective's path; a value set elsewhere would be ignored.
        if self._rank != 0:
            raise SimplerRuntimeError(f"Worker(level=4).{name}: set it on rank 0, which picks the path "
                                      f"of every collective; rank {self._rank} only serves its chips "
                                      "(docs/multi-host.md)")

    def _require_ready(self, api: str) -> None:
        self._require_orchestrator(api)
        super()._require_ready(api)

    def committed_device_memory(self, device_id: Any = None) -> int:
        # A memory call (docs/api.md): on another rank it indexed rank 0's chip list.
        self._require_orchestrator("committed_device_memory")
        return super().committed_device_memory(device_id)

    def register(self, chip_callable: Any) -> CallableHandle:
        """On rank 0: registers on every rank's chips. On other ranks: a no-op handle (rank 0
        ships the images), so SPMD-style scripts may register on every rank. Every rank
        checks the argument: one script then fails the same way on every rank."""
        self._check_registrable(chip_callable)
        if self._rank != 0:
            return CallableHandle(0, chip_callable)
        return super().register(chip_callable)

    def unregister(self, handle: Any) -> None:
        """On rank 0: removes the callable from every rank's chips. Elsewhere a no-op for the
        handles register() gave there (so the same script may unregister on every rank)."""
        if self._rank != 0 and isinstance(handle, CallableHandle) and handle.key == 0:
            return
        super().unregister(handle)

    def _test_go_silent(self, seconds: float, at_collective: bool = False) -> None:
        """Test hook: this rank stops answering (no replies, no heartbeats) for ``seconds``,
        now or (``at_collective``) when the next collective request arrives, which it then
        posts after the silence; ``seconds=0, at_collective=True`` refuses that request."""
        if self._link is not None and seconds == 0 and at_collective:
            self._link.native.refuse_next_collective()
        elif self._link is not None and at_collective:
            self._link.native.go_silent_at_collective(seconds)
        elif self._link is not None:
            self._link.go_silent(seconds)

    def __repr__(self) -> str:
        return (f"<simpler.Worker level=4 rank={self._rank}/{self._size} "
                f"chips/rank={self._local.device_ids} state={self._state}>")
