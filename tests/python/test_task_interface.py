"""Python bindings of the task-interface types (simpler.task_interface)."""
from __future__ import annotations

import gc
import pickle
import struct
import sys
import weakref

import numpy as np
import pytest

import simpler.errors as errors
import simpler.task_interface as ti
from simpler.task_interface import (AddressSpace, ArgDirection, CallConfig, ChipCallable,
                                    ChipStorageTaskArgs, ChipTensor, CoreCallable, DataType)

IN, OUT, INOUT, SCALAR = ArgDirection.IN, ArgDirection.OUT, ArgDirection.INOUT, ArgDirection.SCALAR


# ---- enums ----------------------------------------------------------------------------

def test_datatype_sizes_names_and_abi_values():
    expected = [("FLOAT32", 4), ("FLOAT16", 2), ("BFLOAT16", 2), ("INT8", 1), ("INT16", 2),
                ("INT32", 4), ("INT64", 8), ("UINT8", 1), ("UINT16", 2), ("UINT32", 4),
                ("UINT64", 8), ("BOOL", 1), ("FLOAT64", 8)]
    assert len(DataType.__members__) == len(expected)
    for value, (name, size) in enumerate(expected):
        dt = DataType.from_name(name)
        assert int(dt) == value and dt.name == name and dt.element_size == size
    with pytest.raises(ValueError, match="dtype"):
        DataType.from_name("float32")


def test_datatype_numpy_mapping_round_trips():
    for dt in DataType.__members__.values():
        if dt == DataType.BFLOAT16:
            continue
        assert DataType.from_numpy(dt.to_numpy()) == dt
        assert dt.to_numpy().itemsize == dt.element_size
    assert DataType.from_numpy(np.float16) == DataType.FLOAT16
    assert DataType.from_numpy("int64") == DataType.INT64
    assert DataType.from_numpy(np.bool_) == DataType.BOOL
    with pytest.raises(TypeError, match="dtype"):
        DataType.from_numpy(np.complex64)
    with pytest.raises(ValueError, match="big-endian"):
        DataType.from_numpy(">f4")


def test_arg_direction_and_address_space_values():
    assert [int(d) for d in (SCALAR, IN, OUT, INOUT)] == [0, 1, 2, 3]
    assert int(AddressSpace.HOST) == 0 and int(AddressSpace.DEVICE) == 1


# ---- ChipTensor -----------------------------------------------------------------------

def test_make_device_tensor_is_contiguous_row_major():
    t = ChipTensor.make(0x4000, [2, 3, 4], DataType.INT16)
    assert t.space == AddressSpace.DEVICE
    assert t.shape == (2, 3, 4) and t.strides == (12, 4, 1)
    assert t.dtype == DataType.INT16 and t.nbytes == 48 and t.buffer_size == 48
    assert t.addr == 0x4000 and t.start_offset == 0 and t.is_contiguous
    assert ChipTensor.make(0x4000, [4], DataType.FLOAT32, buffer_bytes=64).buffer_size == 64


@pytest.mark.parametrize("shape, field", [([], "shape"), ([1] * 6, "shape"), ([2, -1], "shape[1]")])
def test_make_refuses_bad_shapes(shape, field):
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
        ChipTensor.make(0x4000, shape, DataType.FLOAT32)


def test_make_refuses_wrong_types():
    with pytest.raises(TypeError):
        ChipTensor.make(0x4000, [2], "float32")
    with pytest.raises(TypeError):
        ChipTensor.make(-1, [2], DataType.FLOAT32)
    with pytest.raises(ValueError, match="buffer_bytes"):
        ChipTensor.make(0x4000, [4], DataType.FLOAT32, buffer_bytes=8)


