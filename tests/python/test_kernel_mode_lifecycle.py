"""Kernel-mode Worker lifecycle rules that need a process of their own or the fake runtime:
probe in a fresh process, GC pin, fork fence, close grace, concurrency stress."""
from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest

from simpler import Worker, sim
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor, DataType

HERE = os.path.dirname(os.path.abspath(__file__))


def run_python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, "-W", "always::ResourceWarning", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120, env=env, cwd=HERE)


def test_probe_in_a_fresh_process_takes_nothing():
    result = run_python("""
        from simpler import Worker, sim
        from simpler.task_interface import ChipWorker
        tmr = Worker(level=2, execution_mode="kernel", runtime="tensormap_and_ringbuffer")
        hbg = Worker(level=2, execution_mode="kernel", runtime="host_build_graph")
        print("tmr", tmr.kernel_mode_supported, tmr.state)
        print("hbg", hbg.kernel_mode_supported, hbg.state)
        print("generation", ChipWorker and __import__("simpler")._native.worker.ChipWorker.last_generation())
        print("device", sim.get_device(), sim.call_count("set_device"), sim.call_count("malloc"))
        # no context or claim was left behind: a kernel init on device 0 succeeds now
        sim.set_device(0)
        from simpler.task_interface import CallConfig
        w = Worker(level=2, execution_mode="kernel")
        w.init(config=CallConfig()); w.close()
        print("init-after-probe ok")
    """)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "tmr True NEW" in lines
    assert "hbg False NEW" in lines
    assert "generation 0" in lines  # the probe minted no generation: no init happened
    assert "device None 0 0" in lines  # no device selected or memory taken
    assert "init-after-probe ok" in lines


def test_probe_of_a_missing_build_names_the_path(tmp_path):
    w = Worker(level=2, execution_mode="kernel", lib_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        w.kernel_mode_supported
    with pytest.raises(FileNotFoundError):  # errors are not cached
        w.kernel_mode_supported


def test_gc_pin_warns_and_pins_without_finalizing():
    result = run_python("""
        import gc, warnings
        from simpler import Worker, sim
        import simpler.worker as sw
        from simpler.task_interface import CallConfig
        sim.set_device(0)
        w = Worker(level=2, execution_mode="kernel")
        w.init(config=CallConfig())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            del w
            gc.collect()
        print("warned", any(issubclass(c.category, ResourceWarning) and
                            "garbage-collected without close" in str(c.message) for c in caught))
        print("pinned", len(sw._PINNED), sw._PINNED[0].committed_device_memory() > 0,
              sw._PINNED[0].state)
        # a failed init arms nothing
        rival = Worker(level=2, execution_mode="kernel")
        try:
            rival.init(config=CallConfig())
        except Exception as e:
            print("rival refused", type(e).__name__)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            del rival
            gc.collect()
        print("rival warnings", len([c for c in caught if issubclass(c.category, ResourceWarning)]))
        # a closed worker disarms the pin
        sim.set_device(1)
        ok = Worker(level=2, execution_mode="kernel", device_id=1)
        ok.init(config=CallConfig()); ok.close()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            del ok
            gc.collect()
        print("closed warnings", len([c for c in caught if issubclass(c.category, ResourceWarning)]),
              len(sw._PINNED))
        import os; os._exit(0)
    """)
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert "warned True" in out
    assert "pinned 1 True READY" in out
    assert "rival refused ChipWorkerError" in out
    assert "rival warnings 0" in out
    assert "closed warnings 0 1" in out


def test_worker_alive_at_exit_warns():
    result = run_python("""
        from simpler import Worker, sim
        from simpler.task_interface import CallConfig
        sim.set_device(2)
        keep = Worker(level=2, execution_mode="kernel", device_id=2)
        keep.init(config=CallConfig())
        print("exiting")
    """)
    assert "exiting" in result.stdout
    assert "ResourceWarning" in result.stderr and "garbage-collected without close" in result.stderr


def test_fork_fence(add_scalar_callable):
    sim.set_device(0)
    stream = sim.Stream()
    x = np.arange(64, dtype=np.float32)
    dx, dy = sim.malloc(x.nbytes), sim.malloc(x.nbytes)
    sim.memcpy_htod(dx, x)
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.make(dx, (64,), DataType.FLOAT32))
    args.add_tensor(ChipTensor.make(dy, (64,), DataType.FLOAT32))
    args.add_scalar_f32(1.0)
    w = Worker(level=2, execution_mode="kernel")
    w.init(config=CallConfig())
    try:
        cid = w.kernel_prepare_callable(add_scalar_callable)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork of a threaded process
            pid = os.fork()
        if pid == 0:
            code = 0
            for i, call in enumerate((lambda: w.kernel_launch(cid, args, caller_stream=stream),
                                      lambda: w.kernel_prepare_callable(add_scalar_callable),
                                      w.close)):
                try:
                    call()
                    code |= 1 << i
                except RuntimeError as e:
                    if "must not drive or tear it down" not in str(e):
                        code |= 1 << i
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        w.kernel_launch(cid, args, caller_stream=stream)
        stream.synchronize()
        y = np.empty_like(x)
        sim.memcpy_dtoh(y, dy)
        np.testing.assert_array_equal(y, x + 1)
    finally:
        w.close()
        sim.free(dx)
        sim.free(dy)
        stream.destroy()


DOCUMENTED_REFUSALS = ("a kernel prepare/launch/close is in progress",
                       "requires an initialized (READY) worker")


