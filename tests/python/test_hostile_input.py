"""Hostile input to the documented Python API: every refusal is a typed SimplerError (or a
subclass of the builtin the docs name) raised before anything happens, never pybind11's
"incompatible function arguments", an AttributeError, or a wrapped-around size."""
from __future__ import annotations

import numpy as np
import pytest

from simpler import Worker, sim
from simpler.errors import ArgumentError, SimError, SimplerTypeError, SimplerValueError
from simpler.task_interface import ChipStorageTaskArgs, ChipTensor, DataType


@pytest.fixture
def program_worker():
    w = Worker(level=2, device_id=0)
    w.init()
    yield w
    w.close()


@pytest.mark.parametrize("call, kind, words", [
    (lambda w: w.malloc(-1), SimplerValueError, "size must be >= 1"),
    (lambda w: w.malloc(2 ** 64), SimplerValueError, "does not fit 64 bits"),
    (lambda w: w.free(-1), SimplerValueError, "ptr"),
    (lambda w: w.free(2 ** 70), SimplerValueError, "ptr"),
    (lambda w: w.copy_to(w.malloc(16), b"x" * 16, -1), SimplerValueError, "nbytes"),
    (lambda w: w.copy_from(bytearray(16), -5), SimplerValueError, "src"),
    (lambda w: w.create_buffer(-1), SimplerValueError, "nbytes"),
    (lambda w: w.create_buffer(2 ** 62), SimplerValueError, "host's memory"),
    (lambda w: w.make_tensor_arg(w.create_buffer(64), shape=(3.5,), dtype=DataType.FLOAT32),
     SimplerTypeError, "shape"),
])
def test_program_worker_sizes_and_pointers_out_of_range(program_worker, call, kind, words):
    with pytest.raises(kind, match=words):
        call(program_worker)
    assert program_worker.state == "READY"


@pytest.mark.parametrize("seconds", [-1, float("nan"), float("inf"), 1e300])
def test_close_grace_must_be_finite_and_bounded(seconds):
    w = Worker(level=2, device_id=0)
    with pytest.raises(SimplerValueError, match=r"^Worker\.close_grace: must be a number of seconds"):
        w.close_grace = seconds
    assert w.close_grace == 10.0


def test_worker_options_out_of_range_or_of_the_wrong_type():
    with pytest.raises(SimplerValueError, match="device_id .* out of range"):
        Worker(level=2, device_id=2 ** 70)
    with pytest.raises(SimplerTypeError, match="platform must be a str"):
        Worker(level=3, device_ids=[0], platform=1)
    with pytest.raises(SimplerTypeError, match="runtime must be a str"):
        Worker(level=3, device_ids=[0], runtime=None)
    for level in (2, 3):  # not os.fspath's bare TypeError
        with pytest.raises(SimplerTypeError, match="lib_dir must be a path"):
            Worker(level=level, device_ids=[0], lib_dir=5) if level == 3 else Worker(lib_dir=5)


def test_worker_level_and_device_id_take_numpy_integers_not_bools():
    """docs/api.md: numpy integers are ints; bool and numpy.bool_ are not."""
    w = Worker(level=np.int64(2), device_id=np.int32(1))
    assert (w.level, w.device_id, w.state) == (2, 1, "NEW")
    assert type(w.device_id) is int
    for flag in (True, np.bool_(False)):
        with pytest.raises(SimplerTypeError, match="device_id must be an int, got bool"):
            Worker(level=2, device_id=flag)
        with pytest.raises(SimplerTypeError, match="level must be an int, got bool"):
            Worker(level=flag)


def test_sim_ids_pointers_and_sizes_out_of_range():
    with pytest.raises(SimError) as e:
        sim.set_device(2 ** 70)
    assert e.value.status_name == "SIM_ERR_INVALID_DEVICE"
    for ptr in (-1, 2 ** 70):
        with pytest.raises(SimError) as e:
            sim.free(ptr)
        assert e.value.status_name == "SIM_ERR_INVALID_POINTER"
    with pytest.raises(SimplerValueError, match="nbytes"):
        sim.malloc(2 ** 64)
    with pytest.raises(SimplerValueError, match="clusters_per_device"):
        sim.configure(clusters_per_device=2 ** 40)