def test_views_are_zero_copy_and_follow_the_rules():
    t = ChipTensor.make(0x4000, [4, 6], DataType.FLOAT32)
    rows = t.slice(0, 1, 3)
    assert rows.start_offset == 6 and rows.shape == (2, 6) and rows.strides == (6, 1)
    assert rows.addr == t.addr and rows.data_ptr == 0x4000 + 24
    cols = rows.slice(1, 2, 5)
    assert cols.start_offset == 8 and not cols.is_contiguous
    r = rows.reshape([3, 4])
    assert r.shape == (3, 4) and r.start_offset == 6
    tr = t.transpose(0, 1)
    assert tr.shape == (6, 4) and tr.strides == (1, 6)
    with pytest.raises(ValueError, match="contiguous"):
        tr.reshape([24])
    with pytest.raises(ValueError, match="elements"):
        t.reshape([5, 5])
    with pytest.raises(ValueError, match="slice"):
        t.slice(0, 2, 9)
    with pytest.raises(ValueError, match="dim1"):
        t.transpose(0, 2)


def test_from_array_is_a_host_view_of_the_numpy_memory():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = ChipTensor.from_array(a)
    assert t.space == AddressSpace.HOST
    assert t.addr == a.ctypes.data and t.shape == (4, 6) and t.strides == (6, 1)
    assert t.dtype == DataType.FLOAT32 and t.nbytes == a.nbytes and not t.readonly
    # A strided numpy view maps to element strides over exactly the bytes it spans.
    v = a[1:, ::2]
    tv = ChipTensor.from_array(v)
    assert tv.addr == v.ctypes.data and tv.strides == (6, 2) and tv.shape == (3, 3)
    assert tv.buffer_size == (2 * 6 + 2 * 2 + 1) * 4


def test_from_array_dtypes_and_buffer_objects():
    for np_dtype, dt in [(np.int8, DataType.INT8), (np.uint16, DataType.UINT16),
                         (np.int64, DataType.INT64), (np.float64, DataType.FLOAT64),
                         (np.float16, DataType.FLOAT16), (np.bool_, DataType.BOOL)]:
        assert ChipTensor.from_array(np.zeros(3, dtype=np_dtype)).dtype == dt
    ba = bytearray(b"abcdef")
    t = ChipTensor.from_array(ba)
    assert t.dtype == DataType.UINT8 and t.shape == (6,)
    ro = ChipTensor.from_array(b"xyz")
    assert ro.readonly and ro.shape == (3,)
    bf = ChipTensor.from_array(np.zeros(8, dtype=np.uint16), dtype=DataType.BFLOAT16)
    assert bf.dtype == DataType.BFLOAT16


def test_from_array_refusals_name_the_problem():
    with pytest.raises(TypeError, match="buffer"):
        ChipTensor.from_array([1, 2, 3])
    with pytest.raises(ValueError, match="ndims"):
        ChipTensor.from_array(np.float32(1.0).reshape(()))
    with pytest.raises(ValueError, match="ndims"):
        ChipTensor.from_array(np.zeros((1,) * 6, dtype=np.float32))
    with pytest.raises(ValueError, match="strides"):
        ChipTensor.from_array(np.arange(4, dtype=np.float32)[::-1])
    with pytest.raises(TypeError, match="format"):
        ChipTensor.from_array(np.zeros(2, dtype=np.complex64))
    with pytest.raises(ValueError, match="dtype"):
        ChipTensor.from_array(np.zeros(2, dtype=np.float32), dtype=DataType.INT8)


def test_host_tensor_keeps_its_buffer_exported():
    ba = bytearray(16)
    t = ChipTensor.from_array(ba)
    with pytest.raises(BufferError):
        ba.extend(b"x")  # the export pins the memory: no resize under the tensor
    view = t.slice(0, 0, 4)
    del t
    gc.collect()
    with pytest.raises(BufferError):
        ba.extend(b"x")  # the view still pins it
    del view
    gc.collect()
    ba.extend(b"x")  # released with the last tensor


def test_host_tensor_keeps_the_array_alive():
    a = np.arange(8, dtype=np.int32)
    ref = weakref.ref(a)
    t = ChipTensor.from_array(a)
    del a
    gc.collect()
    assert ref() is not None
    del t
    gc.collect()
    assert ref() is None


