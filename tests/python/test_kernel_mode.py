"""Kernel mode through the real path (issue 5 tests): simpler.Worker on a2a3sim +
tensormap_and_ringbuffer, the framework side played by simpler.sim."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from simpler import Worker, sim
from simpler.errors import (PTO_RUNTIME_ERR_INVALID_ARGUMENT, PTO_RUNTIME_ERR_INVALID_STATE,
                            ChipWorkerError, UnsupportedRuntimeOperation)
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor, DataType

from conftest import PROGRAMS, run_in_thread

N = 16384


def kernel_worker(device_id=0, runtime="tensormap_and_ringbuffer"):
    return Worker(level=2, execution_mode="kernel", device_id=device_id,
                  platform="a2a3sim", runtime=runtime)


class DeviceTensors:
    """The framework's device tensors: x (random), and outputs it allocates itself."""

    def __init__(self, n=N, outputs=1, seed=0):
        self.x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
        self.dx = sim.malloc(self.x.nbytes)
        sim.memcpy_htod(self.dx, self.x)
        self.dys = [sim.malloc(self.x.nbytes) for _ in range(outputs)]
        for dy in self.dys:
            sim.memset(dy, 0, self.x.nbytes)

    def args(self, out=0, scalar=1.5):
        a = ChipStorageTaskArgs()
        a.add_tensor(ChipTensor.make(self.dx, (len(self.x),), DataType.FLOAT32))
        a.add_tensor(ChipTensor.make(self.dys[out], (len(self.x),), DataType.FLOAT32))
        a.add_scalar_f32(scalar)
        return a

    def output(self, out=0):
        y = np.empty_like(self.x)
        sim.memcpy_dtoh(y, self.dys[out])
        return y

    def free(self):
        for p in [self.dx, *self.dys]:
            sim.free(p)


@pytest.fixture
def device0():
    sim.set_device(0)
    stream = sim.Stream()
    tensors = DeviceTensors(outputs=2)
    yield stream, tensors
    stream.synchronize()
    tensors.free()
    stream.destroy()


def test_numerics_on_caller_stream_without_sync_switch_or_reset(device0, add_scalar_callable):
    stream, t = device0
    sim.reset_counters()
    w = kernel_worker()
    assert w.kernel_mode_supported
    w.init(config=CallConfig())
    committed = w.committed_device_memory()
    assert committed > 0
    cid = w.kernel_prepare_callable(add_scalar_callable)
    w.kernel_launch(cid, t.args(out=0, scalar=1.5), caller_stream=stream.handle)
    w.kernel_launch(cid, t.args(out=1, scalar=-2.25), caller_stream=stream)  # object with .handle
    assert w.committed_device_memory() == committed  # launches commit nothing
    stream.synchronize()  # the caller's own (and only) synchronize
    np.testing.assert_array_equal(t.output(0), t.x + np.float32(1.5))
    np.testing.assert_array_equal(t.output(1), t.x + np.float32(-2.25))
    w.close()
    assert w.committed_device_memory() == 0
    assert sim.call_count("stream_synchronize") == 1
    assert sim.call_count("set_device") == 0
    assert sim.call_count("device_reset") == 0
    assert sim.get_device() == 0


def test_same_callable_prepared_twice_gives_two_working_ids(device0, add_scalar_callable):
    stream, t = device0
    w = kernel_worker()
    w.init(config=CallConfig())
    try:
        first = w.kernel_prepare_callable(add_scalar_callable)
        second = w.kernel_prepare_callable(add_scalar_callable)
        assert first != second
        w.kernel_launch(second, t.args(out=1, scalar=3.0), caller_stream=stream)
        w.kernel_launch(first, t.args(out=0, scalar=4.0), caller_stream=stream)
        stream.synchronize()
        np.testing.assert_array_equal(t.output(1), t.x + np.float32(3.0))
        np.testing.assert_array_equal(t.output(0), t.x + np.float32(4.0))
    finally:
        w.close()


def test_launch_refusals_leave_nothing_enqueued(device0, add_scalar_callable):
    stream, t = device0
    w = kernel_worker()
    w.init(config=CallConfig())
    try:
        cid = w.kernel_prepare_callable(add_scalar_callable)
        args = t.args(out=0, scalar=0.5)
        bad = ChipStorageTaskArgs()  # disagrees with the signature: one tensor only
        bad.add_tensor(ChipTensor.make(t.dx, (N,), DataType.FLOAT32))
        sim.reset_counters()
        with pytest.raises(ValueError, match="not returned by this Worker"):
            w.kernel_launch(cid + 1000, args, caller_stream=stream)
        with pytest.raises(ValueError, match="caller_stream"):
            w.kernel_launch(cid, args, caller_stream=0)
        with pytest.raises(TypeError, match="ChipStorageTaskArgs"):
            w.kernel_launch(cid, [1, 2], caller_stream=stream)
        with pytest.raises(TypeError, match="callable_id"):
            w.kernel_launch(float(cid), args, caller_stream=stream)
        with pytest.raises(TypeError):
            w.kernel_launch(cid, args, stream.handle)  # caller_stream is keyword-only
        with pytest.raises(ChipWorkerError) as err:
            w.kernel_launch(cid, bad, caller_stream=stream)
        assert err.value.code == PTO_RUNTIME_ERR_INVALID_ARGUMENT
        assert sim.call_count("launch") == 0 and sim.call_count("host_func") == 0
        assert stream.query()  # idle: nothing was enqueued
        w.kernel_launch(cid, args, caller_stream=stream)
        stream.synchronize()
        np.testing.assert_array_equal(t.output(0), t.x + np.float32(0.5))
    finally:
        w.close()


