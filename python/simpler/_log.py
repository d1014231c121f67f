"""Native log lines -> Python's ``logging`` (logger ``"simpler"``); see docs/logging.md.

Every native part of simpler logs through one sink per process (``libsimpler_log``). Once
``simpler._native`` is loaded (any of simpler's modules), that sink appends to a bounded
queue and a daemon thread (``simpler-log``) drains it into ``logging.getLogger("simpler")``
with the native level (DEBUG 10, INFO 20, WARNING 30, ERROR 40: Python's numbers).
Native threads never take the GIL.

The native threshold decides which lines are produced at all: ``$SIMPLER_LOG_LEVEL`` when
set, else the effective level of the ``"simpler"`` logger (WARNING unless configured),
followed within about a second when it changes; :func:`set_level` sets both at once.
"""
from __future__ import annotations

import atexit
import logging
import numbers
import os
import threading
import time
from typing import Optional, Union

from simpler import _native
from simpler._typed_call import typed_call

__all__ = ["LOGGER", "set_level", "flush"]

LOGGER = logging.getLogger("simpler")
_bridge = _native.log
_lock = threading.Lock()
_thread: Optional[threading.Thread] = None
_stopping = threading.Event()
_pinned_by_set_level = False

# How often the drain thread looks at the logger's level when nothing is logged.
_SYNC_SECONDS = 1.0


def _emit(records, dropped: int) -> None:
    for level, component, message in records:
        if LOGGER.isEnabledFor(level):
            LOGGER.log(level, "%s: %s", component, message,
                       extra={"simpler_component": component})
    if dropped:
        LOGGER.warning("log: %d native log lines were dropped (more than 10000 queued)", dropped)


def _sync_threshold() -> None:
    if _pinned_by_set_level or _bridge.threshold_from_env():
        return
    wanted = LOGGER.getEffectiveLevel()
    if _bridge.threshold() != wanted:
        _bridge.set_threshold(wanted)


# Held from taking lines off the native queue until they are logged: flush() takes it too,
# so a line the drain thread already took is delivered before flush() returns.
_deliver = threading.RLock()  # reentrant: a logging handler may call flush()
_flushers = 0  # flush() calls waiting for _deliver (guarded by _lock)


def _drain() -> None:
    while not _stopping.is_set():
        try:
            with _deliver:
                records, dropped = _bridge.take(_SYNC_SECONDS)
                _emit(records, dropped)
            _sync_threshold()
            while _flushers and not _stopping.is_set():
                time.sleep(0.001)  # a flush() is due: let it have _deliver first
        except Exception:  # noqa: BLE001 - a broken handler must not kill the bridge
            pass


def _start() -> None:
    global _thread
    with _lock:
        if _thread is not None and _thread.is_alive():
            return
        _stopping.clear()
        _bridge.install()
        _sync_threshold()
        _thread = threading.Thread(target=_drain, name="simpler-log", daemon=True)
        _thread.start()


def _shutdown() -> None:
    """At exit: back to the stderr sink, stop the thread, deliver what is queued."""
    _stopping.set()
    _bridge.uninstall()
    if _thread is not None:
        _thread.join(timeout=2.0)
    flush()


def _after_fork_in_child() -> None:
    # The thread did not survive the fork. A new one starts with the child's first native
    # line, not here: a thread started in this hook can hang the child under ASan (GCC's
    # allocator is not fork-safe). Until then every line is produced (threshold DEBUG,
    # unless pinned), so the first one starts the thread, which then syncs the threshold.
    global _thread, _deliver, _flushers
    _thread = None
    _deliver = threading.RLock()  # it may have held the lock at the fork
    _flushers = 0
    if not (_pinned_by_set_level or _bridge.threshold_from_env()):
        _bridge.set_threshold(_bridge.DEBUG)
    _bridge.start_drain_on_line()


def _start_on_line() -> None:
    """Called on the main thread (a pending call) for a forked child's first native line."""
    if not _stopping.is_set():
        _start()


def flush() -> None:
    """Delivers every native log line queued so far (including lines the ``simpler-log``
    thread has taken but not yet logged) before it returns."""
    global _flushers
    with _lock:
        _flushers += 1
    try:
        _bridge.wake()  # the drain thread, waiting for lines, returns and lets go of _deliver
        with _deliver:
            records, dropped = _bridge.take(0.0)
            _emit(records, dropped)
    finally:
        with _lock:
            _flushers -= 1


def set_level(level: Union[int, str]) -> None:
    """Sets the ``"simpler"`` logger's level and the native threshold together (this wins
    over ``$SIMPLER_LOG_LEVEL``). ``level``: a ``logging`` level or its name."""
    global _pinned_by_set_level
    from simpler.errors import SimplerTypeError, SimplerValueError  # here: errors imports us
    if isinstance(level, str):
        number = logging.getLevelName(level.upper())
    elif isinstance(level, numbers.Integral) and not isinstance(level, bool):
        number = int(level)
    else:
        raise SimplerTypeError(f"set_log_level: level must be a logging level (int) or its name, "
                               f"got {type(level).__name__}")
    if not isinstance(number, int) or number < 0:
        raise SimplerValueError(f"unknown log level {level!r}; use DEBUG, INFO, WARNING, ERROR or a number")
    LOGGER.setLevel(number)
    _bridge.set_threshold(min(number, _bridge.OFF))  # above OFF is off (and fits the native int)
    _pinned_by_set_level = True


# A call that does not fit is a SimplerTypeError naming simpler.set_log_level.
set_level = typed_call("simpler.set_log_level")(set_level)

_start()
atexit.register(_shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
