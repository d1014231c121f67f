"""Arguments in signature order (issue 11.1, issue 17.3): sim.DeviceArray, DLPack tensors,
host arrays where the mode allows them, Python/numpy numbers; refusals are typed, name the
argument and leave nothing enqueued."""
from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

from simpler import Worker, sim
from simpler.errors import (PTO_RUNTIME_ERR_INVALID_ARGUMENT, ArgumentError, ArgumentTypeError,
                            SimplerError)
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor, DataType

N = 4096


@pytest.fixture
def kernel(add_scalar_kernel_worker):
    """(worker, cid, stream, x, dx, dy) on device 0; everything released afterwards."""
    w, cid, stream = add_scalar_kernel_worker
    x = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    dx = sim.DeviceArray.from_numpy(x, stream=stream)
    dy = sim.DeviceArray.zeros(N, np.float32, stream=stream)
    return w, cid, stream, x, dx, dy


def assert_nothing_enqueued(stream):
    assert sim.call_count("launch") == 0 and sim.call_count("host_func") == 0
    assert stream.query()


# ---- sim.DeviceArray ------------------------------------------------------------------

def test_device_array_owns_memory_with_a_zero_copy_numpy_view():
    sim.set_device(0)
    free_before, _ = sim.mem_get_info()
    a = sim.DeviceArray((4, 8), np.float32)
    assert a.shape == (4, 8) and a.dtype == np.float32 and a.data_type == DataType.FLOAT32
    assert a.nbytes == 128 and a.device == 0 and a.ndim == 2 and a.size == 32 and len(a) == 4
    assert sim.pointer_device(a.ptr, a.nbytes) == 0
    view = a.numpy()
    view[:] = np.arange(32, dtype=np.float32).reshape(4, 8)
    host = np.empty(32, np.float32)
    sim.memcpy_dtoh(host, a.ptr)  # the view wrote device memory itself
    np.testing.assert_array_equal(host, np.arange(32))
    np.testing.assert_array_equal(a.to_numpy().ravel(), np.arange(32))
    b = sim.DeviceArray.from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert b.shape == (2, 3) and b.dtype == np.int32
    np.testing.assert_array_equal(b.to_numpy(), np.arange(6).reshape(2, 3))
    assert sim.mem_get_info()[0] < free_before
    del view, a, b
    gc.collect()
    assert sim.mem_get_info()[0] == free_before  # freed when collected


def test_device_array_free_is_idempotent_and_a_freed_array_is_refused(kernel):
    w, cid, stream, x, dx, dy = kernel
    a = sim.DeviceArray(N, np.float32)
    ptr = a.ptr
    a.free()
    a.free()
    assert a.ptr == 0 and "freed" in repr(a)
    with pytest.raises(SimplerError):
        sim.pointer_device(ptr)
    sim.reset_counters()
    with pytest.raises(ArgumentError, match="argument 0 .*freed") as err:
        w.kernel_launch(cid, a, dy, 1.0, caller_stream=stream)
    assert err.value.index == 0
    assert_nothing_enqueued(stream)


def test_a_device_array_launched_then_freed_is_refused(kernel):
    # The array's tensor is made once; every launch still checks the array is live.
    w, cid, stream, x, dx, dy = kernel
    a = sim.DeviceArray(N, np.float32)
    w.kernel_launch(cid, a, dy, 1.0, caller_stream=stream)
    stream.synchronize()
    a.free()
    sim.reset_counters()
    with pytest.raises(ArgumentError, match="argument 0 .*freed") as err:
        w.kernel_launch(cid, a, dy, 1.0, caller_stream=stream)
    assert err.value.index == 0
    assert_nothing_enqueued(stream)


def test_device_array_tied_to_a_stream_is_freed_in_stream_order():
    sim.set_device(0)
    stream = sim.Stream()
    gate = threading.Event()
    stream.host_func(lambda: gate.wait(30))  # holds the stream
    a = sim.DeviceArray(1 << 16, np.uint8, stream=stream)
    ptr = a.ptr
    del a
    gc.collect()
    assert sim.pointer_device(ptr) == 0  # still allocated: queued work may use it
    gate.set()
    stream.synchronize()
    with pytest.raises(SimplerError):
        sim.pointer_device(ptr)
    stream.destroy()