def test_concurrency_stress_launch_prepare_close(add_scalar_callable):
    sim.set_device(0)
    stream = sim.Stream()
    n = 256
    x = np.arange(n, dtype=np.float32)
    dx, dy = sim.malloc(x.nbytes), sim.malloc(x.nbytes)
    sim.memcpy_htod(dx, x)
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.make(dx, (n,), DataType.FLOAT32))
    args.add_tensor(ChipTensor.make(dy, (n,), DataType.FLOAT32))
    args.add_scalar_f32(2.0)
    w = Worker(level=2, execution_mode="kernel")
    w.init(config=CallConfig())
    cid = w.kernel_prepare_callable(add_scalar_callable)
    unexpected = []
    counts = {"launched": 0, "prepared": 0, "refused": 0}
    stop = threading.Event()

    def guarded(fn, key):
        while not stop.is_set():
            try:
                fn()
                counts[key] += 1
            except RuntimeError as e:
                if not any(s in str(e) for s in DOCUMENTED_REFUSALS):
                    unexpected.append(repr(e))
                counts["refused"] += 1
                if w.state == "CLOSED":
                    return

    launcher = threading.Thread(
        target=guarded, args=(lambda: w.kernel_launch(cid, args, caller_stream=stream), "launched"))
    preparer = threading.Thread(
        target=guarded, args=(lambda: w.kernel_prepare_callable(add_scalar_callable), "prepared"))
    launcher.start()
    preparer.start()
    deadline = time.monotonic() + 10
    while (counts["launched"] < 20 or counts["prepared"] < 3) and time.monotonic() < deadline:
        time.sleep(0.01)
    closed = False
    from simpler.errors import ChipWorkerError
    try:
        w.close()  # on the init thread, racing the launcher and the preparer
        closed = True
    except ChipWorkerError as e:  # launched work unfinished: documented BUSY refusal
        assert "PTO_RUNTIME_ERR_INVALID_STATE" in str(e)
    stop.set()
    launcher.join(30)
    preparer.join(30)
    stream.synchronize()
    if not closed:
        w.close()
    assert not unexpected, unexpected
    assert counts["launched"] >= 1
    assert w.committed_device_memory() == 0
    y = np.empty_like(x)
    sim.memcpy_dtoh(y, dy)
    np.testing.assert_array_equal(y, x + 2)
    sim.free(dx)
    sim.free(dy)
    stream.destroy()


class Fake:
    """The fake runtime build of tests/worker/core, driven through its test hook."""

    def __init__(self, lib_dir):
        path = lib_dir / "runtimes" / "a2a3sim" / "tensormap_and_ringbuffer" / "libhost_runtime.so"
        self.lib = ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        self.lib.fake_runtime_set.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.lib.fake_runtime_wait_launch_in_progress.argtypes = [ctypes.c_int]
        self.lib.fake_runtime_reset()

    def set(self, field, value):
        self.lib.fake_runtime_set(field.encode(), value)


def test_close_past_the_grace_period_raises_timeout_and_keeps_the_context(fake_lib_dir, add_scalar_callable):
    fake = Fake(fake_lib_dir)
    w = Worker(level=2, execution_mode="kernel", lib_dir=fake_lib_dir)
    w.init(config=CallConfig())
    cid = w.kernel_prepare_callable(add_scalar_callable)
    fake.set("launches_blocked", 1)
    launcher = threading.Thread(target=lambda: w.kernel_launch(cid, ChipStorageTaskArgs(), caller_stream=0x10))
    launcher.start()
    try:
        assert fake.lib.fake_runtime_wait_launch_in_progress(10000) == 1
        with pytest.raises(RuntimeError, match="a kernel prepare/launch/close is in progress"):
            w.kernel_launch(cid, ChipStorageTaskArgs(), caller_stream=0x10)
        w.close_grace = 0.05
        with pytest.raises(TimeoutError, match="grace period"):
            w.close()
        assert w.state == "CLOSED" and w.committed_device_memory() > 0
    finally:
        fake.set("launches_blocked", 0)
        launcher.join(30)
    w.close()
    assert w.committed_device_memory() == 0


def test_close_waits_for_a_blocked_launch_within_the_grace(fake_lib_dir, add_scalar_callable):
    fake = Fake(fake_lib_dir)
    w = Worker(level=2, execution_mode="kernel", lib_dir=fake_lib_dir)
    w.init(config=CallConfig())
    cid = w.kernel_prepare_callable(add_scalar_callable)
    fake.set("launches_blocked", 1)
    launcher = threading.Thread(target=lambda: w.kernel_launch(cid, ChipStorageTaskArgs(), caller_stream=0x10))
    launcher.start()
    assert fake.lib.fake_runtime_wait_launch_in_progress(10000) == 1

    def release_once_closed():
        while w.state != "CLOSED":
            time.sleep(0.001)
        fake.set("launches_blocked", 0)

    releaser = threading.Thread(target=release_once_closed)
    releaser.start()
    w.close()  # CLOSED is published first; the launch finishes; then the teardown
    releaser.join(30)
    launcher.join(30)
    assert w.committed_device_memory() == 0
    gc.collect()


def test_prepare_from_another_thread_grows_the_arena_on_the_contexts_device(add_scalar_callable):
    # The code arena grows by a device allocation when its block is full; that allocation
    # is on the context's device even when the preparing thread has no current device.
    sim.set_device(0)
    w = Worker(level=2, execution_mode="kernel", device_id=0)
    w.init(config=CallConfig())
    try:
        start = w.committed_device_memory()
        per_image = len(add_scalar_callable)
        errors = []

        def prepare_until_a_new_block():
            try:
                for _ in range((4 << 20) // per_image + 8):  # past one 4 MiB block
                    w.kernel_prepare_callable(add_scalar_callable)
                    if w.committed_device_memory() > start:
                        return
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        t = threading.Thread(target=prepare_until_a_new_block)
        t.start()
        t.join(120)
        assert not errors, errors
        assert w.committed_device_memory() > start, "the arena never grew"
    finally:
        w.close()
