"""Every public object has a repr that says what it is and its state, never Python's
default '<... object at 0x...>' (an object in a log line or a debugger must be readable)."""
from __future__ import annotations

import numpy as np

from simpler import KernelCompiler, Worker, sim
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor


def _readable(obj) -> str:
    text = repr(obj)
    assert " object at 0x" not in text, text
    return text


def test_public_objects_have_readable_reprs(add_scalar_callable):
    sim.set_device(0)
    assert "KernelCompiler" in _readable(KernelCompiler())
    x = np.arange(8, dtype=np.float32)
    with Worker() as worker, sim.Stream() as stream:
        assert "state=NEW" in _readable(worker)
        worker.init()
        handle = worker.register(add_scalar_callable)
        _readable(handle)
        run = worker.submit(handle, x, np.zeros_like(x), 1.0)
        run.wait()
        assert _readable(run) == "<simpler.RunHandle done>"
        _readable(stream)
        _readable(sim.Event())
        _readable(sim.DeviceArray((4,), np.float32, stream=stream))
        _readable(CallConfig())
        _readable(ChipTensor.from_array(x))
        _readable(ChipStorageTaskArgs())
    assert "state=CLOSED" in _readable(worker)


def test_a_level3_run_handle_says_whether_it_is_done():
    # It said "<simpler.RunHandle unknown>" (level 2's repr reads a native handle).
    import threading
    gate = threading.Event()
    with Worker(level=3, device_ids=[1]) as worker:
        worker.init()
        run = worker.submit(lambda o, a: gate.wait(30))
        assert _readable(run) == "<simpler.RunHandle running>"
        gate.set()
        run.wait(30)
        assert _readable(run) == "<simpler.RunHandle done>"
