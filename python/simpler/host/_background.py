"""``Background``: a daemon thread started by one C call. ``threading.Thread.start()`` waits
on a Condition whose Python-level ``__exit__`` a Ctrl-C (any signal handler that raises)
can interrupt, leaving its lock held (the new thread then never starts, and a join hangs)
or raising "release unlocked lock". The main thread starts host-run threads, so these."""
from __future__ import annotations

import _thread
from typing import Any, Callable, Optional


class Background:
    def __init__(self, target: Callable[..., Any], *args: Any) -> None:
        self._finished = False   # read first: a join interrupted between acquire and release
        self._running = _thread.allocate_lock()
        self._running.acquire()
        _thread.start_new_thread(self._body, (target, args))

    def _body(self, target: Callable[..., Any], args: Any) -> None:
        try:
            target(*args)
        finally:
            self._finished = True
            self._running.release()

    def join(self, timeout: Optional[float] = None) -> None:
        if self._finished:
            return
        if self._running.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            self._running.release()

    def is_alive(self) -> bool:
        return not self._finished
