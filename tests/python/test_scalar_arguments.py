"""Scalars of the borrowed argument form (docs/kernel-mode.md, "Arguments"): a bool is a
number only where the kernel takes a BOOL (or an untyped slot), Python's True and
numpy.bool_ alike; a finite number that the typed float type cannot hold is refused, not
passed as infinity. Every refusal is typed, names the argument and comes before anything
is enqueued."""
from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest

from simpler import Worker, errors, sim
from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable, DataType

KERNEL = pathlib.Path(__file__).resolve().parent / "programs" / "add_scalar_kernel.cpp"


@pytest.fixture(scope="module")
def worker_and_programs(compiler):
    """A READY program-mode Worker and, per scalar DataType (None: untyped), the handle of
    y = x + s whose scalar slot is typed that way (the kernel reads s as float32)."""
    binary = compiler.compile_kernel(KERNEL.read_text(), "aiv")
    with Worker() as worker:
        worker.init()
        handles = {}
        for dtype in (None, DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16,
                      DataType.FLOAT64, DataType.INT32, DataType.INT64, DataType.BOOL):
            scalar = D.SCALAR if dtype is None else (D.SCALAR, dtype)
            kernel = CoreCallable.build([(D.IN, DataType.FLOAT32, 1),
                                         (D.OUT, DataType.FLOAT32, 1), scalar], binary)
            handles[dtype] = worker.register(ChipCallable.from_kernel(kernel))
        yield worker, handles


def _refused(worker, handle, value, cls, match):
    x = np.arange(8, dtype=np.float32)
    y = np.full_like(x, -1)
    launches = sim.call_count("launch")
    with pytest.raises(cls, match=match) as err:
        worker.run(handle, x, y, value)
    assert err.value.index == 2
    assert err.value.code == errors.PTO_RUNTIME_ERR_INVALID_ARGUMENT
    assert sim.call_count("launch") == launches        # nothing was enqueued
    assert (y == -1).all()


@pytest.mark.parametrize("dtype", [DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT64,
                                   DataType.INT32, DataType.INT64])
@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_a_bool_is_refused_where_the_kernel_takes_a_number(worker_and_programs, dtype, value):
    worker, handles = worker_and_programs
    _refused(worker, handles[dtype], value, errors.ArgumentTypeError,
             rf"argument 2 \(SCALAR {dtype.name}\): expected a {dtype.name} scalar, got "
             r"(numpy )?(bool|BOOL)")


@pytest.mark.parametrize("value", [True, np.bool_(True), 1])
def test_a_bool_scalar_takes_python_and_numpy_bools(worker_and_programs, value):
    worker, handles = worker_and_programs
    x = np.arange(8, dtype=np.float32)
    y = np.zeros_like(x)
    worker.run(handles[DataType.BOOL], x, y, value)    # accepted and run


@pytest.mark.parametrize("value", [True, np.bool_(True)])
def test_an_untyped_scalar_takes_a_bool_as_its_pattern(worker_and_programs, value):
    worker, handles = worker_and_programs
    x = np.arange(8, dtype=np.float32)
    y = np.zeros_like(x)
    worker.run(handles[None], x, y, value)              # 0/1: float32 bits 1, a denormal
    assert np.array_equal(y, x + np.frombuffer(np.uint32(1).tobytes(), np.float32)[0])


def test_python_numbers_still_convert_to_a_typed_float(worker_and_programs):
    worker, handles = worker_and_programs
    x = np.arange(8, dtype=np.float32)
    y = np.zeros_like(x)
    worker.run(handles[DataType.FLOAT32], x, y, 2)      # an int converts
    assert (y == x + 2).all()
    worker.run(handles[DataType.FLOAT32], x, y, 2 ** 70)  # any int a float holds (it said
    assert (y == np.float32(2 ** 70)).all()              # "does not fit 64 bits")
    worker.run(handles[DataType.FLOAT32], x, y, 3.4e38)  # the largest float32s pass
    assert (y == np.float32(3.4e38)).all()
    for special in (math.inf, -math.inf):               # infinities are passed as given
        worker.run(handles[DataType.FLOAT32], x, y, special)
        assert (y == special).all()
    worker.run(handles[DataType.FLOAT32], x, y, math.nan)
    assert np.isnan(y).all()