def test_second_kernel_worker_on_a_device_is_refused_until_the_owner_closes(device0, add_scalar_callable):
    stream, t = device0
    owner = kernel_worker()
    owner.init(config=CallConfig())
    rival = kernel_worker()
    with pytest.raises(ChipWorkerError) as err:
        rival.init(config=CallConfig())
    assert err.value.code == PTO_RUNTIME_ERR_INVALID_STATE
    assert rival.state == "FAILED"
    assert rival.committed_device_memory() == 0
    cid = owner.kernel_prepare_callable(add_scalar_callable)
    owner.kernel_launch(cid, t.args(out=0, scalar=1.0), caller_stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(t.output(0), t.x + np.float32(1.0))
    owner.close()
    rival.close()  # FAILED -> CLOSED, nothing to release
    successor = kernel_worker()
    successor.init(config=CallConfig())
    assert successor.state == "READY"
    successor.close()


def test_hbg_refuses_kernel_mode_and_leaves_the_stream_fine(device0):
    stream, _ = device0
    w = kernel_worker(runtime="host_build_graph")
    assert w.kernel_mode_supported is False
    with pytest.raises(UnsupportedRuntimeOperation, match="kernel mode") as err:
        w.init(config=CallConfig())
    assert isinstance(err.value, NotImplementedError)
    assert w.state == "FAILED"
    stream.synchronize()
    assert stream.query()
    w.close()


def test_init_refused_without_the_device_current_and_device_unchanged():
    def no_device():
        w = kernel_worker(device_id=0)
        with pytest.raises(ChipWorkerError) as err:
            w.init(config=CallConfig())
        assert err.value.code == PTO_RUNTIME_ERR_INVALID_STATE
        assert sim.get_device() is None
        return w.state

    def other_device():
        sim.set_device(1)
        w = kernel_worker(device_id=0)
        with pytest.raises(ChipWorkerError):
            w.init(config=CallConfig())
        assert sim.get_device() == 1
        return w.state

    assert run_in_thread(no_device) == "FAILED"
    assert run_in_thread(other_device) == "FAILED"


def test_init_argument_rules():
    sim.set_device(0)
    w = kernel_worker()
    with pytest.raises(ValueError, match=r"config=CallConfig\(\.\.\.\)"):
        w.init()
    with pytest.raises(ValueError, match="prewarm_config"):
        w.init(CallConfig())  # positional binds to prewarm_config
    with pytest.raises(ValueError):
        w.init(CallConfig(), config=CallConfig())
    with pytest.raises(ValueError):
        w.init(config=CallConfig(enable_swimlane=True))  # validate() first: no output_prefix
    assert w.state == "NEW"
    w.init(config=CallConfig())
    assert w.state == "READY"
    w.close()
    with pytest.raises(RuntimeError):
        w.init(config=CallConfig())
    program = Worker(level=2)
    with pytest.raises(ValueError, match="config="):
        program.init(config=CallConfig())


def test_construction_rules_touch_nothing():
    with pytest.raises(ValueError, match="execution_mode"):
        Worker(level=2, execution_mode="graph")
    with pytest.raises(ValueError, match="level 2 only"):
        Worker(level=3, execution_mode="kernel")
    with pytest.raises(ValueError, match="level 2 only"):
        Worker(level=4, execution_mode="kernel")
    with pytest.raises(ValueError):
        Worker(level=1, execution_mode="kernel")
    with pytest.raises(ValueError, match="enable_sdma"):
        Worker(level=2, execution_mode="kernel", enable_sdma=True)
    w = kernel_worker()
    assert w.state == "NEW" and w.committed_device_memory() == 0


def test_mode_exclusion_both_ways(add_scalar_callable):
    sim.set_device(0)
    w = kernel_worker()
    with pytest.raises(RuntimeError, match=r"^Worker.register: requires execution_mode='program'$"):
        w.register(add_scalar_callable)
    w.init(config=CallConfig())
    buf = np.zeros(4, dtype=np.float32)
    calls = {
        "unregister": lambda: w.unregister(None), "submit": lambda: w.submit(None),
        "run": lambda: w.run(None), "malloc": lambda: w.malloc(16), "free": lambda: w.free(16),
        "copy_to": lambda: w.copy_to(16, buf), "copy_from": lambda: w.copy_from(buf, 16),
        "create_buffer": lambda: w.create_buffer(16),
        "make_tensor_arg": lambda: w.make_tensor_arg(buf),
        "release_buffer": lambda: w.release_buffer(buf),
        "device_memory_info": lambda: w.device_memory_info(),
    }
    for api, call in calls.items():
        with pytest.raises(RuntimeError, match=rf"^Worker.{api}: requires execution_mode='program'$"):
            call()
    assert w.committed_device_memory() > 0
    w.close()
    program = Worker(level=2)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="requires execution_mode='kernel'"):
            program.kernel_prepare_callable(add_scalar_callable)
        with pytest.raises(RuntimeError, match="requires execution_mode='kernel'"):
            program.kernel_launch(0, ChipStorageTaskArgs(), caller_stream=1)
        if program.state == "NEW":
            program.init()
    program.close()


