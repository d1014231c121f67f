"""A third-party DLPack producer's own fields (docs/kernel-mode.md, "Errors"): a negative
or overflowing shape, or a __dlpack_device__ that is not a pair, is an ArgumentError naming
the argument's index, raised before anything is enqueued; a well-formed producer over sim
device memory launches and computes what numpy does."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from simpler import sim
from simpler.errors import PTO_RUNTIME_ERR_INVALID_ARGUMENT, ArgumentError


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):  # DLManagedTensor of DLPack 0.6, no deleter
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Producer:
    """A float32 tensor at `ptr` with the given shape, exported as a hand-made capsule."""

    def __init__(self, ptr, shape, device=(sim.DLPACK_DEVICE_TYPE, 0)):
        self.ptr, self.shape, self.device = ptr, shape, device
        self._keep = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        shape = (ctypes.c_int64 * max(1, len(self.shape)))(*self.shape)
        managed = _Managed(_DLTensor(self.ptr, _Device(sim.DLPACK_DEVICE_TYPE, 0), len(self.shape),
                                     _DType(2, 32, 1), shape, None, 0), None, None)
        self._keep += [shape, managed]  # alive as long as the producer
        return _capsule_new(ctypes.addressof(managed), b"dltensor", None)


@pytest.fixture
def kernel(add_scalar_kernel_worker):
    w, cid, stream = add_scalar_kernel_worker
    x = np.arange(64, dtype=np.float32)
    return w, cid, stream, x, sim.DeviceArray.from_numpy(x, stream=stream), \
        sim.DeviceArray.zeros(64, np.float32, stream=stream)


def test_a_well_formed_producer_over_device_memory_launches(kernel):
    w, cid, stream, x, dx, dy = kernel
    w.kernel_launch(cid, Producer(dx.ptr, [64]), Producer(dy.ptr, [64]), 1.5,
                    caller_stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(dy.numpy(), x + np.float32(1.5))
    w.kernel_launch(cid, Producer(dx.ptr, [0]), Producer(dy.ptr, [0]), 9.0,
                    caller_stream=stream)  # empty, inside device memory: nothing to do
    stream.synchronize()
    np.testing.assert_array_equal(dy.numpy(), x + np.float32(1.5))


@pytest.mark.parametrize("ptr", [None, 64])
def test_an_empty_producer_outside_device_memory_is_an_argument_error(kernel, ptr):
    # Its one checked byte (the buffer the runtime sees) is not device memory: refused by
    # the packer naming the argument, like a non-empty one (was the runtime's ChipWorkerError).
    w, cid, stream, x, dx, dy = kernel
    sim.reset_counters()
    with pytest.raises(ArgumentError, match="not inside a live sim device allocation") as err:
        w.kernel_launch(cid, dx, Producer(ptr, [0]), 1.0, caller_stream=stream)
    assert err.value.index == 1
    assert sim.call_count("launch") == 0


@pytest.mark.parametrize("shape, match", [
    ([-4], r"shape\[0\] is -4"),
    ([-4, -4], r"shape\[0\] is -4"),          # the product is positive: still refused
    ([4, -1], r"shape\[1\] is -1"),
    ([2 ** 62, 4], "its byte size overflows 64 bits"),  # 2**66 bytes: wraps to 0
    ([2 ** 40, 2 ** 40], "its byte size overflows 64 bits"),
])
def test_a_producers_bad_shape_is_an_argument_error_naming_it(kernel, shape, match):
    w, cid, stream, x, dx, dy = kernel
    sim.reset_counters()
    with pytest.raises(ArgumentError, match=r"argument 0 \(IN\): " + match) as err:
        w.kernel_launch(cid, Producer(dx.ptr, shape), dy, 1.0, caller_stream=stream)
    assert err.value.index == 0 and err.value.code == PTO_RUNTIME_ERR_INVALID_ARGUMENT
    assert sim.call_count("launch") == 0
    bound = w.kernel_bind(cid, dx, dy, 1.0)
    with pytest.raises(ArgumentError) as err:
        bound.set_arg(1, Producer(dy.ptr, shape))
    assert err.value.index == 1


@pytest.mark.parametrize("device", [(12, 0, 0), (12,), ()])
def test_a_dlpack_device_that_is_not_a_pair_is_an_argument_error_naming_it(kernel, device):
    w, cid, stream, x, dx, dy = kernel
    sim.reset_counters()
    with pytest.raises(ArgumentError, match=r"argument 1 \(OUT\): .*__dlpack_device__") as err:
        w.kernel_launch(cid, dx, Producer(dy.ptr, [64], device), 1.0, caller_stream=stream)
    assert err.value.index == 1
    assert sim.call_count("launch") == 0
