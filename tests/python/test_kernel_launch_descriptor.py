"""Worker.kernel_bind -> KernelLaunch (issue 11.2): validated and packed once, launched
cheaply, rebound with set_arg; every kernel-mode contract rule holds for it too."""
from __future__ import annotations

import os
import threading
import warnings

import numpy as np
import pytest

from simpler import KernelLaunch, Worker, sim
from simpler.errors import ArgumentError, ArgumentTypeError, SimplerRuntimeError, SimplerTypeError
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor, DataType

from test_kernel_mode_lifecycle import Fake

N = 2048


@pytest.fixture
def bound(add_scalar_kernel_worker):
    """(worker, cid, stream, x, dx, [dy0, dy1]) on device 0; everything released afterwards."""
    w, cid, stream = add_scalar_kernel_worker
    x = np.arange(N, dtype=np.float32)
    dx = sim.DeviceArray.from_numpy(x, stream=stream)
    dys = [sim.DeviceArray.zeros(N, np.float32, stream=stream) for _ in range(2)]
    return w, cid, stream, x, dx, dys


def test_bind_launch_and_rebind(bound):
    w, cid, stream, x, dx, dys = bound
    launch = w.kernel_bind(cid, dx, dys[0], 1.5)
    assert isinstance(launch, KernelLaunch) and launch.callable_id == cid and len(launch) == 3
    launch.launch(caller_stream=stream)
    launch.set_arg(1, dys[1])   # a new output buffer, no repacking of the rest
    launch.set_arg(2, -2.0)     # and a new scalar
    launch.launch(caller_stream=stream.handle)
    stream.synchronize()
    np.testing.assert_array_equal(dys[0].numpy(), x + 1.5)
    np.testing.assert_array_equal(dys[1].numpy(), x - 2)
    # The old argument form binds too; a list is the whole argument set.
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.make(dx.ptr, (N,), DataType.FLOAT32))
    args.add_tensor(ChipTensor.make(dys[0].ptr, (N,), DataType.FLOAT32))
    args.add_scalar_f32(7.0)
    w.kernel_bind(cid, args).launch(caller_stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(dys[0].numpy(), x + 7)
    w.kernel_bind(cid, [dx, dys[1], 0.0]).launch(caller_stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(dys[1].numpy(), x)


def test_bind_and_set_arg_refusals_change_nothing(bound):
    w, cid, stream, x, dx, dys = bound
    with pytest.raises(ArgumentTypeError, match="takes 3 arguments"):
        w.kernel_bind(cid, dx, dys[0])
    with pytest.raises(ArgumentError, match="argument 0 .*copy it to the device first"):
        w.kernel_bind(cid, x, dys[0], 1.0)
    with pytest.raises(ArgumentTypeError, match="ChipStorageTaskArgs hold 0 arguments"):
        w.kernel_bind(cid, ChipStorageTaskArgs())
    with pytest.raises(ValueError, match="not returned by this Worker"):
        w.kernel_bind(cid + 100, dx, dys[0], 1.0)
    with pytest.raises(TypeError, match="callable_id"):
        w.kernel_bind(float(cid), dx, dys[0], 1.0)
    launch = w.kernel_bind(cid, dx, dys[0], 3.0)
    with pytest.raises(ArgumentError, match="argument 1 .*copy it to the device first") as err:
        launch.set_arg(1, np.zeros(N, np.float32))
    assert err.value.index == 1
    with pytest.raises(ArgumentTypeError, match="argument 2"):
        launch.set_arg(2, dx)
    with pytest.raises(ArgumentError, match="out of range"):
        launch.set_arg(3, 1.0)
    with pytest.raises(ValueError, match="caller_stream"):
        launch.launch(caller_stream=0)
    with pytest.raises(TypeError):
        launch.launch(stream)  # caller_stream is keyword-only
    sim.reset_counters()
    launch.launch(caller_stream=stream)  # the refused rebinds left the bound args intact
    stream.synchronize()
    np.testing.assert_array_equal(dys[0].numpy(), x + 3)


def test_descriptor_is_refused_after_close_and_its_id_is_void(add_scalar_callable):
    sim.set_device(0)
    stream = sim.Stream()
    dx = sim.DeviceArray.zeros(N, np.float32)
    dy = sim.DeviceArray.zeros(N, np.float32)
    w = Worker(level=2, execution_mode="kernel", device_id=0)
    w.init(config=CallConfig())
    cid = w.kernel_prepare_callable(add_scalar_callable)
    launch = w.kernel_bind(cid, dx, dy, 1.0)
    stream.synchronize()
    w.close()
    sim.reset_counters()
    # Named as the API the user called, not the Worker method it goes through.
    with pytest.raises(SimplerRuntimeError,
                       match=r"^KernelLaunch\.launch: requires an initialized \(READY\) worker"):
        launch.launch(caller_stream=stream)
    with pytest.raises(SimplerRuntimeError,
                       match=r"^Worker\.kernel_bind: requires an initialized \(READY\) worker"):
        w.kernel_bind(cid, dx, dy, 1.0)
    assert sim.call_count("launch") == 0
    # A second worker's ids are not this descriptor's: a new worker mints its own.
    w2 = Worker(level=2, execution_mode="kernel", device_id=0)
    w2.init(config=CallConfig())
    try:
        with pytest.raises(RuntimeError, match="READY"):
            launch.launch(caller_stream=stream)
    finally:
        w2.close()
    stream.destroy()


def test_program_worker_refuses_kernel_bind():
    w = Worker(level=2)
    with pytest.raises(RuntimeError, match="requires execution_mode='kernel'"):
        w.kernel_bind(0, 1.0)


def test_descriptor_fork_fence(bound):
    w, cid, stream, x, dx, dys = bound
    launch = w.kernel_bind(cid, dx, dys[0], 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork of a threaded process
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            launch.launch(caller_stream=stream)
        except RuntimeError as e:
            ok = str(e).startswith("KernelLaunch.launch: ") and "must not drive" in str(e)
            code = 0 if ok else 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    launch.launch(caller_stream=stream)  # the parent carries on
    stream.synchronize()
    np.testing.assert_array_equal(dys[0].numpy(), x + 1)


def _bind_on_fake_runtime(fake_lib_dir, callable_):
    """(fake, worker, cid, dx, dy, launch): a kernel-mode Worker on the fake runtime, whose
    launches a test can hold inside the runtime, with a descriptor bound to device 0."""
    sim.set_device(0)
    dx = sim.DeviceArray.zeros(N, np.float32)
    dy = sim.DeviceArray.zeros(N, np.float32)
    fake = Fake(fake_lib_dir)
    w = Worker(level=2, execution_mode="kernel", lib_dir=fake_lib_dir)
    w.init(config=CallConfig())
    cid = w.kernel_prepare_callable(callable_)
    return fake, w, cid, dx, dy, w.kernel_bind(cid, dx, dy, 1.0)


def test_descriptor_launch_fails_fast_while_the_worker_lock_is_held(fake_lib_dir,
                                                                    add_scalar_callable):
    fake, w, cid, dx, dy, launch = _bind_on_fake_runtime(fake_lib_dir, add_scalar_callable)
    fake.set("launches_blocked", 1)
    other = threading.Thread(target=lambda: w.kernel_launch(cid, dx, dy, 1.0, caller_stream=0x10))
    other.start()
    try:
        assert fake.lib.fake_runtime_wait_launch_in_progress(10000) == 1
        with pytest.raises(RuntimeError,
                           match="^KernelLaunch.launch: a kernel prepare/launch/close is in progress"):
            launch.launch(caller_stream=0x10)
        with pytest.raises(RuntimeError, match="a kernel prepare/launch/close is in progress"):
            w.kernel_bind(cid, dx, dy, 1.0)
    finally:
        fake.set("launches_blocked", 0)
        other.join(30)
    launch.launch(caller_stream=0x10)
    w.close()


def test_descriptor_launch_releases_the_gil_around_the_native_launch(fake_lib_dir,
                                                                     add_scalar_callable):
    """While a descriptor's launch is inside the runtime, other Python threads run: a launch
    that kept the GIL would let this thread go on only after it returned."""
    fake, w, cid, dx, dy, launch = _bind_on_fake_runtime(fake_lib_dir, add_scalar_callable)
    returned = threading.Event()

    def launch_blocked() -> None:
        launch.launch(caller_stream=0x10)
        returned.set()

    fake.set("launches_blocked", 1)  # the fake's launch waits (at most 30 s) for the reset
    other = threading.Thread(target=launch_blocked)
    other.start()
    try:
        assert fake.lib.fake_runtime_wait_launch_in_progress(10000) == 1
        assert not returned.is_set(), "this thread ran only after the launch returned"
    finally:
        fake.set("launches_blocked", 0)
        other.join(30)
    assert returned.is_set()
    w.close()


def test_descriptor_launch_called_wrongly_is_a_simpler_type_error(bound):
    w, cid, stream, x, dx, dys = bound
    launch = w.kernel_bind(cid, dx, dys[0], 1.0)
    for call in (lambda: launch.launch(stream), launch.launch,
                 lambda: launch.launch(caller_stream=stream, extra=1)):
        with pytest.raises(SimplerTypeError, match="keyword-only argument: caller_stream="):
            call()


def test_calls_that_fit_no_signature_are_typed(bound):
    """set_arg with a missing or unknown argument, or KernelLaunch() itself: SimplerTypeError
    naming what did not fit (pybind11's plain TypeError before); launch keeps its own check."""
    w, cid, stream, x, dx, dys = bound
    launch = w.kernel_bind(cid, dx, dys[0], 1.0)
    cases = [
        (lambda: launch.set_arg(0), r"^KernelLaunch\.set_arg\(\): missing argument 'value'; "
                                    r"call it as set_arg\(index, value\)"),
        (lambda: launch.set_arg(0, 1.0, 2), r"takes 2 positional arguments, 3 given"),
        (lambda: launch.set_arg(index=0, val=1.0), r"unknown keyword 'val'"),
        (lambda: KernelLaunch.set_arg(5, 0, 1.0), r"self must be a KernelLaunch, got int"),
        (lambda: KernelLaunch(), r"^KernelLaunch\(\): has no constructor; make one with "
                                 r"Worker\.kernel_bind"),
    ]
    for call, words in cases:
        with pytest.raises(SimplerTypeError, match=words) as err:
            call()
        assert isinstance(err.value, TypeError) and err.value.code is not None