def test_prepare_and_launch_need_ready_and_type_checks(add_scalar_callable):
    sim.set_device(0)
    w = kernel_worker()
    with pytest.raises(RuntimeError, match=r"requires an initialized \(READY\) worker"):
        w.kernel_prepare_callable(add_scalar_callable)
    w.init(config=CallConfig())
    try:
        with pytest.raises(TypeError, match="ChipCallable"):
            w.kernel_prepare_callable(b"not a callable")
    finally:
        w.close()
    with pytest.raises(RuntimeError, match=r"requires an initialized \(READY\) worker"):
        w.kernel_launch(0, ChipStorageTaskArgs(), caller_stream=1)


def test_teardown_failure_then_successful_retry(device0, add_scalar_callable):
    stream, t = device0
    w = kernel_worker()
    w.init(config=CallConfig())
    cid = w.kernel_prepare_callable(add_scalar_callable)
    sim.inject_fault("free", 1)
    try:
        with pytest.raises(ChipWorkerError):
            w.close()
    finally:
        sim.clear_faults()
    assert w.state == "CLOSED"
    assert w.committed_device_memory() > 0  # kept for the retry
    with pytest.raises(RuntimeError):
        w.kernel_launch(cid, t.args(), caller_stream=stream)
    w.close()
    assert w.committed_device_memory() == 0


def test_failed_init_is_rolled_back(device0):
    sim.inject_fault("malloc", 1)
    w = kernel_worker()
    try:
        with pytest.raises(ChipWorkerError):
            w.init(config=CallConfig())
    finally:
        sim.clear_faults()
    assert w.state == "FAILED" and w.committed_device_memory() == 0
    w.close()
    again = kernel_worker()
    again.init(config=CallConfig())  # the device claim was released
    again.close()


def test_close_refused_while_launched_work_is_unfinished(device0, add_scalar_callable):
    stream, t = device0
    gate = threading.Event()
    w = kernel_worker()
    w.init(config=CallConfig())
    cid = w.kernel_prepare_callable(add_scalar_callable)
    stream.host_func(lambda: gate.wait(30))  # the device job queues behind this
    w.kernel_launch(cid, t.args(out=0, scalar=7.0), caller_stream=stream)
    with pytest.raises(ChipWorkerError) as err:
        w.close()
    assert err.value.code == PTO_RUNTIME_ERR_INVALID_STATE
    assert w.state == "CLOSED" and w.committed_device_memory() > 0
    gate.set()
    stream.synchronize()
    w.close()
    assert w.committed_device_memory() == 0
    np.testing.assert_array_equal(t.output(0), t.x + np.float32(7.0))


def test_unloadable_orchestration_poisons_the_context_which_still_closes(device0, add_scalar_callable, compiler):
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    stream, t = device0
    sig = [D.IN, D.OUT, D.SCALAR]
    kernel = CoreCallable.build(sig, compiler.compile_kernel(
        (PROGRAMS / "add_scalar_kernel.cpp").read_text(), "aiv"))
    garbage = ChipCallable.build(sig, "add_scalar_entry", b"\x7fELF but not really" * 8,
                                 children=[(0, kernel)])
    w = kernel_worker()
    w.init(config=CallConfig())
    good = w.kernel_prepare_callable(add_scalar_callable)
    with pytest.raises(ChipWorkerError):
        w.kernel_prepare_callable(garbage)
    with pytest.raises(ChipWorkerError) as err:
        w.kernel_prepare_callable(add_scalar_callable)
    assert err.value.code == PTO_RUNTIME_ERR_INVALID_STATE
    with pytest.raises(ChipWorkerError) as err:
        w.kernel_launch(good, t.args(), caller_stream=stream)
    assert err.value.code == PTO_RUNTIME_ERR_INVALID_STATE
    w.close()
    assert w.committed_device_memory() == 0


def test_close_only_on_the_init_thread(device0):
    w = kernel_worker()
    w.init(config=CallConfig())
    with pytest.raises(RuntimeError, match="thread that called init"):
        run_in_thread(w.close)
    assert w.state == "READY"
    w.close()
    w.close()  # idempotent
    assert w.state == "CLOSED"