# ---- ChipStorageTaskArgs --------------------------------------------------------------

def test_args_pack_tensors_then_scalars():
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.make(0x4000, [8], DataType.FLOAT32))
    args.add_tensor(ChipTensor.from_array(np.zeros(4, np.float32)))
    args.add_scalar(7)
    args.add_scalar(-1)
    args.add_scalar(2**64 - 1)
    args.add_scalar_f32(1.5)
    args.add_scalar_f64(-2.25)
    args.add_scalar_i64(-2)
    assert len(args) == 8 and args.tensor_count == 2 and args.scalar_count == 6
    assert args.scalars == [7, 2**64 - 1, 2**64 - 1, 0x3FC00000,
                            struct.unpack("<Q", struct.pack("<d", -2.25))[0], 2**64 - 2]
    assert args.tensor(1).space == AddressSpace.HOST
    with pytest.raises(ValueError, match="scalar"):
        args.add_tensor(ChipTensor.make(0x4000, [8], DataType.FLOAT32))
    assert args.tensor_count == 2
    with pytest.raises(IndexError):
        args.tensor(2)
    args.clear()
    assert len(args) == 0


def test_args_refuse_bad_scalars_and_overflow():
    args = ChipStorageTaskArgs()
    with pytest.raises(TypeError, match="add_scalar_f32"):
        args.add_scalar(1.5)
    with pytest.raises(TypeError, match="int"):
        args.add_scalar("1")
    with pytest.raises(ValueError, match="64 bits"):
        args.add_scalar(2**64)
    with pytest.raises(ValueError, match="64 bits"):
        args.add_scalar(-(2**63) - 1)
    args.add_scalar(np.int32(5))  # anything with __index__
    for _ in range(ti.CHIP_MAX_SCALAR_ARGS - 1):
        args.add_scalar(0)
    with pytest.raises(ValueError, match="scalar_count"):
        args.add_scalar(0)
    targs = ChipStorageTaskArgs()
    for _ in range(ti.CHIP_MAX_TENSOR_ARGS):
        targs.add_tensor(ChipTensor.make(0x4000, [1], DataType.INT8))
    with pytest.raises(ValueError, match="tensor_count"):
        targs.add_tensor(ChipTensor.make(0x4000, [1], DataType.INT8))


def test_args_keep_host_memory_alive():
    a = np.ones(4, dtype=np.float32)
    ref = weakref.ref(a)
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.from_array(a))
    del a
    gc.collect()
    assert ref() is not None
    del args
    gc.collect()
    assert ref() is None


# ---- CallConfig -----------------------------------------------------------------------

def test_call_config_keywords_and_attributes():
    c = CallConfig(enable_swimlane=True, output_prefix="/tmp/x", aicpu_thread_num=4,
                   task_window_size=64)
    assert c.enable_swimlane and not c.dump_args and c.output_prefix == "/tmp/x"
    assert c.aicpu_thread_num == 4 and c.task_window_size == 64
    c.validate()
    c.heap_ring_bytes = 8192
    assert c.to_dict()["heap_ring_bytes"] == 8192
    assert c == c.copy() and c != CallConfig()
    assert "task_window_size=64" in repr(c)
    CallConfig().validate()


@pytest.mark.parametrize("fields, name", [
    ({"dump_args": True}, "output_prefix"),
    ({"enable_profiling": True, "output_prefix": ""}, "output_prefix"),
    ({"dump_dep_graph": True, "output_prefix": "p" * 256}, "output_prefix"),
    ({"aicpu_thread_num": 1}, "aicpu_thread_num"),
    ({"aicpu_thread_num": 17}, "aicpu_thread_num"),
    ({"task_window_size": 6}, "task_window_size"),
    ({"heap_ring_bytes": 100}, "heap_ring_bytes"),
    ({"dep_pool_size": 8}, "dep_pool_size"),
    ({"tensormap_capacity": 2}, "tensormap_capacity"),
])
def test_call_config_validate_names_the_field(fields, name):
    c = CallConfig(**fields)
    with pytest.raises(ValueError, match=name):
        c.validate()


