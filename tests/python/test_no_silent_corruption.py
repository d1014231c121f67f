"""Issue 16.3 / 16.4 / 13.3: nothing the caller did not ask for is written, freed memory is
not reused under running work, handles and contexts belong to their owner, wrong types are
TypeErrors naming the parameter."""
from __future__ import annotations

import gc
import mmap
import threading

import numpy as np
import pytest

from simpler import Worker, sim
from simpler.errors import PTO_RUNTIME_ERR_INVALID_ARGUMENT, ChipWorkerError
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor, DataType


def add_args(x_tensor, y_tensor, scalar=1.0):
    args = ChipStorageTaskArgs()
    args.add_tensor(x_tensor)
    args.add_tensor(y_tensor)
    args.add_scalar_f32(scalar)
    return args


@pytest.fixture
def worker():
    w = Worker(level=2, device_id=3)
    yield w
    w.close()


# ---- read-only host memory is never an output ----------------------------------------------

def test_read_only_host_buffers_are_refused_as_outputs(worker, add_scalar_callable):
    worker.init()
    handle = worker.register(add_scalar_callable)
    x = np.arange(64, dtype=np.float32)
    frozen = np.frombuffer(bytes(256), dtype=np.float32)  # a view of bytes: read-only
    with pytest.raises(ValueError, match=r"args tensor 1 \(OUT\) is a read-only host buffer"):
        worker.run(handle, add_args(ChipTensor.from_array(x), ChipTensor.from_array(frozen)))
    with pytest.raises(ValueError, match=r"Worker.submit: args tensor 1 \(OUT\)"):
        worker.submit(handle, add_args(worker.make_tensor_arg(x), worker.make_tensor_arg(frozen)))
    assert not frozen.any()  # nothing was written
    with mmap.mmap(-1, 256, prot=mmap.PROT_READ) as ro:
        view = np.frombuffer(ro, dtype=np.float32)
        with pytest.raises(ValueError, match="read-only host buffer"):
            worker.run(handle, add_args(ChipTensor.from_array(x), ChipTensor.from_array(view)))
        del view
    # Read-only memory is fine as an input.
    y = np.zeros(64, dtype=np.float32)
    worker.run(handle, add_args(ChipTensor.from_array(np.frombuffer(x.tobytes(), np.float32)),
                                ChipTensor.from_array(y), 2.0))
    np.testing.assert_array_equal(y, x + 2)


def test_object_arrays_are_refused_by_from_array():
    objects = np.array([object(), 1, "x"], dtype=object)
    with pytest.raises(TypeError, match="holds Python objects"):
        ChipTensor.from_array(objects, dtype=DataType.INT64)
    with pytest.raises(TypeError, match="holds Python objects"):
        ChipTensor.from_array(objects)


# ---- handles belong to the Worker that minted them -----------------------------------------

def test_a_callable_handle_is_refused_by_another_worker(add_scalar_callable):
    with Worker(level=2, device_id=2) as a, Worker(level=2, device_id=3) as b:
        a.init()
        b.init()
        ha = a.register(add_scalar_callable)
        hb = b.register(add_scalar_callable)
        x = np.arange(16, dtype=np.float32)
        y = np.zeros_like(x)
        for call in (lambda: b.run(ha, add_args(b.make_tensor_arg(x), b.make_tensor_arg(y))),
                     lambda: b.submit(ha, add_args(b.make_tensor_arg(x), b.make_tensor_arg(y))),
                     lambda: b.unregister(ha)):
            with pytest.raises(ValueError, match="belongs to another Worker"):
                call()
        # Both callables are still registered and run.
        b.run(hb, add_args(b.make_tensor_arg(x), b.make_tensor_arg(y), 1.0))
        a.run(ha, add_args(a.make_tensor_arg(x), a.make_tensor_arg(y), 3.0))
        np.testing.assert_array_equal(y, x + 3)


# ---- frees are ordered after the work that uses the memory ---------------------------------

def _int32(value):
    return np.array([value], dtype=np.int32)


def test_worker_free_under_a_running_run_is_deferred(worker, wait_flag_callable):
    worker.init()
    handle = worker.register(wait_flag_callable)
    dflag = worker.malloc(4)
    dout = worker.malloc(4)
    worker.copy_to(dflag, _int32(0))
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.make(dflag, (1,), DataType.INT32))
    args.add_tensor(ChipTensor.make(dout, (1,), DataType.INT32))
    run = worker.submit(handle, args)
    worker.free(dout)  # the run still writes it: memory reused only after the run
    fresh = worker.malloc(4)
    assert fresh != dout
    worker.copy_to(fresh, _int32(7))
    worker.copy_to(dflag, _int32(42))  # lets the run finish (it writes 42 into dout)
    run.wait(timeout=60)
    back = np.zeros(1, dtype=np.int32)
    worker.copy_from(back, fresh)
    assert back[0] == 7
    worker.free(fresh)
    worker.free(dflag)