@pytest.mark.parametrize("dtype, value", [
    (DataType.FLOAT32, 1e300), (DataType.FLOAT32, -1e39), (DataType.FLOAT32, 2 ** 200),
    (DataType.FLOAT16, 70000.0), (DataType.FLOAT16, 65520.0), (DataType.FLOAT16, -10 ** 5),
    (DataType.BFLOAT16, 1e39), (DataType.FLOAT64, 10 ** 400),
])
def test_a_finite_number_a_float_type_cannot_hold_is_refused(worker_and_programs, dtype, value):
    worker, handles = worker_and_programs
    _refused(worker, handles[dtype], value, errors.ArgumentError,
             rf"argument 2 \(SCALAR {dtype.name}\): .* is out of range for {dtype.name}")


@pytest.mark.parametrize("value", [1e300, -1e39])
def test_an_untyped_float_is_float32_and_refused_where_float32_cannot_hold_it(
        worker_and_programs, add_scalar_kernel_worker, value):
    # An untyped slot passes a Python float as FLOAT32: the same range rule, both modes.
    worker, handles = worker_and_programs
    _refused(worker, handles[None], value, errors.ArgumentError,
             r"argument 2 \(SCALAR\): .* is out of range for FLOAT32")
    w, cid, stream = add_scalar_kernel_worker
    dx = sim.DeviceArray.zeros(8, np.float32, stream=stream)
    dy = sim.DeviceArray.zeros(8, np.float32, stream=stream)
    sim.reset_counters()
    with pytest.raises(errors.ArgumentError, match="out of range for FLOAT32") as err:
        w.kernel_launch(cid, dx, dy, value, caller_stream=stream)
    assert err.value.index == 2 and err.value.code == errors.PTO_RUNTIME_ERR_INVALID_ARGUMENT
    assert sim.call_count("launch") == 0
    for fine in (3.4e38, math.inf, -math.inf):  # representable, or infinity as given
        w.kernel_launch(cid, dx, dy, fine, caller_stream=stream)
        stream.synchronize()
        assert (dy.numpy() == np.float32(fine)).all()


def test_float16_values_that_round_to_its_largest_finite_value_pass(worker_and_programs):
    worker, handles = worker_and_programs
    x = np.zeros(8, dtype=np.float32)
    y = np.zeros_like(x)
    for value in (65504.0, 65519.0):                    # both round to 65504, not infinity
        worker.run(handles[DataType.FLOAT16], x, y, value)
    worker.run(handles[DataType.FLOAT64], x, y, 1e300)  # a double holds it


def test_uint16_data_for_a_bfloat16_tensor_is_refused_with_the_ways_to_pass_it(compiler):
    """numpy has no bfloat16: the refusal of a uint16 array says how to pass such data."""
    binary = compiler.compile_kernel(KERNEL.read_text(), "aiv")
    kernel = CoreCallable.build([(D.IN, DataType.BFLOAT16, 1), (D.OUT, DataType.BFLOAT16, 1),
                                 D.SCALAR], binary)
    with Worker(device_id=1) as worker:                 # device 0: the module's worker
        worker.init()
        handle = worker.register(ChipCallable.from_kernel(kernel))
        with pytest.raises(errors.ArgumentTypeError,
                           match=r"expected a BFLOAT16 tensor, got UINT16 \(numpy has no "
                                 r"bfloat16: pass ChipTensor.from_array\(a, dtype=DataType"):
            worker.run(handle, np.zeros(8, np.uint16), np.zeros(8, np.uint16), 1.0)
