"""README: "scalars as Python or numpy numbers". A numpy number for a scalar slot passes
exactly like the Python number of its value (docs/kernel-mode.md, "Arguments"): a numpy
integer converts to any integer slot it fits (out of range: ArgumentError, a ValueError, naming the
argument and the range) and to any float slot; a numpy float converts to any float slot and
is refused for an integer one; numpy.bool_ is a number only for BOOL (or untyped). The same
at level 2 (program and kernel mode) and level 3, refused before anything is enqueued.
numpy.int64(3) for an INT32 slot was refused ("convert it") while 3 passed."""
from __future__ import annotations

import gc

import numpy as np
import pytest

from simpler import Worker, _native, sim
from simpler.errors import ArgumentError, ArgumentTypeError
from simpler.task_interface import ArgDirection as D, ArgSpec, CallConfig, ChipCallable
from simpler.task_interface import CoreCallable, DataType

# y[0] = the scalar's 64-bit pattern.
STORE_BITS = """
#include "simpler/kernel/kernel_abi.h"
extern "C" void kernel_entry(int64_t* args) {
  int64_t* y = (int64_t*)simpler_tensor_data(simpler_tensor_arg(args, 0), sizeof(int64_t));
  if (simpler_block_idx(args) == 0) y[0] = simpler_scalar_i64(args, 1);
}
"""
SLOTS = (None, DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64, DataType.UINT8,
         DataType.UINT16, DataType.UINT32, DataType.UINT64, DataType.BOOL, DataType.FLOAT16,
         DataType.BFLOAT16, DataType.FLOAT32, DataType.FLOAT64)
INT_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def _edges(t):
    """Every value at an edge of the slot types' ranges that t can hold."""
    info = np.iinfo(t)
    edges = {0, 1, 2, -1, 127, 128, 255, 256, -128, -129, 2 ** 15 - 1, 2 ** 15, -2 ** 15,
             2 ** 16 - 1, 2 ** 16, 2 ** 31 - 1, 2 ** 31, -2 ** 31, -2 ** 31 - 1, 2 ** 32 - 1,
             2 ** 32, 2 ** 53 + 1, 2 ** 63 - 1, 2 ** 63, -2 ** 63, 2 ** 64 - 1, 65504, 65520}
    return sorted(t(v) for v in edges if info.min <= v <= info.max)


VALUES = ([v for t in INT_TYPES for v in _edges(t)] +
          [t(v) for t in (np.float16, np.float32, np.float64) for v in (0.0, 2.0, -1.5)] +
          [np.bool_(True), np.bool_(False)])
# Through the runtimes (one packer behind them all): each type's own edges and 1.
RUN_VALUES = ([v for t in INT_TYPES for v in (t(np.iinfo(t).min), t(np.iinfo(t).max), t(1))] +
              [v for v in VALUES if not isinstance(v, np.integer)])


def _as_python(value):
    if isinstance(value, np.bool_):
        return bool(value)
    return int(value) if isinstance(value, np.integer) else float(value)


def _comparable(slot, value):
    """Untyped, a numpy float keeps its own width while a Python float is FLOAT32."""
    return slot is not None or not isinstance(value, np.floating)


def _spec(slot):
    return ArgSpec(D.SCALAR) if slot is None else ArgSpec(D.SCALAR, slot)


def _packed(slot, value):
    try:
        return _native.worker.pack_scalar(_spec(slot), value, "t", 1)
    except ArgumentError as error:
        return type(error).__name__, error.index


CASES = [(slot, value) for slot in SLOTS for value in VALUES if _comparable(slot, value)]


@pytest.mark.parametrize("slot", SLOTS, ids=lambda d: "untyped" if d is None else d.name)
def test_the_packer_passes_a_numpy_number_like_the_python_number(slot):
    for value in VALUES:
        if _comparable(slot, value):
            assert _packed(slot, value) == _packed(slot, _as_python(value)), (slot, repr(value))


@pytest.mark.parametrize("value", [np.int64(3), np.int8(-5), np.uint64(2 ** 64 - 1),
                                   np.uint32(7), np.int32(-2 ** 31)], ids=repr)
def test_a_numpy_int_of_another_width_converts(value):
    for slot in (DataType.INT64, DataType.UINT64, DataType.INT32, DataType.FLOAT32,
                 DataType.FLOAT64):
        as_int = _packed(slot, int(value))
        if not isinstance(as_int, tuple):
            assert _packed(slot, value) == as_int