def test_sim_free_after_a_kernel_launch_is_ordered_after_the_stream(wait_flag_callable):
    sim.set_device(0)
    stream = sim.Stream()
    dflag, dout = sim.malloc(4), sim.malloc(4)
    sim.memcpy_htod(dflag, _int32(0))
    w = Worker(level=2, execution_mode="kernel", device_id=0)
    w.init(config=CallConfig())
    try:
        cid = w.kernel_prepare_callable(wait_flag_callable)
        args = ChipStorageTaskArgs()
        args.add_tensor(ChipTensor.make(dflag, (1,), DataType.INT32))
        args.add_tensor(ChipTensor.make(dout, (1,), DataType.INT32))
        w.kernel_launch(cid, args, caller_stream=stream)
        sim.free(dout)  # ordered after the launch: the pointer is gone for new work at once
        with pytest.raises(Exception):
            sim.memcpy_htod(dout, _int32(1))
        fresh = sim.malloc(4)
        assert fresh != dout
        sim.memcpy_htod(fresh, _int32(7))
        sim.memcpy_htod(dflag, _int32(42))
        stream.synchronize()  # no sticky error: the run wrote memory still reserved for it
        back = np.zeros(1, dtype=np.int32)
        sim.memcpy_dtoh(back, fresh)
        assert back[0] == 7
        sim.free(fresh)
    finally:
        stream.synchronize()
        w.close()
        sim.free(dflag)
        stream.destroy()


# ---- a device reset invalidates a Worker's context cleanly ---------------------------------

def test_device_reset_under_a_program_worker_then_close_succeeds(add_scalar_callable):
    w = Worker(level=2, device_id=3)
    w.init()
    handle = w.register(add_scalar_callable)
    w.malloc(1 << 20)
    assert w.committed_device_memory() > 0
    sim.device_reset(3)
    x = np.arange(16, dtype=np.float32)
    with pytest.raises(ChipWorkerError, match="was reset"):
        w.run(handle, add_args(w.make_tensor_arg(x), w.make_tensor_arg(np.zeros_like(x))))
    w.close()
    assert w.committed_device_memory() == 0
    # The device claim came back: another Worker takes the device and runs.
    with Worker(level=2, device_id=3) as again:
        again.init()
        y = np.zeros_like(x)
        again.run(again.register(add_scalar_callable),
                  add_args(again.make_tensor_arg(x), again.make_tensor_arg(y), 1.0))
        np.testing.assert_array_equal(y, x + 1)


def test_device_reset_under_a_kernel_worker_then_close_succeeds(add_scalar_callable):
    sim.set_device(1)
    w = Worker(level=2, execution_mode="kernel", device_id=1)
    w.init(config=CallConfig())
    cid = w.kernel_prepare_callable(add_scalar_callable)
    sim.device_reset(1)
    stream = sim.Stream()
    d = sim.malloc(64)
    args = add_args(ChipTensor.make(d, (16,), DataType.FLOAT32),
                    ChipTensor.make(d, (16,), DataType.FLOAT32))
    with pytest.raises(ChipWorkerError, match="was reset"):
        w.kernel_launch(cid, args, caller_stream=stream)
    w.close()
    assert w.committed_device_memory() == 0
    again = Worker(level=2, execution_mode="kernel", device_id=1)
    again.init(config=CallConfig())
    again.close()
    sim.free(d)
    stream.destroy()


def test_program_worker_collected_on_another_thread_releases_its_device(add_scalar_callable):
    box = {}

    def make():
        w = Worker(level=2, device_id=2)
        w.init()
        w.malloc(4096)
        box["w"] = w

    t = threading.Thread(target=make)
    t.start()
    t.join(60)
    del box["w"]  # collected here, not on its init thread
    gc.collect()
    with Worker(level=2, device_id=2) as again:  # the device claim was released
        again.init()
        x = np.arange(8, dtype=np.float32)
        y = np.zeros_like(x)
        again.run(again.register(add_scalar_callable),
                  add_args(again.make_tensor_arg(x), again.make_tensor_arg(y), 1.0))
        np.testing.assert_array_equal(y, x + 1)


# ---- DEVICE tensors of a run are checked before it runs ------------------------------------

def test_device_tensor_outside_its_allocation_is_refused_naming_the_argument(
        worker, add_scalar_callable):
    worker.init()
    handle = worker.register(add_scalar_callable)
    d = worker.malloc(64)
    big = ChipTensor.make(d, (1 << 38,), DataType.FLOAT32)  # claims 1 TiB over 64 bytes
    ok = ChipTensor.make(d, (16,), DataType.FLOAT32)
    with pytest.raises(ChipWorkerError, match="argument 1") as err:
        worker.run(handle, add_args(ok, big))
    assert err.value.code == PTO_RUNTIME_ERR_INVALID_ARGUMENT
    with pytest.raises(ChipWorkerError, match="argument 0"):
        worker.submit(handle, add_args(big, ok))
    worker.free(d)