def test_sim_streams_and_events_refuse_wrong_types():
    sim.set_device(0)
    with sim.Stream() as stream:
        event = sim.Event()
        with pytest.raises(SimplerTypeError, match="stream must be a simpler.sim.Stream"):
            event.record(None)
        with pytest.raises(SimplerTypeError, match="event must be a simpler.sim.Event"):
            stream.wait_event(None)
        with pytest.raises(SimplerTypeError, match="event must be a simpler.sim.Event"):
            stream.record(5)
        with pytest.raises(SimplerTypeError, match="source"):
            stream.memcpy_htod_async(4096, None)
        ptr = sim.malloc(64)
        with pytest.raises(SimError) as e:
            stream.memset_async(-1, 0, 4)
        assert e.value.status_name == "SIM_ERR_INVALID_POINTER"
        stream.synchronize()
        sim.free(ptr)
        event.destroy()


def test_device_array_shape_cannot_wrap_its_byte_size():
    sim.set_device(0)
    # 2**62 x 4 float32 elements is 2**66 bytes: it once wrapped to a 0-byte allocation.
    with pytest.raises(SimplerValueError, match="overflows"):
        sim.DeviceArray((2 ** 62, 4), np.float32)
    with pytest.raises(SimplerValueError, match="does not fit 64 bits"):
        sim.DeviceArray((2 ** 64,), np.float32)
    with pytest.raises(SimplerTypeError, match="shape"):
        sim.DeviceArray((3.5,), np.float32)
    with pytest.raises(SimplerTypeError, match="shape"):
        sim.DeviceArray(None, np.float32)
    with pytest.raises(SimplerTypeError, match="not a numpy dtype"):
        sim.DeviceArray((4,), "no-such-dtype")
    assert sim.DeviceArray((0, 2 ** 62), np.float32).nbytes == 0


def test_program_mode_writes_torch_cpu_outputs(program_worker, add_scalar_callable):
    torch = pytest.importorskip("torch")
    handle = program_worker.register(add_scalar_callable)
    x = torch.arange(64, dtype=torch.float32)
    y = torch.zeros(64)
    program_worker.run(handle, x, y, 2.5)  # a DLPack CPU tensor is writable, not read-only
    assert torch.equal(y, x + 2.5)


def test_descriptor_set_arg_index_out_of_range_is_an_argument_error(add_scalar_kernel_worker):
    worker, cid, stream = add_scalar_kernel_worker
    dx = sim.DeviceArray.from_numpy(np.arange(64, dtype=np.float32), stream=stream)
    dy = sim.DeviceArray.zeros((64,), np.float32, stream=stream)
    launch = worker.kernel_bind(cid, dx, dy, 1.0)
    for index in (-1, 3, 2 ** 70):
        with pytest.raises(ArgumentError, match=f"argument index {index} is out of range"):
            launch.set_arg(index, 2.0)
    with pytest.raises(ArgumentError, match="index must be an int"):
        launch.set_arg("0", dx)
    launch.launch(caller_stream=stream)
    stream.synchronize()
    assert (dy.numpy() == dx.numpy() + 1).all()


