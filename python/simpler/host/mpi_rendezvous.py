"""The level-4 ``init()`` rendezvous: every rank reaches ``init()`` within ``rank_timeout``, or
a RankError naming a missing rank — before ``init()`` enters collective MPI calls (the
communicators' duplication), which would block forever on a rank that never arrives.

Point-to-point on the user's communicator, one tag. Every message carries the **session**
of one ``init()`` attempt of a rank other than 0 (a random number drawn per attempt): MPI
cannot take a sent message back (send-cancel is deprecated), so a message of an attempt
that gave up stays queued, and a later attempt must recognise and drop it::

    rank r -> 0   HELLO(s)             r's attempt s is in init()
    0 -> r        GO(s, time left)     rank 0 is in init() and heard s
    r -> 0        READY(s)             r is still in attempt s; it now waits for the verdict
    0 -> r        COMMIT(s) | ABORT(s, missing rank)

Before READY, rank r gives up at its own deadline (rank 0 then never sees READY(s) and
gives up on r). After READY it may no longer give up on its own — rank 0 could be
committing — so it waits for the verdict, which rank 0 sends by its deadline (the time left
rides in GO), plus a margin; rank 0 always sends one.
"""
from __future__ import annotations

import secrets
import time
from typing import Any, List, Optional, Tuple

import numpy as np

from simpler.errors import PTO_RUNTIME_ERR_TIMEOUT
from simpler.host.errors import RankError

TAG = 32001               # on the user's communicator; MPI guarantees tags up to 32767
HELLO, GO, READY, COMMIT, ABORT = 1, 2, 3, 4, 5
_MARGIN = 2.0             # seconds a READY rank waits past rank 0's deadline for the verdict
_unfinished: List[Any] = []   # buffers of sends released unfinished: MPI may still read them


class _Mailbox:
    """Three-int64 messages (kind, session, extra) on ``TAG``."""

    def __init__(self, comm: Any) -> None:
        from mpi4py import MPI
        self._mpi = MPI
        self.comm = comm
        self.any_source = MPI.ANY_SOURCE
        self._sends: List[Tuple[Any, np.ndarray]] = []

    def send(self, dest: int, kind: int, session: int, extra: int = 0) -> None:
        buf = np.array([kind, session, extra], dtype=np.int64)
        self._sends.append((self.comm.Isend(buf, dest=dest, tag=TAG), buf))

    def receive(self, source: int) -> Optional[Tuple[int, int, int, int]]:
        """(source, kind, session, extra) of a waiting message, or None; malformed ones
        (another program's use of the tag) are dropped."""
        while True:
            status = self._mpi.Status()
            message = self.comm.Improbe(source=source, tag=TAG, status=status)
            if message is None:
                return None
            raw = bytearray(status.Get_count(self._mpi.BYTE))
            message.Recv([raw, self._mpi.BYTE])
            if len(raw) == 24:
                kind, session, extra = np.frombuffer(raw, dtype=np.int64).tolist()
                return status.Get_source(), kind, session, extra

    def settle(self) -> None:
        """Small sends complete at once (eager); one that did not is released, never
        cancelled, and its buffer kept."""
        for request, buf in self._sends:
            if not request.Test():
                request.Free()
                _unfinished.append(buf)
        self._sends.clear()


def _pause(pause: float) -> float:
    time.sleep(pause)
    return min(pause * 2, 0.01)


def rendezvous(comm: Any, timeout: float) -> None:
    """Returns once every rank of ``comm`` is in init() and committed to go on; raises
    RankError (nothing taken) when a rank did not arrive within ``timeout`` seconds."""
    if comm.Get_size() == 1:
        return
    box = _Mailbox(comm)
    try:
        if comm.Get_rank() == 0:
            _lead(box, comm.Get_size(), timeout)
        else:
            _join(box, timeout)
    finally:
        box.settle()


def _missing(rank: int, timeout: float, who: str) -> RankError:
    return RankError(f"Worker(level=4).init: rank {rank} did not call init() within "
                     f"rank_timeout={timeout} s{who} (every rank must construct, init() and "
                     "close() its Worker); nothing was taken", rank, PTO_RUNTIME_ERR_TIMEOUT)


def _lead(box: _Mailbox, size: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    session = {}            # rank -> the latest attempt heard from it (GO sent)
    ready = set()
    pause = 1e-5
    while len(ready) < size - 1:
        got = box.receive(box.any_source)
        if got is not None:
            source, kind, s, _ = got
            if kind == HELLO:   # a newer attempt replaces an older one
                session[source] = s
                ready.discard(source)
                left_ms = max(0, int((deadline - time.monotonic()) * 1000))
                box.send(source, GO, s, left_ms)
            elif kind == READY and session.get(source) == s:
                ready.add(source)
            pause = 1e-5
            continue
        if time.monotonic() >= deadline:
            break
        pause = _pause(pause)
    if len(ready) == size - 1:
        for rank in ready:
            box.send(rank, COMMIT, session[rank])
        return
    missing = min(r for r in range(1, size) if r not in ready)
    for rank, s in session.items():       # those waiting for a verdict learn it now
        box.send(rank, ABORT, s, missing)
    raise _missing(missing, timeout, "")


def _join(box: _Mailbox, timeout: float) -> None:
    session = secrets.randbits(62) + 1
    box.send(0, HELLO, session)
    deadline = time.monotonic() + timeout
    readied = False
    pause = 1e-5
    while True:
        got = box.receive(0)
        if got is not None:
            _, kind, s, extra = got
            if s != session:          # an earlier attempt's message: dropped
                continue
            if kind == GO and not readied:
                box.send(0, READY, session)
                readied = True
                deadline = time.monotonic() + extra / 1000 + _MARGIN
            elif kind == COMMIT:
                return
            elif kind == ABORT:
                raise _missing(extra, timeout, " (rank 0 waited for it)")
            pause = 1e-5
            continue
        if time.monotonic() >= deadline:
            if readied:
                raise RankError("Worker(level=4).init: rank 0 went silent during init() (no "
                                f"verdict within rank_timeout={timeout} s); nothing was taken",
                                0, PTO_RUNTIME_ERR_TIMEOUT)
            raise RankError(f"Worker(level=4).init: rank 0 did not call init() within "
                            f"rank_timeout={timeout} s; nothing was taken", 0,
                            PTO_RUNTIME_ERR_TIMEOUT)
        pause = _pause(pause)