def test_device_array_dlpack_device_and_round_trips():
    import torch
    sim.set_device(1)
    a = sim.DeviceArray.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert a.__dlpack_device__() == (sim.DLPACK_DEVICE_TYPE, 1) == (12, 1)
    with pytest.raises((RuntimeError, BufferError, TypeError)):
        np.from_dlpack(a)  # numpy imports CPU tensors only: use a.numpy()
    host_view = np.from_dlpack(a.numpy())  # numpy marks DLPack imports read-only
    a.numpy()[0, 0] = 42
    assert host_view[0, 0] == 42 and host_view.ctypes.data == a.ptr  # same bytes, no copy
    t = torch.from_dlpack(a.numpy())
    t[2, 3] = -1
    assert a.to_numpy()[2, 3] == -1 and t.data_ptr() == a.ptr
    # A capsule that nobody consumes releases its reference.
    capsule = a.__dlpack__()
    del capsule
    del t, host_view
    gc.collect()
    sim.set_device(0)


# ---- kernel mode ------------------------------------------------------------------------

def test_kernel_launch_with_device_arrays_and_a_python_float(kernel):
    w, cid, stream, x, dx, dy = kernel
    w.kernel_launch(cid, dx, dy, 2.5, caller_stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(dy.numpy(), x + np.float32(2.5))
    w.kernel_launch(cid, [dx, dy, np.float32(-1.0)], caller_stream=stream.handle)  # one list
    stream.synchronize()
    np.testing.assert_array_equal(dy.numpy(), x - 1)
    args = ChipStorageTaskArgs()  # the old form keeps working
    args.add_tensor(ChipTensor.make(dx.ptr, (N,), DataType.FLOAT32))
    args.add_tensor(ChipTensor.make(dy.ptr, (N,), DataType.FLOAT32))
    args.add_scalar_f32(3.0)
    w.kernel_launch(cid, args, caller_stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(dy.numpy(), x + 3)


def test_kernel_launch_borrows_dlpack_tensors_and_host_views_of_device_memory(kernel):
    import torch
    w, cid, stream, x, dx, dy = kernel
    # torch and numpy views of sim memory are CPU tensors over device bytes: device memory.
    tx = torch.from_dlpack(dx.numpy())
    w.kernel_launch(cid, tx, dy.numpy(), 0.5, caller_stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(dy.numpy(), x + np.float32(0.5))

    class SimTensor:  # a third-party producer on the simulated device
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, stream=None):
            return self.array.__dlpack__()

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    w.kernel_launch(cid, SimTensor(dx), SimTensor(dy), 4.0, caller_stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(dy.numpy(), x + 4)
    assert sim.pointer_device(dx.ptr) == 0  # borrowed: nothing freed or copied


def test_a_launch_from_inside_dlpack_packs_apart_from_the_outer_launch(kernel):
    # The outer launch packs into a per-thread scratch; a launch made while it packs
    # (from a producer's __dlpack__) must pack elsewhere and leave the outer args intact.
    w, cid, stream, x, dx, dy = kernel
    x2 = np.arange(N, dtype=np.float32)
    dw = sim.DeviceArray.from_numpy(x2, stream=stream)
    dz = sim.DeviceArray.zeros(N, np.float32, stream=stream)

    class Reentrant:
        def __dlpack__(self, stream=None):
            w.kernel_launch(cid, dw, dy, 1.0, caller_stream=caller)
            return dx.__dlpack__()

        def __dlpack_device__(self):
            return dx.__dlpack_device__()

    caller = stream  # (__dlpack__'s own parameter is named stream)
    w.kernel_launch(cid, Reentrant(), dz, 4.0, caller_stream=caller)
    stream.synchronize()
    np.testing.assert_array_equal(dy.numpy(), x2 + 1)
    np.testing.assert_array_equal(dz.numpy(), x + 4)


def test_a_torch_tensor_that_requires_grad_is_refused_with_detach_as_the_fix(kernel):
    """torch will not export a tensor autograd tracks; the hint says what to pass instead,
    not to re-export it (round 4 said 'pass the tensor itself', which is what was passed)."""
    torch = pytest.importorskip("torch")
    w, cid, stream, x, dx, dy = kernel
    tx = torch.from_dlpack(dx.numpy()).requires_grad_()
    sim.reset_counters()
    with pytest.raises(ArgumentError, match=r"argument 0 .*requires grad: pass "
                                            r"tensor\.detach\(\)") as err:
        w.kernel_launch(cid, tx, dy, 1.0, caller_stream=stream)
    assert err.value.index == 0 and "fresh capsule" not in str(err.value)
    assert_nothing_enqueued(stream)
    w.kernel_launch(cid, tx.detach(), dy, 2.0, caller_stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(dy.numpy(), x + 2)


def test_kernel_launch_refusals_are_typed_name_the_argument_and_enqueue_nothing(kernel):
    import torch
    w, cid, stream, x, dx, dy = kernel
    sim.set_device(1)
    other = sim.DeviceArray(N, np.float32)
    sim.set_device(0)
    wide = sim.DeviceArray(2 * N, np.float32)
    as_int = sim.DeviceArray(N, np.int32)
    readonly = dy.numpy()
    readonly.flags.writeable = False
    sim.reset_counters()
    cases = [
        ((dx, dy), ArgumentTypeError, None, "takes 3 arguments, 2 given"),
        ((dx, dy, 1.0, 2.0), ArgumentTypeError, None, "ChipStorageTaskArgs"),
        ((other, dy, 1.0), ArgumentError, 0, "device 1, the worker uses device 0"),
        ((dx, wide.numpy()[::2], 1.0), ArgumentError, 1, "non-contiguous"),
        ((x, dy, 1.0), ArgumentError, 0, "copy it to the device first"),
        ((dx.numpy()[0:0], dy, 1.0), ArgumentError, 0, r"empty \(0-byte\) array"),
        ((torch.from_numpy(x), dy, 1.0), ArgumentError, 0, r"host array \(torch\.Tensor\)"),
        ((dx, dy, dx), ArgumentTypeError, 2, "expected a Python or numpy number"),
        ((1.0, dy, 1.0), ArgumentTypeError, 0, "expected a tensor"),
        ((dx, readonly, 1.0), ArgumentError, 1, "read-only"),
        ((dx, dy, "1.0"), ArgumentTypeError, 2, "got str"),
        ((dx, dy, 2 ** 64), ArgumentError, 2, "does not fit 64 bits"),
    ]
    for args, kind, index, message in cases:
        with pytest.raises(kind, match=message) as err:
            w.kernel_launch(cid, *args, caller_stream=stream)
        assert err.value.index == index, (args, err.value)
        assert err.value.code == PTO_RUNTIME_ERR_INVALID_ARGUMENT
        assert isinstance(err.value, (ValueError, SimplerError))
        if index is not None:
            assert f"argument {index}" in str(err.value)
    with pytest.raises(TypeError):  # type errors are TypeErrors
        w.kernel_launch(cid, dx, dy, "x", caller_stream=stream)
    with pytest.raises(ValueError):  # value errors are ValueErrors
        w.kernel_launch(cid, other, dy, 1.0, caller_stream=stream)
    # The device check of an int32 tensor passes; an untyped signature takes its dtype.
    assert as_int.dtype == np.int32
    assert_nothing_enqueued(stream)
    w.kernel_launch(cid, dx, dy, 1.0, caller_stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(dy.numpy(), x + 1)


# ---- program mode ----------------------------------------------------------------------

def test_program_run_and_submit_take_host_arrays_device_arrays_and_numbers(add_scalar_callable):
    sim.set_device(0)
    x = np.linspace(-1, 1, N, dtype=np.float32)
    y = np.zeros_like(x)
    with Worker(level=2, device_id=0) as w:
        w.init()
        h = w.register(add_scalar_callable)
        w.run(h, x, y, 2.5)
        np.testing.assert_array_equal(y, x + np.float32(2.5))
        w.submit(h, [x, y, np.float32(-0.5)]).wait(60)
        np.testing.assert_array_equal(y, x - np.float32(0.5))
        dx = sim.DeviceArray.from_numpy(x)
        dy = sim.DeviceArray.zeros(N, np.float32)
        w.run(h, dx, dy, 1.0, config=CallConfig())
        np.testing.assert_array_equal(dy.to_numpy(), x + 1)
        old_form = ChipStorageTaskArgs()  # run(handle, args, config) keeps working
        old_form.add_tensor(ChipTensor.from_array(x))
        old_form.add_tensor(ChipTensor.from_array(y))
        old_form.add_scalar_f32(4.0)
        w.run(h, old_form, None)
        w.run(h, old_form, CallConfig())
        np.testing.assert_array_equal(y, x + 4)
        frozen = np.zeros_like(x)
        frozen.flags.writeable = False
        with pytest.raises(ArgumentError, match="argument 1 .*read-only") as err:
            w.run(h, x, frozen, 1.0)
        assert err.value.index == 1
        with pytest.raises(ArgumentTypeError, match="takes 3 arguments"):
            w.submit(h, x, y)
        with pytest.raises(ArgumentError, match="non-contiguous"):
            w.run(h, np.zeros(2 * N, np.float32)[::2], y, 1.0)


# ---- typed signatures ------------------------------------------------------------------

def test_typed_signature_checks_dtype_and_rank_and_converts_numbers(compiler):
    from simpler.errors import SignatureMismatchError
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    from conftest import PROGRAMS
    f32 = DataType.FLOAT32
    kernel = CoreCallable.build(
        [(D.IN, f32, 1), (D.OUT, f32, 1), (D.SCALAR, f32)],
        compiler.compile_kernel((PROGRAMS / "add_scalar_kernel.cpp").read_text(), "aiv"))
    program = ChipCallable.from_kernel(kernel, block_num=2)
    sim.set_device(0)
    stream = sim.Stream()
    x = np.arange(N, dtype=np.float32)
    dx = sim.DeviceArray.from_numpy(x, stream=stream)
    dy = sim.DeviceArray.zeros(N, np.float32, stream=stream)
    as_int = sim.DeviceArray(N, np.int32, stream=stream)
    square = sim.DeviceArray((64, 64), np.float32, stream=stream)
    with Worker(level=2, execution_mode="kernel", device_id=0) as w:
        w.init(config=CallConfig())
        cid = w.kernel_prepare_callable(program)
        w.kernel_launch(cid, dx, dy, 2, caller_stream=stream)  # an int becomes FLOAT32 2.0
        stream.synchronize()
        np.testing.assert_array_equal(dy.numpy(), x + 2)
        sim.reset_counters()
        cases = [((as_int, dy, 1.0), 0, "expected a FLOAT32 tensor, got INT32"),
                 ((square, dy, 1.0), 0, "expected a tensor of rank 1, got rank 2"),
                 ((dx, dy, True), 2, "expected a FLOAT32 scalar, got bool"),
                 ((dx, dy, np.bool_(True)), 2, "expected a FLOAT32 scalar, got numpy BOOL")]
        for args, index, message in cases:
            with pytest.raises(ArgumentTypeError, match=message) as err:
                w.kernel_launch(cid, *args, caller_stream=stream)
            assert err.value.index == err.value.arg_index == index
            assert isinstance(err.value, SignatureMismatchError)
            assert isinstance(err.value, TypeError) and isinstance(err.value, ValueError)
        assert_nothing_enqueued(stream)
        launch = w.kernel_bind(cid, dx, dy, np.float32(0.5))
        with pytest.raises(ArgumentTypeError, match="FLOAT32 tensor"):
            launch.set_arg(1, as_int)
        launch.launch(caller_stream=stream)
        stream.synchronize()
        np.testing.assert_array_equal(dy.numpy(), x + np.float32(0.5))
        # A numpy float of another width converts like a Python float (it was refused).
        # A numpy int converts like a Python int (it was refused).
        for value in (np.float16(0.25), np.float64(0.1), np.int64(3), np.uint8(200)):
            w.kernel_launch(cid, dx, dy, value, caller_stream=stream)
            stream.synchronize()
            np.testing.assert_array_equal(dy.numpy(), x + np.float32(float(value)))
    del dx, dy, as_int, square
    gc.collect()
    stream.destroy()


def test_program_mode_takes_torch_bfloat16_cpu_tensors(compiler):
    """numpy has no bfloat16, so a torch bfloat16 CPU tensor is read through DLPack itself
    (it was refused as "its DLPack export could not be read"); it runs as a HOST tensor."""
    torch = pytest.importorskip("torch")
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    negate = r'''
#include "simpler/kernel/kernel_abi.h"
extern "C" void kernel_entry(int64_t* args) {  // y = -x over bfloat16: flip the sign bit
  const ChipTensor* x = simpler_tensor_arg(args, 0);
  const ChipTensor* y = simpler_tensor_arg(args, 1);
  const uint16_t* px = (const uint16_t*)simpler_tensor_data(x, 2);
  uint16_t* py = (uint16_t*)simpler_tensor_data(y, 2);
  for (int64_t i = 0; i < x->shapes[0]; ++i) py[i] = (uint16_t)(px[i] ^ 0x8000u);
}
'''
    bf16 = DataType.BFLOAT16
    kernel = CoreCallable.build([(D.IN, bf16, 1), (D.OUT, bf16, 1)],
                                compiler.compile_kernel(negate, "aiv"))
    x = torch.linspace(-2, 2, N, dtype=torch.bfloat16)
    with Worker() as w:
        w.init()
        h = w.register(ChipCallable.from_kernel(kernel))
        y = torch.zeros(N, dtype=torch.bfloat16)
        w.run(h, x, y)
        assert torch.equal(y, -x)
        y = torch.zeros(N, dtype=torch.bfloat16)
        w.submit(h, x, y).wait(60)
        assert torch.equal(y, -x)
        with pytest.raises(ArgumentError, match="argument 1 .*non-contiguous") as err:
            w.run(h, x, torch.zeros(2 * N, dtype=torch.bfloat16)[::2])
        assert err.value.index == 1
        with pytest.raises(ArgumentTypeError, match="expected a BFLOAT16 tensor, got FLOAT16"):
            w.run(h, x.to(torch.float16), y)


def test_a_torch_tensor_dlpack_cannot_export_gets_its_numpy_view_as_the_fix(compiler):
    """torch 1.x has no DLPack bool: the hint names what works (the CPU tensor's numpy()
    view), not a re-export that fails the same way."""
    torch = pytest.importorskip("torch")
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    invert = r'''
#include "simpler/kernel/kernel_abi.h"
extern "C" void kernel_entry(int64_t* args) {  // y = !x over bool bytes
  const ChipTensor* x = simpler_tensor_arg(args, 0);
  const ChipTensor* y = simpler_tensor_arg(args, 1);
  const uint8_t* px = (const uint8_t*)simpler_tensor_data(x, 1);
  uint8_t* py = (uint8_t*)simpler_tensor_data(y, 1);
  for (int64_t i = 0; i < x->shapes[0]; ++i) py[i] = px[i] ? 0 : 1;
}
'''
    kernel = CoreCallable.build([D.IN, D.OUT], compiler.compile_kernel(invert, "aiv"))
    x = torch.arange(8) % 3 == 0
    try:
        x.__dlpack__()
    except RuntimeError:
        pass
    else:
        pytest.skip("this torch exports bool through DLPack")
    with Worker() as w:
        w.init()
        h = w.register(ChipCallable.from_kernel(kernel))
        y = torch.zeros(8, dtype=torch.bool)
        with pytest.raises(ArgumentError, match=r"argument 0 .*pass the tensor's numpy\(\) view") as err:
            w.run(h, x, y)
        assert "fresh capsule" not in str(err.value)
        w.run(h, x.numpy(), y.numpy())
        assert torch.equal(y, ~x)