def test_level3_refuses_read_only_outputs_and_shared_arrays(add_scalar_callable):
    x = np.arange(64, dtype=np.float32)
    read_only = np.frombuffer(bytes(x.nbytes), np.float32)
    with Worker(level=3, device_ids=[0, 1]) as w:
        h = w.register(add_scalar_callable)
        w.init()
        with pytest.raises(SimplerValueError, match=r"argument 1 \(OUT\): the array is read-only"):
            w.run(lambda o, a: o.submit(h, x, read_only, 1.0))
        with pytest.raises(SimplerValueError, match=r"tensors\[0\]: the array is read-only"):
            w.run(lambda o, a: o.all_reduce([read_only, np.ones(64, np.float32)]))
        shared = np.ones(8, np.float32)
        with pytest.raises(SimplerValueError, match="overlap"):
            w.run(lambda o, a: o.all_reduce([shared, shared]))
        assert (shared == 1).all()
        with pytest.raises(SimplerValueError, match=r"tensors\[0\]: the array is read-only"):
            w.run(lambda o, a: o.broadcast([read_only, np.zeros(64, np.float32)], root=0))
        w.run(lambda o, a: o.submit(h, x, np.zeros(64, np.float32), 1.0))  # still usable


@pytest.mark.parametrize("call, kind, words", [
    (lambda: ChipTensor.make(-1, [4], DataType.FLOAT32), SimplerTypeError, "ptr: expected an unsigned"),
    (lambda: ChipTensor.make(4096, [2 ** 64], DataType.FLOAT32), SimplerValueError, r"shape\[0\]"),
    (lambda: ChipTensor.make(4096, [3.5], DataType.FLOAT32), SimplerTypeError, r"shape\[0\]"),
    (lambda: ChipTensor.make(4096, [4], 0), SimplerTypeError, "dtype: expected a DataType"),
    (lambda: ChipTensor.make(4096, [4], DataType.FLOAT32, -1), SimplerTypeError, "buffer_bytes"),
    (lambda: ChipTensor.make(4096, [4], DataType.FLOAT32).slice(-1, 0, 1), SimplerValueError, "dim"),
    (lambda: ChipTensor.make(4096, [4], DataType.FLOAT32).slice(0, 0, 2 ** 70), SimplerValueError,
     "stop"),
    (lambda: ChipTensor.from_array(np.zeros(4, np.float32), dtype="FLOAT32"), SimplerTypeError,
     "dtype"),
    (lambda: ChipStorageTaskArgs().add_tensor(None), SimplerTypeError, "expected a ChipTensor"),
    (lambda: ChipStorageTaskArgs().add_scalar_u64(-1), SimplerTypeError, "add_scalar_u64"),
    (lambda: ChipStorageTaskArgs().add_scalar_i64(2 ** 63), SimplerValueError, "add_scalar_i64"),
    (lambda: ChipStorageTaskArgs().add_scalar_f32("x"), SimplerTypeError, "add_scalar_f32"),
])
def test_task_interface_arguments_out_of_range_or_of_the_wrong_type(call, kind, words):
    with pytest.raises(kind, match=words):
        call()


def test_task_interface_numbers_still_convert():
    args = ChipStorageTaskArgs()
    args.add_scalar_u64(np.uint64(2 ** 64 - 1))
    args.add_scalar_i64(-1)
    args.add_scalar_f32(np.float32(0.5))
    args.add_scalar_f64(2)
    assert args.scalar_count == 4
    t = ChipTensor.make(np.int64(4096), (2, np.int64(3)), DataType.FLOAT32)
    assert t.shape == (2, 3) and t.slice(np.int64(1), 0, 2).shape == (2, 2)


def test_run_handle_wait_refuses_bad_timeouts(program_worker, add_scalar_callable):
    handle = program_worker.register(add_scalar_callable)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    run = program_worker.submit(handle, x, y, 1.0)
    for timeout, kind in (("1", SimplerTypeError), (True, SimplerTypeError),
                          (float("nan"), SimplerValueError), (-1, SimplerValueError)):
        with pytest.raises(kind, match="timeout"):
            run.wait(timeout)
    run.wait(np.float64(60))
    assert (y == x + 1).all()
    with Worker(level=3, device_ids=[1]) as w:  # device 0 belongs to program_worker
        w.init()
        host_run = w.submit(lambda o, a: None)
        with pytest.raises(SimplerTypeError, match="timeout"):
            host_run.wait("soon")
        with pytest.raises(SimplerValueError, match="timeout"):
            host_run.wait(-1)
        host_run.wait()


