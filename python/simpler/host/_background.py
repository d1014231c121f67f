"""``Background``: a daemon thread started by one C call, and ``Latch``, the one-shot event it
and the run handles wait on. ``threading.Thread.start()`` waits
on a Condition whose Python-level ``__exit__`` a Ctrl-C (any signal handler that raises)
can interrupt, leaving its lock held (the new thread then never starts, and a join hangs)
or raising "release unlocked lock". The main thread starts host-run threads, so these."""
from __future__ import annotations

import _thread
from typing import Any, Callable, Optional


class Background:
    def __init__(self, target: Callable[..., Any], *args: Any) -> None:
        self._finished = Latch()
        _thread.start_new_thread(self._body, (target, args))

    def _body(self, target: Callable[..., Any], args: Any) -> None:
        try:
            target(*args)
        finally:
            self._finished.set()

    def join(self, timeout: Optional[float] = None) -> None:
        self._finished.wait(timeout)

    def is_alive(self) -> bool:
        return not self._finished.is_set()


class Latch:
    """A one-shot event whose ``wait`` a Ctrl-C cannot leave half done: ``threading.Event``
    waits on a Condition whose Python-level lock handling a raising signal handler can
    interrupt ("release unlocked lock"); this waits in one C call on a plain lock."""

    def __init__(self) -> None:
        self._set = False        # read first: a wait interrupted between acquire and release
        self._unset = _thread.allocate_lock()
        self._unset.acquire()

    def set(self) -> None:
        if not self._set:
            self._set = True
            self._unset.release()

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: Optional[float] = None) -> bool:
        if self._set:
            return True
        if self._unset.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            self._unset.release()
        return self._set
