"""Worker(level=2) in program mode (issue 4 tests) on a2a3sim + tensormap_and_ringbuffer."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from simpler import RunHandle, Worker
from simpler import _native
from simpler.errors import ChipWorkerError
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor, DataType
import simpler.errors as errors

SIMPLER_CHIP_ERR_ORCH_FATAL = _native.SIMPLER_CHIP_ERR_ORCH_FATAL


def add_args(worker, x, y, scalar):
    args = ChipStorageTaskArgs()
    args.add_tensor(worker.make_tensor_arg(x))
    args.add_tensor(worker.make_tensor_arg(y))
    args.add_scalar_f32(scalar)
    return args


@pytest.fixture
def worker():
    w = Worker(level=2, device_id=1)
    yield w
    w.close()


def test_register_before_init_run_and_results(worker, add_scalar_callable):
    handle = worker.register(add_scalar_callable)
    x = np.linspace(-3, 3, 1024, dtype=np.float32)
    y = np.zeros_like(x)
    with pytest.raises(RuntimeError, match=r"requires an initialized \(READY\) worker"):
        worker.run(handle)
    worker.init()
    assert worker.state == "READY"
    worker.run(handle, add_args(worker, x, y, 0.5))
    np.testing.assert_array_equal(y, x + np.float32(0.5))
    late = worker.register(add_scalar_callable)  # after init
    worker.run(late, add_args(worker, x, y, 2.0))
    np.testing.assert_array_equal(y, x + np.float32(2.0))
    worker.unregister(late)
    with pytest.raises(ValueError, match="unknown callable handle"):
        worker.run(late, add_args(worker, x, y, 2.0))


def test_failed_run_reports_its_named_status(worker, fatal_callable):
    worker.init()
    handle = worker.register(fatal_callable)
    x = np.zeros(16, dtype=np.float32)
    y = np.zeros_like(x)
    with pytest.raises(ChipWorkerError) as err:
        worker.run(handle, add_args(worker, x, y, 1.0))
    assert err.value.code == SIMPLER_CHIP_ERR_ORCH_FATAL
    assert "SIMPLER_CHIP_ERR_ORCH_FATAL" in str(err.value)
    run = worker.submit(handle, add_args(worker, x, y, 1.0))
    for _ in range(2):  # idempotent: the same error again
        with pytest.raises(ChipWorkerError) as again:
            run.wait(timeout=30)
        assert again.value.code == SIMPLER_CHIP_ERR_ORCH_FATAL


def test_run_handle_semantics_and_buffer_in_use(worker, wait_flag_callable):
    worker.init()
    handle = worker.register(wait_flag_callable)
    flag = worker.create_buffer(4)
    out = worker.create_buffer(4)
    args = ChipStorageTaskArgs()
    args.add_tensor(worker.make_tensor_arg(flag, (1,), DataType.INT32))
    args.add_tensor(worker.make_tensor_arg(out, (1,), DataType.INT32))
    # The HOST flag is staged at submit: the kernel sees a device copy. Set it through a
    # DEVICE tensor instead so the test can release the run while it waits.
    dflag = worker.malloc(4)
    worker.copy_to(dflag, np.zeros(1, dtype=np.int32))
    dargs = ChipStorageTaskArgs()
    dargs.add_tensor(ChipTensor.make(dflag, (1,), DataType.INT32))
    dargs.add_tensor(worker.make_tensor_arg(out, (1,), DataType.INT32))
    run = worker.submit(handle, dargs)
    assert isinstance(run, RunHandle)
    assert run.done is False
    with pytest.raises(TimeoutError):
        run.wait(timeout=0.05)
    assert run.done is False  # the timeout did not cancel the run
    with pytest.raises(RuntimeError, match="still uses this buffer"):
        worker.release_buffer(out)
    worker.copy_to(dflag, np.array([42], dtype=np.int32))
    run.wait(timeout=60)
    assert run.done is True
    assert run.result() is None
    run.wait()  # idempotent
    assert np.frombuffer(out, dtype=np.int32)[0] == 42
    worker.release_buffer(out)
    worker.release_buffer(flag)
    with pytest.raises(ValueError):
        worker.release_buffer(flag)
    worker.free(dflag)
    del args


def test_memory_apis_and_committed_memory(worker):
    with pytest.raises(RuntimeError, match="READY"):
        worker.malloc(64)
    worker.init()
    base = worker.committed_device_memory()
    free0, total = worker.device_memory_info()
    assert 0 < free0 <= total
    ptr = worker.malloc(4096)
    assert worker.committed_device_memory() >= base + 4096
    src = np.arange(1024, dtype=np.float32)
    worker.copy_to(ptr, src)
    dst = np.empty_like(src)
    worker.copy_from(dst, ptr)
    np.testing.assert_array_equal(dst, src)
    with pytest.raises(ValueError, match="run past the end"):
        worker.copy_to(ptr + 8, src)
    with pytest.raises(ValueError):
        worker.copy_from(np.empty(2048, dtype=np.float32), ptr)
    with pytest.raises(ValueError, match="not returned by this Worker's malloc"):
        worker.free(ptr + 1024)
    with pytest.raises(TypeError):
        worker.copy_from(b"read-only bytes", ptr)
    worker.free(ptr)
    assert worker.committed_device_memory() == base
    worker.malloc(1024)
    worker.close()
    assert worker.committed_device_memory() == 0


def test_state_machine_and_refusals_after_close(add_scalar_callable):
    with pytest.raises(ValueError, match="device_ids"):
        Worker(level=3)  # level 3 needs its chips (tests/python/test_multi_chip.py)
    with pytest.raises(ValueError):
        Worker(level=0)
    with Worker(level=2, device_id=2) as w:
        assert w.state == "NEW"
        handle = w.register(add_scalar_callable)
        w.init()
        with pytest.raises(RuntimeError, match="already initialized"):
            w.init()
    assert w.state == "CLOSED"
    w.close()  # idempotent
    for call in (lambda: w.run(handle), lambda: w.submit(handle), lambda: w.malloc(4),
                 lambda: w.create_buffer(4), lambda: w.device_memory_info(),
                 lambda: w.register(add_scalar_callable)):
        with pytest.raises(RuntimeError):
            call()
    with pytest.raises(RuntimeError, match="closed"):
        w.init()


def test_failed_init_is_fully_rolled_back():
    owner = Worker(level=2, device_id=3)
    owner.init()
    rival = Worker(level=2, device_id=3)  # the device is taken
    with pytest.raises(ChipWorkerError):
        rival.init()
    assert rival.state == "FAILED" and rival.committed_device_memory() == 0
    owner.close()
    rival.close()
    successor = Worker(level=2, device_id=3)
    successor.init()
    successor.close()


def test_a_worker_on_each_of_two_devices(add_scalar_callable):
    workers = [Worker(level=2, device_id=d) for d in (1, 2)]
    try:
        for w in workers:
            w.init()
        x = np.arange(256, dtype=np.float32)
        for i, w in enumerate(workers):
            y = np.zeros_like(x)
            w.run(w.register(add_scalar_callable), add_args(w, x, y, float(i + 1)))
            np.testing.assert_array_equal(y, x + (i + 1))
    finally:
        for w in workers:
            w.close()


def test_runs_from_several_threads_are_serialized(worker, add_scalar_callable):
    worker.init()
    handle = worker.register(add_scalar_callable)
    x = np.arange(512, dtype=np.float32)
    failures = []

    def body(t):
        for i in range(4):
            y = np.zeros_like(x)
            scalar = float(t * 10 + i)
            if i % 2:
                worker.submit(handle, add_args(worker, x, y, scalar)).wait(timeout=60)
            else:
                worker.run(handle, add_args(worker, x, y, scalar))
            if not np.array_equal(y, x + np.float32(scalar)):
                failures.append((t, i))

    threads = [threading.Thread(target=body, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failures


def test_errors_module_exports():
    assert errors.PTO_RUNTIME_ERR_UNSUPPORTED == errors.PTO_RUNTIME_ERR_BASE - 1
    assert issubclass(errors.UnsupportedRuntimeOperation, errors.ChipWorkerError)
    assert issubclass(errors.UnsupportedRuntimeOperation, NotImplementedError)
    assert issubclass(errors.ChipWorkerError, RuntimeError)
    assert CallConfig is not None


@pytest.mark.parametrize("finish", ["close", "collect"])
def test_close_completes_runs_in_submit_order(add_scalar_callable, finish):
    """HOST outputs are copied back when close() (or the destructor) completes the runs in
    flight; with several runs writing one array, it holds the last run's values (the runs
    were completed in an arbitrary order, leaving an earlier run's output)."""
    import gc
    x = np.arange(50000, dtype=np.float32)
    y = np.zeros_like(x)
    w = Worker()
    h = w.register(add_scalar_callable)
    w.init()
    runs = [w.submit(h, x, y, float(i)) for i in range(24)]
    if finish == "close":
        w.close()
    else:
        del w
        gc.collect()
    assert all(r.done for r in runs)
    np.testing.assert_array_equal(y, x + 23)


def test_run_and_submit_take_the_arguments_as_args_keyword(worker, add_scalar_callable):
    # Issue 4: run(handle, args=None, config=None); args= was "unknown keyword 'args'".
    from simpler.errors import SimplerTypeError
    worker.init()
    handle = worker.register(add_scalar_callable)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    worker.run(handle, args=add_args(worker, x, y, 1.0), config=CallConfig())
    assert (y == x + 1).all()
    worker.submit(handle, args=[x, y, 2.0]).wait(30)
    assert (y == x + 2).all()
    with pytest.raises(SimplerTypeError, match="given twice"):
        worker.run(handle, x, args=[x, y, 2.0])
