"""Bounded close and exit after a hang, and fork (issue 16 item 1). Each scenario runs in a
fresh interpreter (subprocess, with a timeout) so that a regression hangs or kills that
interpreter, not the test session."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from conftest import PROGRAMS

PRELUDE = textwrap.dedent(f"""
    import os, signal, sys, time, warnings
    import numpy as np
    from simpler import KernelCompiler, Worker, sim
    from simpler.task_interface import (ArgDirection as D, CallConfig, ChipCallable,
                                        ChipStorageTaskArgs, ChipTensor, CoreCallable, DataType)
    PROGRAMS = {str(PROGRAMS)!r}
    cc = KernelCompiler()
    src = lambda name: open(os.path.join(PROGRAMS, name)).read()
    kernel = CoreCallable.build([D.INOUT, D.SCALAR], cc.compile_kernel(src("crash_kernel.cpp"), "aiv"))
    crash = ChipCallable.build([D.INOUT, D.SCALAR, D.SCALAR], "crash_entry",
                               cc.compile_orchestration(src("crash_orch.cpp"), entry="crash_entry"),
                               children=[(0, kernel)])
    NEVER_RETURN, FINE = 3, 99

    def crash_args(tensor, how, who=0):
        a = ChipStorageTaskArgs(); a.add_tensor(tensor); a.add_scalar(how); a.add_scalar(who)
        return a

    def wait_child(pid, seconds=30):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.02)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return "hung"