def test_out_of_range_names_the_argument_and_the_range():
    message = r"argument 1 \(SCALAR INT32\): 2147483648 is out of range for INT32 \(-2147483648\.\."
    with pytest.raises(ArgumentError, match=message + r"2147483647\)") as err:
        _native.worker.pack_scalar(ArgSpec(D.SCALAR, DataType.INT32), np.int64(2 ** 31), "t", 1)
    assert err.value.index == 1 and not isinstance(err.value, ArgumentTypeError)
    assert isinstance(err.value, ValueError)
    with pytest.raises(ArgumentError, match=r"-1 is out of range for UINT8 \(0\.\.255\)"):
        _native.worker.pack_scalar(ArgSpec(D.SCALAR, DataType.UINT8), np.int8(-1), "t", 1)
    with pytest.raises(ArgumentError, match=r"300 is out of range for UINT8 \(0\.\.255\)"):
        _native.worker.pack_scalar(ArgSpec(D.SCALAR, DataType.UINT8), 300, "t", 1)


@pytest.fixture(scope="module")
def runners(compiler):
    """{slot: (level 2, level 3, kernel mode)}: each runs y[0] = the scalar's bits and
    returns them, or the refusal's class and index."""
    binary = compiler.compile_kernel(STORE_BITS, "aiv")
    sim.set_device(2)
    stream = sim.Stream()
    dy = sim.DeviceArray.zeros(1, np.int64, stream=stream)
    with Worker(level=2, device_id=0) as w2, Worker(level=3, device_ids=[1]) as w3, \
            Worker(level=2, execution_mode="kernel", device_id=2) as wk:
        w2.init()
        w3.init()
        sim.set_device(2)   # kernel mode runs on the caller's current device
        wk.init(config=CallConfig())

        def outcome(run, read):
            try:
                run()
            except ArgumentError as error:
                return type(error).__name__, error.index
            return int(read()) & (2 ** 64 - 1)

        runs = {}
        for slot in SLOTS:
            scalar = D.SCALAR if slot is None else (D.SCALAR, slot)
            program = ChipCallable.from_kernel(
                CoreCallable.build([(D.OUT, DataType.INT64, 1), scalar], binary))
            h2, h3, cid = w2.register(program), w3.register(program), wk.kernel_prepare_callable(program)
            y = np.zeros(1, np.int64)

            def level2(value, h2=h2, y=y):
                return outcome(lambda: w2.run(h2, y, value), lambda: y[0])

            def level3(value, h3=h3, y=y):
                return outcome(lambda: w3.run(lambda o, a: o.submit(h3, y, value)), lambda: y[0])

            def kernel(value, cid=cid, dy=dy):
                def launch():
                    sim.set_device(2)
                    wk.kernel_launch(cid, dy, value, caller_stream=stream)
                    stream.synchronize()
                return outcome(launch, lambda: dy.numpy()[0])

            runs[slot] = (level2, level3, kernel)
        yield runs, w3
        stream.synchronize()
        runs.clear()
    del dy
    gc.collect()   # the free of dy is enqueued on the stream: before the stream goes
    stream.synchronize()
    stream.destroy()


@pytest.mark.parametrize("slot", SLOTS, ids=lambda d: "untyped" if d is None else d.name)
def test_levels_2_3_and_kernel_mode_pass_a_numpy_number_like_the_python_number(runners, slot):
    runs, w3 = runners
    for value in RUN_VALUES:
        if not _comparable(slot, value):
            continue
        expected = _packed(slot, _as_python(value))
        for level, run in zip(("level 2", "level 3", "kernel mode"), runs[slot]):
            assert run(value) == expected, (level, repr(value))
            if isinstance(expected, tuple) and level == "level 3":
                assert w3.last_run_stats["tasks"] == 0   # refused before anything was enqueued


@pytest.mark.parametrize("value, hint", [
    (np.array(3), r"got numpy\.ndarray \(a 0-d array: pass x\.item\(\) or x\[\(\)\]\)"),
    (np.longdouble(1.5), r"dtype float128 has no DataType \(pass a numpy int, float or bool"),
    (np.complex64(1), r"dtype complex64 has no DataType \(pass a numpy int, float or bool")],
    ids=lambda v: type(v).__name__)
def test_a_value_that_is_no_scalar_says_what_to_pass(value, hint):
    with pytest.raises(ArgumentTypeError, match=hint):
        _native.worker.pack_scalar(ArgSpec(D.SCALAR, DataType.INT32), value, "t", 1)