@pytest.mark.parametrize("kwargs, kind, words", [
    ({"rank_timeout": float("nan")}, SimplerValueError, "rank_timeout"),
    ({"rank_timeout": float("inf")}, SimplerValueError, "rank_timeout"),
    ({"heartbeat": -1}, SimplerValueError, "heartbeat"),
    ({"comm": 5}, SimplerTypeError, "comm must be an mpi4py intracommunicator"),
])
def test_level4_options_are_checked_before_anything_is_taken(kwargs, kind, words):
    pytest.importorskip("mpi4py")
    with pytest.raises(kind, match=words):
        Worker(level=4, device_ids=[0], **kwargs)


@pytest.mark.parametrize("call, words", [
    (lambda c: c.compile_kernel(None), "compile_kernel: source must be a str, got NoneType"),
    (lambda c: c.compile_kernel("", 3), "compile_kernel: core_type must be a str, got int"),
    (lambda c: c.compile_orchestration(b"x"), "compile_orchestration: source must be a str"),
    (lambda c: c.compile_orchestration("", entry=1), "compile_orchestration: entry must be a str"),
])
def test_kernel_compiler_arguments_of_the_wrong_type(compiler, call, words):
    with pytest.raises(SimplerTypeError, match=words):
        call(compiler)


class _OneCapsule:
    """A DLPack producer that hands out the same capsule every time (consumed by the first
    import), or whose export fails."""

    def __init__(self, array=None, device=(1, 0)):
        self.capsule = array.__dlpack__() if array is not None else 5
        self.device = device

    def __dlpack__(self, stream=None):
        if self.capsule is None:
            raise RuntimeError("export failed")
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def test_a_dlpack_capsule_reused_or_a_failing_export_is_an_argument_error(
        add_scalar_kernel_worker):
    worker, cid, stream = add_scalar_kernel_worker
    dx = sim.DeviceArray.from_numpy(np.arange(64, dtype=np.float32), stream=stream)
    dy = sim.DeviceArray.zeros((64,), np.float32, stream=stream)
    reused = _OneCapsule(dx.numpy())
    worker.kernel_launch(cid, reused, dy, 1.0, caller_stream=stream)  # the first import
    stream.synchronize()
    failing = _OneCapsule()
    failing.capsule = None
    sim.reset_counters()
    for producer, why in ((reused, "ValueError"), (failing, "RuntimeError: export failed"),
                          (_OneCapsule(), "ValueError"),   # __dlpack__ returns no capsule
                          (_OneCapsule(dx.numpy(), device=("a", "b")), "not two ints")):
        with pytest.raises(ArgumentError, match="argument 0 .*" + why) as err:
            worker.kernel_launch(cid, producer, dy, 1.0, caller_stream=stream)
        assert err.value.index == 0
        launch = worker.kernel_bind(cid, dx, dy, 1.0)
        with pytest.raises(ArgumentError, match="KernelLaunch.set_arg: argument 0"):
            launch.set_arg(0, producer)
    assert sim.call_count("launch") == 0  # refused before anything was enqueued


def test_kernel_launch_without_a_stream_says_the_stream_is_required(add_scalar_kernel_worker):
    worker, cid, stream = add_scalar_kernel_worker
    dx = sim.DeviceArray.zeros((64,), np.float32, stream=stream)
    dy = sim.DeviceArray.zeros((64,), np.float32, stream=stream)
    launch = worker.kernel_bind(cid, dx, dy, 1.0)
    sim.reset_counters()
    for call in (lambda: worker.kernel_launch(cid, dx, dy, 1.0),
                 lambda: worker.kernel_launch(cid, dx, dy, 1.0, caller_stream=None),
                 lambda: launch.launch(caller_stream=None)):
        with pytest.raises(SimplerTypeError, match="caller_stream is required"):
            call()
    assert sim.call_count("launch") == 0