def test_call_config_type_and_range_errors_name_the_field():
    with pytest.raises(TypeError, match="unknown field 'window'"):
        CallConfig(window=4)
    with pytest.raises(TypeError, match="CallConfig.enable_swimlane"):
        CallConfig(enable_swimlane="yes")
    with pytest.raises(TypeError, match="CallConfig.task_window_size"):
        CallConfig(task_window_size=4.0)
    with pytest.raises(ValueError, match="CallConfig.heap_ring_bytes"):
        CallConfig(heap_ring_bytes=-1)
    with pytest.raises(ValueError, match="CallConfig.aicpu_thread_num"):
        CallConfig(aicpu_thread_num=2**31)
    c = CallConfig()
    with pytest.raises(TypeError, match="CallConfig.output_prefix"):
        c.output_prefix = 5
    with pytest.raises(TypeError):
        CallConfig(True)  # keywords only


# ---- callables ------------------------------------------------------------------------

def test_core_callable_build_and_accessors():
    k = CoreCallable.build([IN, OUT, SCALAR], b"kernel-bytes")
    assert k.signature == [IN, OUT, SCALAR]
    assert k.binary == b"kernel-bytes"
    img = bytes(k)
    assert img == k.bytes() and len(k) == len(img) and img[:4] == b"CORE"
    assert CoreCallable.from_bytes(img) == k
    assert CoreCallable.from_bytes(bytearray(img)).binary == b"kernel-bytes"
    assert CoreCallable.build([1, 0], memoryview(b"x")).signature == [IN, SCALAR]
    assert pickle.loads(pickle.dumps(k)) == k


def test_core_callable_refusals():
    with pytest.raises(ValueError, match="binary"):
        CoreCallable.build([IN], b"")
    with pytest.raises(TypeError, match="binary"):
        CoreCallable.build([IN], "text")
    with pytest.raises(ValueError, match=r"signature\[1\]"):
        CoreCallable.build([IN, 7], b"x")
    with pytest.raises(TypeError, match=r"signature\[0\]"):
        CoreCallable.build(["IN"], b"x")
    with pytest.raises(ValueError, match="CHIP_MAX_SIGNATURE"):
        CoreCallable.build([SCALAR] * (ti.CHIP_MAX_SIGNATURE + 1), b"x")
    with pytest.raises(ValueError, match=r"signature\[2\]"):
        CoreCallable.build([IN, SCALAR, OUT], b"x")
    with pytest.raises(ValueError, match="magic"):
        CoreCallable.from_bytes(b"\0" * 64)


def test_chip_callable_build_and_accessors():
    k0 = CoreCallable.build([IN, OUT], b"k0")
    k9 = CoreCallable.build([INOUT], b"k9")
    chip = ChipCallable.build([IN, OUT, SCALAR], "orch_entry", b"orch-binary",
                              children=[(9, k9), (0, k0)])
    assert chip.func_name == "orch_entry"
    assert chip.signature == [IN, OUT, SCALAR]
    assert chip.binary == b"orch-binary"
    assert chip.func_ids == [0, 9]
    children = chip.children
    assert [fid for fid, _ in children] == [0, 9]
    assert children[0][1] == k0 and children[1][1].binary == b"k9"
    img = bytes(chip)
    assert img[:4] == b"CHIP" and len(img) % 8 == 0
    again = ChipCallable.from_bytes(img)
    assert again == chip and again.func_name == "orch_entry"
    assert pickle.loads(pickle.dumps(chip)) == chip
    assert ChipCallable.build([], "f", b"x").children == []