""")


def run_script(body: str, timeout: float = 90) -> subprocess.CompletedProcess:
    script = PRELUDE + textwrap.dedent(body)
    try:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the interpreter did not exit within {timeout} s: {e.stderr}")


def test_close_after_a_hung_run_is_bounded_and_reported():
    r = run_script("""
        import logging
        from simpler import _log
        records = []
        handler = logging.Handler()
        handler.emit = records.append
        logging.getLogger("simpler").addHandler(handler)
        w = Worker(level=2, device_id=1)
        w.init()
        w.close_grace = 0.5
        h = w.register(crash)
        x = np.zeros(4, dtype=np.float32)
        run = w.submit(h, crash_args(w.make_tensor_arg(x), NEVER_RETURN))
        start = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            w.close()
        took = time.monotonic() - start
        assert took < 5, took
        assert w.state == "CLOSED"
        assert any(issubclass(c.category, RuntimeWarning) and "abandoned" in str(c.message)
                   for c in caught), [str(c.message) for c in caught]
        # The report goes through the log sink (logger "simpler"), not straight to stderr.
        _log.flush()
        assert any(r.levelno == logging.WARNING and "abandoned" in r.getMessage()
                   and "device 1 is released" in r.getMessage() for r in records), \
            [r.getMessage() for r in records]
        # The abandoned context released its device claim: a new Worker on the same
        # device works while the stuck kernel still runs (its own context and memory).
        with Worker(level=2, device_id=1) as again:
            again.init()
            h2 = again.register(crash)
            y = np.zeros(4, dtype=np.float32)
            again.run(h2, crash_args(again.make_tensor_arg(y), FINE))
            assert y[0] == 1.0, y
        # The abandoned run's handle ends with a typed error (never touches the gone context).
        from simpler.errors import PTO_RUNTIME_ERR_INVALID_STATE, ChipWorkerError
        assert run.done
        try:
            run.wait(timeout=1)
            raise AssertionError("wait() of an abandoned run returned")
        except ChipWorkerError as e:
            assert "abandoned this run" in str(e) and e.status_name == "PTO_RUNTIME_ERR_TIMEOUT", e
        print("OK", flush=True)
        sys.exit(0)
    """)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr


def test_del_worker_and_exit_after_a_hung_run_are_bounded():
    r = run_script("""
        w = Worker(level=2, device_id=1)
        w.init()
        w.close_grace = 0.5
        h = w.register(crash)
        x = np.zeros(4, dtype=np.float32)
        keep = crash_args(w.make_tensor_arg(x), NEVER_RETURN)
        w.submit(h, keep)
        start = time.monotonic()
        del w
        assert time.monotonic() - start < 5
        # Kernel mode: a launch that never returns is still on the caller's stream at exit;
        # the sim exit handler waits for it only for its grace period.
        sim.EXIT_GRACE_SECONDS = 0.5
        sim.set_device(3)
        stream = sim.Stream()
        dx = sim.malloc(64)
        kw = Worker(level=2, execution_mode="kernel", device_id=3)
        kw.init(config=CallConfig())
        cid = kw.kernel_prepare_callable(crash)
        kw.kernel_launch(cid, crash_args(ChipTensor.make(dx, (16,), DataType.FLOAT32),
                                         NEVER_RETURN), caller_stream=stream)
        print("OK", flush=True)
        sys.exit(0)
    """, timeout=60)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr
    assert "abandoned" in r.stderr  # reported, not silent


def test_forked_child_of_a_sim_stream_user_exits_cleanly():
    r = run_script("""
        import threading
        sim.set_device(0)
        stream = sim.Stream()
        gate = threading.Event()
        stream.host_func(lambda: gate.wait(30))   # work still pending at fork time
        pid = os.fork()
        if pid == 0:
            try:
                stream.synchronize()
                os._exit(3)  # must have been refused
            except RuntimeError as e:
                assert "forked child" in str(e), e
            other = sim.Stream()  # the child's own stream works
            other.synchronize()
            other.destroy()
            sys.exit(0)  # atexit must not wait for the inherited stream
        assert wait_child(pid) == 0
        gate.set()
        stream.synchronize()
        stream.destroy()
        print("OK", flush=True)
    """)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr


def test_a_forked_child_starts_its_log_thread_on_its_first_native_line():
    # Not in the after-fork hook: a thread started there hung the child under ASan (GCC's
    # allocator is not fork-safe). The child's first native line starts it, and arrives.
    r = run_script("""
        import logging, threading
        from simpler import _log, _native
        got = []
        handler = logging.Handler()
        handler.emit = lambda record: got.append(record.getMessage())
        _log.LOGGER.addHandler(handler)
        pid = os.fork()
        if pid == 0:
            if any(t.name == "simpler-log" for t in threading.enumerate()):
                os._exit(2)
            _native.log.emit(_native.log.WARNING, "test", "the child's line")
            deadline = time.monotonic() + 20
            while not any("the child's line" in m for m in got) and time.monotonic() < deadline:
                time.sleep(0.01)
            started = any(t.name == "simpler-log" for t in threading.enumerate())
            os._exit(0 if got and started else 3)
        print("child", wait_child(pid), flush=True)
    """, timeout=60)
    assert "child 0" in r.stdout, (r.stdout, r.stderr)


def test_program_mode_fork_fence():
    r = run_script("""
        w = Worker(level=2, device_id=1)
        w.init()
        h = w.register(crash)
        x = np.zeros(4, dtype=np.float32)
        w.run(h, crash_args(w.make_tensor_arg(x), FINE))
        pending = w.submit(h, crash_args(w.make_tensor_arg(x), FINE))
        pid = os.fork()
        if pid == 0:
            for call in (lambda: w.run(h, crash_args(w.make_tensor_arg(x), FINE)),
                         lambda: w.submit(h, crash_args(w.make_tensor_arg(x), FINE)),
                         lambda: w.malloc(64), w.close, pending.wait, lambda: pending.done):
                try:
                    call()
                    os._exit(3)
                except RuntimeError as e:
                    if "fork" not in str(e) or "Worker.RunHandle" in str(e):  # RunHandle.done
                        os._exit(4)
            # The child's own Worker (another device) works and closes.
            with Worker(level=2, device_id=2) as mine:
                mine.init()
                y = np.zeros(4, dtype=np.float32)
                mine.run(mine.register(crash), crash_args(mine.make_tensor_arg(y), FINE))
                assert y[0] == 1.0
            sys.exit(0)  # abandons what it inherited: no native call, no hang, no abort
        assert wait_child(pid) == 0
        pending.wait(timeout=30)
        w.run(h, crash_args(w.make_tensor_arg(x), FINE))  # the parent is unaffected
        w.close()
        assert x[0] == 3.0, x
        print("OK", flush=True)
    """)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr


@pytest.mark.parametrize("runtime", ["tensormap_and_ringbuffer", "host_build_graph"])
def test_chip_worker_fork_fence(runtime):
    # A ChipWorker inherited by a forked child: its run waited forever for the parent's
    # engine threads, and so did its destructor at the child's exit.
    r = run_script(f"""
        import simpler
        from simpler.errors import PTO_RUNTIME_ERR_INVALID_STATE, ChipWorkerError
        from simpler.task_interface import ChipWorker
        cw = ChipWorker()
        cw.init(3, simpler.find_build("a2a3sim", {runtime!r}))
        h = cw.register(crash)
        x = np.zeros(4, dtype=np.float32)
        cw.run(h, crash_args(ChipTensor.from_array(x), FINE))
        pid = os.fork()
        if pid == 0:
            for call in (lambda: cw.run(h, crash_args(ChipTensor.from_array(x), FINE)),
                         lambda: cw.malloc(64), cw.committed_device_memory, cw.finalize):
                try:
                    call()
                    os._exit(3)
                except ChipWorkerError as e:
                    if "forked child" not in str(e) or e.code != PTO_RUNTIME_ERR_INVALID_STATE:
                        os._exit(4)
            sys.exit(0)  # the destructor leaves the inherited context alone
        assert wait_child(pid) == 0
        cw.run(h, crash_args(ChipTensor.from_array(x), FINE))  # the parent is unaffected
        cw.finalize()
        assert x[0] == 2.0, x
        print("OK", flush=True)
    """)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr


def test_exit_with_level3_runs_in_flight_completes_them_and_exits_cleanly():
    # The interpreter killed the host-run threads inside a chip run: abort ("terminate
    # called without an active exception", exit code 134).
    r = run_script("""
        w = Worker(level=3, device_ids=[0, 1])
        h = w.register(crash)
        w.init()
        xs = [np.zeros(1 << 22, dtype=np.float32) for _ in range(8)]

        def orch(o, _):
            for i, x in enumerate(xs):
                o.submit(h, x, FINE, 0, chip=i % 2)
        handles = [w.submit(orch) for _ in range(3)]
        print("exiting", flush=True)
    """, timeout=60)
    assert r.returncode == 0 and "exiting" in r.stdout, r.stderr[-3000:]
    assert "terminate called" not in r.stderr
