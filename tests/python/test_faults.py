"""Faults and hangs of user code (issues 13 and 16): a kernel or orchestration that
dereferences NULL, divides by zero or calls abort() fails its run with a typed error and
poisons the context (only close() is allowed); with CallConfig(watchdog_timeout_ms=N) a
kernel that never returns is timed out within a bound. The process lives, close() is
prompt, and a fresh Worker works afterwards."""
from __future__ import annotations

import time

import numpy as np
import pytest

from simpler import Worker, sim
from simpler.errors import (SIMPLER_CHIP_ERR_KERNEL_FAULT, SIMPLER_CHIP_ERR_ORCH_FATAL,
                            SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT, ChipWorkerError,
                            KernelFaultError, KernelTimeoutError, SimError)
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor, DataType

NULL_DEREF, ABORT, DIVIDE_BY_ZERO, NEVER_RETURN, FINE = 0, 1, 2, 3, 99
KERNEL, ORCHESTRATION = 0, 1


def crash_args(tensor, how, who=KERNEL):
    args = ChipStorageTaskArgs()
    args.add_tensor(tensor)
    args.add_scalar(how)
    args.add_scalar(who)
    return args


def program_worker(device_id=2, **init):
    w = Worker(level=2, device_id=device_id)
    w.init(**init)
    return w


def expect_fresh_worker_works(callable_, device_id=2):
    with program_worker(device_id) as w:
        h = w.register(callable_)
        x = np.zeros(4, dtype=np.float32)
        w.run(h, crash_args(w.make_tensor_arg(x), FINE))
        assert x[0] == 1.0


def expect_poisoned_then_closes(w, h, x, code):
    """Every later use is refused with the same status; close() is prompt."""
    with pytest.raises(ChipWorkerError, match="failed earlier") as again:
        w.run(h, crash_args(w.make_tensor_arg(x), FINE))
    assert again.value.code == code
    with pytest.raises(ChipWorkerError, match="failed earlier"):
        w.malloc(64)
    start = time.monotonic()
    w.close()
    assert time.monotonic() - start < 5
    assert w.state == "CLOSED"


@pytest.mark.parametrize("how,signal", [(NULL_DEREF, "SIGSEGV"), (ABORT, "SIGABRT"),
                                        (DIVIDE_BY_ZERO, "SIGFPE")])
def test_a_crashing_kernel_fails_the_run_and_the_process_lives(crash_callable, how, signal):
    w = program_worker()
    h = w.register(crash_callable)
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(KernelFaultError) as err:
        w.run(h, crash_args(w.make_tensor_arg(x), how))
    e = err.value
    assert e.code == SIMPLER_CHIP_ERR_KERNEL_FAULT
    msg = str(e)
    assert signal in msg
    assert "kernel func_id 0" in msg
    assert "task 0 (the 1st task the orchestration submitted)" in msg
    if how == NULL_DEREF:
        assert "address 0x0" in msg
    # One status name, no "1 tensors", no engine-internal task ids and no stacked layer
    # prefixes ("ChipWorker.run: the run failed: finalize_run: ..."): the runtime's message.
    assert msg.count("SIMPLER_CHIP_ERR_KERNEL_FAULT") == 1, msg
    assert "task 2" not in msg
    assert msg.startswith("kernel func_id 0 crashed with " + signal), msg
    for layer in ("the run failed", "finalize_run", "simpler_run", "ChipWorker", ": run:"):
        assert layer not in msg, msg
    expect_poisoned_then_closes(w, h, x, SIMPLER_CHIP_ERR_KERNEL_FAULT)
    expect_fresh_worker_works(crash_callable)


@pytest.mark.parametrize("how,signal", [(NULL_DEREF, "SIGSEGV"), (ABORT, "SIGABRT")])
def test_a_crashing_orchestration_fails_the_run(crash_callable, how, signal):
    w = program_worker()
    h = w.register(crash_callable)
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(ChipWorkerError) as err:
        w.run(h, crash_args(w.make_tensor_arg(x), how, ORCHESTRATION))
    assert err.value.code == SIMPLER_CHIP_ERR_ORCH_FATAL
    msg = str(err.value)
    assert msg.startswith(f"the orchestration 'crash_entry' crashed with {signal}"), msg
    assert msg.count("SIMPLER_CHIP_ERR_ORCH_FATAL") == 1 and "the run failed" not in msg, msg
    expect_poisoned_then_closes(w, h, x, SIMPLER_CHIP_ERR_ORCH_FATAL)
    expect_fresh_worker_works(crash_callable)