@pytest.mark.parametrize("kwargs, pattern", [
    ({"func_name": ""}, "func_name"),
    ({"func_name": "1abc"}, "func_name"),
    ({"func_name": "a" * (ti.CHIP_MAX_FUNC_NAME + 1)}, "func_name"),
    ({"children": [(64, None)]}, r"children\[0\]\.func_id"),
    ({"children": [(-1, None)]}, r"children\[0\]\.func_id"),
    ({"children": [(1, None), (1, None)]}, r"children\[1\]\.func_id: 1 is duplicated"),
    ({"binary": b""}, "binary"),
])
def test_chip_callable_build_refusals(kwargs, pattern):
    k = CoreCallable.build([IN], b"k")
    args = {"signature": [IN], "func_name": "f", "binary": b"orch", "children": []}
    args.update(kwargs)
    args["children"] = [(fid, k) for fid, _ in args["children"]]
    with pytest.raises(ValueError, match=pattern):
        ChipCallable.build(**args)


def test_chip_callable_children_type_errors():
    with pytest.raises(TypeError, match=r"children\[0\]"):
        ChipCallable.build([], "f", b"x", children=[(1, b"not a callable")])
    with pytest.raises(TypeError, match=r"children\[0\]"):
        ChipCallable.build([], "f", b"x", children=[3])


def test_chip_callable_from_bytes_refuses_corrupt_images():
    img = bytearray(bytes(ChipCallable.build([IN], "f", b"orch",
                                             children=[(3, CoreCallable.build([IN], b"k"))])))
    for n in range(len(img)):
        with pytest.raises(ValueError):
            ChipCallable.from_bytes(bytes(img[:n]))
    with pytest.raises(ValueError, match="total_size"):
        ChipCallable.from_bytes(bytes(img) + b"\0" * 8)
    bad = bytearray(img)
    bad[4] = 9
    with pytest.raises(ValueError, match="version"):
        ChipCallable.from_bytes(bytes(bad))
    with pytest.raises(ValueError, match="magic"):
        ChipCallable.from_bytes(bytes(CoreCallable.build([IN], b"k")))


# ---- module surface -------------------------------------------------------------------

def test_errors_are_reexported():
    assert ti.ChipWorkerError is errors.ChipWorkerError
    assert ti.UnsupportedRuntimeOperation is errors.UnsupportedRuntimeOperation
    assert ti.PTO_RUNTIME_ERR_BASE == -1000
    assert ti.PTO_RUNTIME_ERR_UNSUPPORTED == -1001
    assert ti.PTO_RUNTIME_ERR_TIMEOUT == errors.PTO_RUNTIME_ERR_TIMEOUT


def test_chip_worker_is_loaded_lazily(monkeypatch):
    import types
    fake = types.ModuleType("simpler.chip_worker")
    fake.ChipWorker = type("ChipWorker", (), {})
    monkeypatch.setitem(sys.modules, "simpler.chip_worker", fake)
    # Put back exactly what was cached before (possibly nothing): the lazy lookup caches
    # the fake in the module's globals, which must not leak into later tests.
    saved = ti.__dict__.pop("ChipWorker", None)
    try:
        assert ti.ChipWorker is fake.ChipWorker
    finally:
        ti.__dict__.pop("ChipWorker", None)
        if saved is not None:
            ti.__dict__["ChipWorker"] = saved
    with pytest.raises(AttributeError):
        ti.NoSuchName


def test_random_bit_flips_in_a_real_callable_are_typed_errors(add_scalar_callable):
    """Issue 16: one corrupted ELF field used to crash register(); the image digest refuses
    every flipped bit before anything is loaded (a ValueError naming the digest or field)."""
    import random

    img = bytes(add_scalar_callable)
    rng = random.Random(16)
    for _ in range(300):
        bad = bytearray(img)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(bad))
            bad[at] ^= 1 << rng.randrange(8)
        if bad == bytearray(img):
            continue
        with pytest.raises(ValueError):
            ChipCallable.from_bytes(bytes(bad))
    bad = bytearray(img)
    bad[len(bad) // 2] ^= 0x10  # inside the orchestration ELF
    with pytest.raises(ValueError, match="digest"):
        ChipCallable.from_bytes(bytes(bad))
