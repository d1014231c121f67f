"""Ctrl-C (KeyboardInterrupt) at any point of a level-3 run leaves the Worker usable: the
interrupted run completes in the background, nothing waits forever, no thread leaks."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from simpler import Worker
from simpler.host.host_worker import HostWorker
from simpler.host.orchestrator import _ChipExecutor

X = np.arange(64, dtype=np.float32)


def _bounded(fn, seconds=20):
    """fn() on a daemon thread; its result, or a failure if it did not return in time."""
    box = {}
    thread = threading.Thread(target=lambda: box.update(value=fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"hung for {seconds} s"
    return box.get("value")


def _tasks():
    return len(os.listdir("/proc/self/task"))


@pytest.fixture
def w3(add_scalar_callable):
    w = Worker(level=3, device_ids=[0, 1])
    w.add = w.register(add_scalar_callable)
    w.init()
    w.close_grace = 2
    yield w
    w.close()


def _run(w, y, s):
    def body():
        try:
            w.run(lambda o, _: o.submit(w.add, X, y, s, chip=0))
            return "ok"
        except KeyboardInterrupt:
            return "interrupted"
    return _bounded(body)


def test_ctrl_c_inside_orch_submit_then_the_next_run_completes(w3, monkeypatch):
    # Interrupted between recording the task and handing it to its chip: the run waited
    # forever for a task no chip had.
    y = np.zeros_like(X)

    def interrupted(self, task):
        raise KeyboardInterrupt
    monkeypatch.setattr(_ChipExecutor, "push", interrupted)
    assert _run(w3, y, 1.0) == "interrupted"
    monkeypatch.undo()
    assert _run(w3, y, 2.0) == "ok"
    np.testing.assert_array_equal(y, X + 2)


def test_ctrl_c_before_the_orchestration_starts_leaks_no_thread(w3, monkeypatch):
    y = np.zeros_like(X)
    assert _run(w3, y, 1.0) == "ok"          # first-run threads (log, ...) exist
    before = _tasks()

    def interrupted(self, run):
        raise KeyboardInterrupt
    monkeypatch.setattr(HostWorker, "_orchestrator", interrupted)
    assert _run(w3, y, 1.0) == "interrupted"
    monkeypatch.undo()
    assert _run(w3, y, 3.0) == "ok"
    deadline = time.monotonic() + 5
    while _tasks() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _tasks() <= before            # the interrupted run's chip threads are gone
    np.testing.assert_array_equal(y, X + 3)


@pytest.mark.parametrize("call", ["run", "submit"])
def test_ctrl_c_at_random_points_of_a_run_loop_never_wedges_the_worker(call):
    # A signal handler that raises runs between any two bytecodes of the main thread:
    # inside threading.Thread.start() or queue.Queue's Condition it left a lock held (the
    # next run hung) or raised "release unlocked lock".
    script = textwrap.dedent(f"""
        import random, signal, sys, time
        import numpy as np
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from conftest import PROGRAMS
        from simpler import KernelCompiler, Worker
        from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
        cc = KernelCompiler()
        src = lambda name: (PROGRAMS / name).read_text()
        sig = [D.IN, D.OUT, D.SCALAR]
        kernel = CoreCallable.build(sig, cc.compile_kernel(src("add_scalar_kernel.cpp"), "aiv"))
        add = ChipCallable.build(sig, "add_scalar_entry",
                                 cc.compile_orchestration(src("add_scalar_orch.cpp"), entry="add_scalar_entry"),
                                 children=[(0, kernel)])
        armed = [False]
        def alarm(*_):
            if armed[0]:
                raise KeyboardInterrupt
        signal.signal(signal.SIGALRM, alarm)
        random.seed(7)
        x = np.arange(256, dtype=np.float32); y = np.zeros_like(x)
        w = Worker(level=3, device_ids=[0, 1]); h = w.register(add); w.init()
        interrupts, end = 0, time.monotonic() + 4
        while time.monotonic() < end:
            try:
                armed[0] = True
                signal.setitimer(signal.ITIMER_REAL, random.uniform(0.0001, 0.003))
                for i in range(50):
                    orch = lambda o, _: o.submit(h, x, y, 1.0, chip=i % 2)  # noqa: E731
                    w.run(orch) if {call!r} == "run" else w.submit(orch).wait()
            except KeyboardInterrupt:
                interrupts += 1
            finally:
                armed[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
        w.run(lambda o, _: o.submit(h, x, y, 2.0, chip=0))
        assert (y == x + 2).all()
        t0 = time.monotonic(); w.close(); assert time.monotonic() - t0 < 15
        print("OK", interrupts, flush=True)
    """)
    try:
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the worker wedged: the interpreter did not exit within 60 s")
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr[-3000:]


def test_ctrl_c_during_a_level3_copy_back_hands_the_rest_to_the_background(add_scalar_callable):
    # A Ctrl-C while the outputs were being copied back was taken as the run's error: the
    # outputs after it were never copied back, though the run is said to complete.
    w = Worker(level=3, device_ids=[3])
    w.init()
    try:
        handle = w.register(add_scalar_callable)
        x = np.arange(64, dtype=np.float32)
        y1, y2 = np.zeros_like(x), np.zeros_like(x)
        real_copy_from = w._transport.copy_from

        def copy_then_ctrl_c(*args):
            w._transport.copy_from = real_copy_from   # once
            real_copy_from(*args)
            raise KeyboardInterrupt                   # the signal arrived during the copy

        w._transport.copy_from = copy_then_ctrl_c
        with pytest.raises(KeyboardInterrupt):
            w.run(lambda o, a: (o.submit(handle, x, y1, 1.0), o.submit(handle, x, y2, 2.0)))
        interrupted = w._last_run
    finally:
        w.close()                      # completes the interrupted run
    np.testing.assert_array_equal(y1, x + 1)
    np.testing.assert_array_equal(y2, x + 2)
    assert all(buf.ptr is None for buf in interrupted.residency.buffers())
