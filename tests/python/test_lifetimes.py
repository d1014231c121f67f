"""200 open/use/close cycles of each worker kind leak nothing a framework embedding simpler
would see: threads, file descriptors, mappings, device memory. Each kind runs in a fresh
interpreter: other tests leave contexts abandoned on purpose (docs/faults.md)."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import simpler
from simpler import Worker, sim
from simpler.task_interface import (CallConfig, ChipStorageTaskArgs, ChipTensor, ChipWorker)

from conftest import PROGRAMS, run_in_thread

CYCLES = 200
X = np.arange(256, dtype=np.float32)


def _free_memory():
    def measure():
        out = []
        for device in (0, 1):
            sim.set_device(device)
            out.append(sim.mem_get_info()[0])
        return out
    return run_in_thread(measure)


def _counts():
    return (len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd")),
            sum(1 for _ in open("/proc/self/maps")))


def _settled(before):
    """The counts once threads that are exiting (run_in_thread's) are gone."""
    deadline = time.monotonic() + 5
    while True:
        gc.collect()
        now = _counts()
        if now[0] <= before[0] or time.monotonic() > deadline:
            return now
        time.sleep(0.01)


def _program(runtime, callable_):
    y = np.zeros_like(X)
    with Worker(level=2, device_id=0, runtime=runtime) as w:
        h = w.register(callable_)
        w.init()
        w.run(h, X, y, 1.0)
        w.submit(h, X, y, 2.0).wait()
    assert np.array_equal(y, X + 2)


def _level3(callable_):
    y = np.zeros_like(X)
    with Worker(level=3, device_ids=[0, 1]) as w:
        h = w.register(callable_)
        w.init()
        w.run(lambda o, _: (o.submit(h, X[:128], y[:128], 1.0, chip=0),
                            o.submit(h, X[128:], y[128:], 1.0, chip=1)))
    assert np.array_equal(y, X + 1)


def _chip_worker(callable_):
    cw = ChipWorker()
    cw.init(0, simpler.find_build("a2a3sim", "tensormap_and_ringbuffer"))
    y = np.zeros_like(X)
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.from_array(X))
    args.add_tensor(ChipTensor.from_array(y))
    args.add_scalar_f32(1.0)
    cw.run(cw.register(callable_), args)
    cw.free(cw.malloc(4096))
    cw.finalize()
    assert np.array_equal(y, X + 1)


def _kernel(callable_, stream):
    w = Worker(level=2, execution_mode="kernel", device_id=0)
    w.init(config=CallConfig())
    dx = sim.DeviceArray.from_numpy(X, stream=stream)
    dy = sim.DeviceArray.zeros(X.shape, stream=stream)
    w.kernel_launch(w.kernel_prepare_callable(callable_), dx, dy, 1.0, caller_stream=stream)
    stream.synchronize()
    w.close()
    assert np.array_equal(dy.numpy(), X + 1)


KINDS = ["program-tensormap", "program-host_build_graph", "level3", "chip_worker", "kernel"]


@pytest.mark.parametrize("kind", KINDS)
def test_open_use_close_cycles_leak_nothing(kind):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    try:
        r = subprocess.run([sys.executable, __file__, kind], capture_output=True, text=True,
                           timeout=120, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{CYCLES} cycles of {kind} did not finish within 120 s")
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr[-3000:]


def _cycles(kind, add_scalar_callable):
    stream = None
    if kind == "kernel":
        sim.set_device(0)
        stream = sim.Stream()
    cycle = {
        "program-tensormap": lambda: _program("tensormap_and_ringbuffer", add_scalar_callable),
        "program-host_build_graph": lambda: _program("host_build_graph", add_scalar_callable),
        "level3": lambda: _level3(add_scalar_callable),
        "chip_worker": lambda: _chip_worker(add_scalar_callable),
        "kernel": lambda: _kernel(add_scalar_callable, stream),
    }[kind]
    try:
        for _ in range(3):  # first-use caches (loaded libraries, the log thread)
            cycle()
        memory = _free_memory()
        before = _settled(_counts())
        for _ in range(CYCLES):
            cycle()
        threads, fds, maps = _settled(before)
        assert threads <= before[0] and fds <= before[1], (before, (threads, fds, maps))
        # ASan's allocator maps more regions as its quarantine fills: no mapping count there.
        if "libasan" not in os.environ.get("LD_PRELOAD", ""):
            assert maps <= before[2] + 8, (before, maps)  # one leaked mapping a cycle is 200
        assert _free_memory() == memory
    finally:
        if stream is not None:
            gc.collect()
            stream.destroy()
    print("OK", flush=True)


if __name__ == "__main__":
    from simpler import KernelCompiler
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    compiler = KernelCompiler()
    sig = [D.IN, D.OUT, D.SCALAR]
    kernel = CoreCallable.build(sig, compiler.compile_kernel(
        (PROGRAMS / "add_scalar_kernel.cpp").read_text(), "aiv"))
    orch = compiler.compile_orchestration((PROGRAMS / "add_scalar_orch.cpp").read_text(),
                                          entry="add_scalar_entry")
    _cycles(sys.argv[1], ChipCallable.build(sig, "add_scalar_entry", orch, children=[(0, kernel)]))