# ---- hygiene: bounded configs, TypeErrors naming the parameter -----------------------------

def test_call_config_sizes_are_bounded_with_the_limit_in_the_message():
    with pytest.raises(ValueError, match=r"task_window_size: 1099511627776 is larger than the "
                                         r"limit 1048576"):
        CallConfig(task_window_size=2 ** 40).validate()
    with pytest.raises(ValueError, match="heap_ring_bytes"):
        CallConfig(heap_ring_bytes=2 ** 41).validate()
    CallConfig(task_window_size=2 ** 20).validate()


def test_wrong_types_are_type_errors_naming_the_parameter(worker, add_scalar_callable):
    worker.init()
    handle = worker.register(add_scalar_callable)
    args = ChipStorageTaskArgs()
    cases = [
        (lambda: worker.run(0, args), "handle"),
        (lambda: worker.submit("h", args), "handle"),
        (lambda: worker.unregister(None), "handle"),
        (lambda: worker.run(handle, args, config=5), "config"),
        (lambda: worker.submit(handle, args, config="x"), "config"),
        (lambda: worker.malloc("64"), "size"),
        (lambda: worker.free("0x10"), "ptr"),
        (lambda: worker.copy_to("0", b"abcd"), "dst"),
        (lambda: worker.copy_from(bytearray(4), None), "src"),
        (lambda: worker.create_buffer(1.5), "nbytes"),
        (lambda: worker.make_tensor_arg(np.zeros(4, np.float32), dtype="float32"), "dtype"),
        (lambda: worker.init(prewarm_config=3), "prewarm_config"),
        (lambda: worker.register(b"bytes"), "chip_callable"),
    ]
    for call, name in cases:
        with pytest.raises(TypeError, match=name):
            call()


# ---- engine API: value reads/writes wait only for that tensor; dependencies on older tasks --

@pytest.fixture(scope="module")
def value_order_callable(compiler):
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    from conftest import PROGRAMS
    wait = CoreCallable.build([D.INOUT, D.OUT], compiler.compile_kernel(
        (PROGRAMS / "wait_flag_kernel.cpp").read_text(), "aiv"))
    add = CoreCallable.build([D.IN, D.OUT, D.SCALAR], compiler.compile_kernel(
        (PROGRAMS / "add_scalar_kernel.cpp").read_text(), "aiv"))
    cluster_wait = CoreCallable.build([D.INOUT, D.OUT], compiler.compile_kernel(
        (PROGRAMS / "cluster_wait_flag_kernel.cpp").read_text(), "mix"))
    orch = compiler.compile_orchestration((PROGRAMS / "value_order_orch.cpp").read_text(),
                                          entry="value_order_entry")
    sig = [D.INOUT, D.OUT, D.IN, D.OUT, D.OUT, D.SCALAR]
    return ChipCallable.build(sig, "value_order_entry", orch, children=[(0, wait), (1, add), (2, cluster_wait)])


@pytest.mark.parametrize("case", [0, 1], ids=["read_value_sees_its_writer",
                                              "add_dependency_on_an_older_waiting_task"])
def test_engine_value_ordering_and_dependencies(worker, value_order_callable, case):
    worker.init()
    handle = worker.register(value_order_callable)
    flag = np.zeros(1, dtype=np.int32)
    out = np.zeros(1, dtype=np.int32)
    x = np.arange(256, dtype=np.float32)
    y = np.zeros_like(x)
    z = np.zeros_like(x)
    args = ChipStorageTaskArgs()
    for a in (flag, out, x, y, z):
        args.add_tensor(worker.make_tensor_arg(a))
    args.add_scalar(case)
    # case 1 before the fix: add_dependency refused B (not the latest task).
    worker.run(handle, args)
    assert out[0] == 42
    np.testing.assert_array_equal(y, x + 1)
    if case == 1:
        np.testing.assert_array_equal(z, x + 2)


def test_sim_wrong_types_are_type_errors_naming_the_parameter():
    cases = [
        (lambda: sim.set_device("0"), "device"),
        (lambda: sim.device_reset("x"), "device"),
        (lambda: sim.malloc(1.5), "nbytes"),
        (lambda: sim.free("0x10"), "ptr"),
        (lambda: sim.memset(None, 0, 4), "ptr"),
        (lambda: sim.memcpy_dtod(0, object(), 4), "src_ptr"),
        (lambda: Worker(level=2).__setattr__("close_grace", "x"), "seconds"),
    ]
    for call, name in cases:
        with pytest.raises(TypeError, match=name):
            call()
    sim.set_device(np.int64(0))  # numpy integers are ints