def test_the_watchdog_times_out_a_kernel_that_never_returns(crash_callable):
    w = program_worker(prewarm_config=CallConfig(watchdog_timeout_ms=300))
    h = w.register(crash_callable)
    x = np.zeros(4, dtype=np.float32)
    start = time.monotonic()
    with pytest.raises(KernelTimeoutError) as err:
        w.run(h, crash_args(w.make_tensor_arg(x), NEVER_RETURN))
    assert time.monotonic() - start < 5, "the timeout is not bounded"
    e = err.value
    assert isinstance(e, TimeoutError) and e.code == SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT
    for part in ("watchdog", "kernel func_id 0", "task 0", "AIV core",
                 "watchdog_timeout_ms=300"):
        assert part in str(e)
    assert str(e).startswith("watchdog: kernel func_id 0 in task 0"), str(e)
    expect_poisoned_then_closes(w, h, x, SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT)
    expect_fresh_worker_works(crash_callable)


def test_a_per_run_watchdog_and_a_hanging_orchestration(crash_callable):
    w = program_worker()
    h = w.register(crash_callable)
    x = np.zeros(4, dtype=np.float32)
    # A run's own watchdog is that run's: a healthy run with one leaves none behind.
    w.run(h, crash_args(w.make_tensor_arg(x), FINE), config=CallConfig(watchdog_timeout_ms=5000))
    assert x[0] == 1.0
    run = w.submit(h, crash_args(w.make_tensor_arg(x), NEVER_RETURN, ORCHESTRATION),
                   config=CallConfig(watchdog_timeout_ms=200))
    with pytest.raises(KernelTimeoutError, match="orchestration 'crash_entry' made no runtime"):
        run.wait(timeout=10)
    w.close()
    expect_fresh_worker_works(crash_callable)


def test_kernel_mode_a_crash_is_on_the_stream_and_poisons_the_context(crash_callable):
    sim.set_device(3)
    stream = sim.Stream()
    dx = sim.malloc(64)
    sim.memset(dx, 0, 64)
    tensor = ChipTensor.make(dx, (16,), DataType.FLOAT32)
    w = Worker(level=2, execution_mode="kernel", device_id=3)
    w.init(config=CallConfig())
    cid = w.kernel_prepare_callable(crash_callable)
    w.kernel_launch(cid, crash_args(tensor, NULL_DEREF), caller_stream=stream)
    with pytest.raises(KernelFaultError) as err:   # the class program mode raises
        stream.synchronize()
    assert isinstance(err.value, SimError)         # what a stream raised before
    assert err.value.code == SIMPLER_CHIP_ERR_KERNEL_FAULT
    msg = str(err.value)
    assert "SIGSEGV" in msg and "kernel func_id 0" in msg, msg
    assert "task 0 (the 1st task the orchestration submitted)" in msg, msg
    assert msg.count("SIMPLER_CHIP_ERR_KERNEL_FAULT") == 1, msg
    with pytest.raises(KernelFaultError, match="failed earlier") as again:
        w.kernel_launch(cid, crash_args(tensor, FINE), caller_stream=stream)
    # One prefix, the API called (docs/faults.md), not the layer underneath.
    assert str(again.value).startswith(f"Worker.kernel_launch: callable {cid}: "), again.value
    assert "ChipWorker" not in str(again.value), again.value
    w.close()
    stream.destroy()
    sim.free(dx)


def test_kernel_mode_watchdog_fails_the_callers_stream(crash_callable):
    sim.set_device(3)
    stream = sim.Stream()
    dx = sim.malloc(64)
    tensor = ChipTensor.make(dx, (16,), DataType.FLOAT32)
    w = Worker(level=2, execution_mode="kernel", device_id=3)
    w.init(config=CallConfig(watchdog_timeout_ms=200))
    cid = w.kernel_prepare_callable(crash_callable)
    w.kernel_launch(cid, crash_args(tensor, NEVER_RETURN), caller_stream=stream)
    start = time.monotonic()
    with pytest.raises(KernelTimeoutError) as err:   # the class program mode raises
        stream.synchronize()
    assert time.monotonic() - start < 5
    assert isinstance(err.value, SimError) and isinstance(err.value, TimeoutError)
    assert err.value.code == SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT
    # The kernel, never the orchestration: the watchdog blames only user code that has
    # itself run the timeout (a late start of the orchestration's thread under load is not).
    assert str(err.value).startswith("Stream.synchronize: kernel launch of callable 0: "
                                     "watchdog: kernel func_id 0 in task 0"), str(err.value)
    w.close()
    stream.destroy()
    sim.free(dx)
