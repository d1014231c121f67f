"""simpler.task_interface.ChipWorker (Python wrapper of the C++ ChipWorker)."""
from __future__ import annotations

import numpy as np
import pytest

import simpler
from simpler import sim
from simpler.errors import (PTO_RUNTIME_ERR_INVALID_ARGUMENT, PTO_RUNTIME_ERR_INVALID_STATE,
                            ChipWorkerError, UnsupportedRuntimeOperation)
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor, ChipWorker, DataType


def bins(runtime="tensormap_and_ringbuffer"):
    return simpler.find_build("a2a3sim", runtime)


def test_static_probe():
    assert ChipWorker.probe_kernel_mode_supported(bins()) is True
    assert ChipWorker.probe_kernel_mode_supported(bins("host_build_graph")) is False


def test_program_mode_lifecycle_and_memory():
    w = ChipWorker()
    assert w.state == "NEW" and w.kernel_mode_supported is False
    w.init(1, bins())
    assert w.state == "INITIALIZED" and w.mode == "program"
    ptr = w.malloc(256)
    assert w.committed_device_memory() >= 256
    data = np.arange(64, dtype=np.float32)
    w.copy_to(ptr, data)
    out = np.empty_like(data)
    w.copy_from(out, ptr)
    np.testing.assert_array_equal(out, data)
    w.free(ptr)
    w.finalize()
    w.finalize()  # idempotent
    assert w.state == "CLOSED"
    with pytest.raises(ChipWorkerError) as err:
        w.init(1, bins())
    assert err.value.code == PTO_RUNTIME_ERR_INVALID_STATE


def test_program_mode_run(add_scalar_callable):
    w = ChipWorker()
    w.init(2, bins())
    try:
        handle = w.register(add_scalar_callable)
        x = np.arange(128, dtype=np.float32)
        y = np.zeros_like(x)
        args = ChipStorageTaskArgs()
        args.add_tensor(ChipTensor.from_array(x))
        args.add_tensor(ChipTensor.from_array(y))
        args.add_scalar_f32(3.0)
        w.run(handle, args)
        np.testing.assert_array_equal(y, x + 3)
    finally:
        w.finalize()


def test_kernel_mode(add_scalar_callable):
    sim.set_device(0)
    stream = sim.Stream()
    x = np.arange(256, dtype=np.float32)
    dx, dy = sim.malloc(x.nbytes), sim.malloc(x.nbytes)
    sim.memcpy_htod(dx, x)
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.make(dx, (256,), DataType.FLOAT32))
    args.add_tensor(ChipTensor.make(dy, (256,), DataType.FLOAT32))
    args.add_scalar_f32(-1.0)
    w = ChipWorker()
    w.kernel_init(0, bins(), CallConfig())
    try:
        assert w.kernel_mode_supported is True
        assert w.generation > 0
        cid = w.kernel_prepare_callable(add_scalar_callable)
        with pytest.raises(ChipWorkerError, match="caller_stream") as err:
            w.kernel_launch(cid, args, 0)
        assert err.value.code == PTO_RUNTIME_ERR_INVALID_ARGUMENT
        w.kernel_launch(cid, args, stream.handle)
        stream.synchronize()
        y = np.empty_like(x)
        sim.memcpy_dtoh(y, dy)
        np.testing.assert_array_equal(y, x - 1)
    finally:
        w.finalize()
        sim.free(dx)
        sim.free(dy)
        stream.destroy()
    assert w.state == "CLOSED" and w.committed_device_memory() == 0


def test_kernel_init_on_hbg_is_unsupported():
    sim.set_device(0)
    w = ChipWorker()
    with pytest.raises(UnsupportedRuntimeOperation, match="kernel mode") as err:
        w.kernel_init(0, bins("host_build_graph"), CallConfig())
    assert isinstance(err.value, NotImplementedError)
    assert err.value.status_name == "PTO_RUNTIME_ERR_UNSUPPORTED"
    assert w.state == "FAILED"
    w.finalize()  # nothing bound: no-op


def test_unloadable_build_names_the_path(tmp_path):
    garbage = tmp_path / "libhost_runtime.so"
    garbage.write_bytes(b"not an ELF file")
    real = bins()
    broken = simpler.RuntimeBins(platform=real.platform, runtime=real.runtime,
                                 host_lib_path=str(garbage), sim_context_path=real.sim_context_path)
    w = ChipWorker()
    with pytest.raises(ChipWorkerError, match="cannot load runtime build") as err:
        w.init(0, broken)
    assert str(garbage) in str(err.value)
    assert w.state == "NEW"  # nothing bound: a retry with a good build is allowed
    w.init(0, real)
    w.finalize()


def test_context_arguments_of_the_wrong_type_are_typed_and_take_no_device():
    """init/kernel_init/probe refuse a non-int (or bool) device id, bins that are not a
    RuntimeBins and a config that is not a CallConfig with SimplerTypeError naming the
    parameter; the worker stays NEW and no device is claimed."""
    from simpler.errors import SimplerTypeError
    build = bins()
    cw = ChipWorker()
    cases = [
        (lambda: cw.init(True, build), "ChipWorker.init: device_id must be an int, got bool"),
        (lambda: cw.init(np.bool_(False), build), "device_id must be an int, got bool"),
        (lambda: cw.init("0", build), "device_id must be an int, got str"),
        (lambda: cw.init(0, "bins"), r"bins must be a RuntimeBins \(simpler.find_build"),
        (lambda: cw.init(0, build, 5), "prewarm_config must be a CallConfig or None, got int"),
        (lambda: cw.kernel_init(0, build, None), "kernel_init: config must be a CallConfig, got NoneType"),
        (lambda: cw.kernel_init(1.0, build, CallConfig()), "device_id must be an int, got float"),
        (lambda: ChipWorker.probe_kernel_mode_supported(5), "bins must be a RuntimeBins"),
    ]
    for call, words in cases:
        with pytest.raises(SimplerTypeError, match=words):
            call()
    assert cw.state == "NEW"
    cw.init(np.int64(0), build)  # numpy integers are ints
    assert (cw.state, cw.device_id) == ("INITIALIZED", 0)
    from simpler.errors import SimplerValueError
    for call, kind, words in (
            (lambda: cw.malloc(True), SimplerTypeError, "ChipWorker.malloc: size must be an int, got bool"),
            (lambda: cw.malloc("16"), SimplerTypeError, "size must be an int, got str"),
            (lambda: cw.malloc(0), SimplerValueError, "size must be >= 1, got 0"),
            (lambda: cw.free("x"), SimplerTypeError, "ChipWorker.free: ptr must be an int, got str"),
            (lambda: cw.copy_from(bytearray(4), -1), SimplerValueError, "src must be >= 0"),
            (lambda: cw.copy_to(2 ** 64, b"x"), SimplerValueError, "dst 18446744073709551616 does not fit")):
        with pytest.raises(kind, match=words):
            call()
    ptr = cw.malloc(np.uint32(16))
    cw.copy_to(ptr, b"0123456789abcdef", np.int64(16))
    out = bytearray(16)
    cw.copy_from(out, ptr)
    assert bytes(out) == b"0123456789abcdef"
    cw.free(ptr)
    cw.finalize()


def test_run_with_a_config_that_is_not_a_callconfig_is_a_typed_error(add_scalar_callable):
    # Was pybind11's bare TypeError ("incompatible function arguments"), no SimplerError.
    from simpler.errors import SimplerTypeError
    cw = ChipWorker()
    cw.init(0, bins())
    try:
        handle = cw.register(add_scalar_callable)
        with pytest.raises(SimplerTypeError, match="ChipWorker.run: config must be a CallConfig or None, got str"):
            cw.run(handle, ChipStorageTaskArgs(), "config")
    finally:
        cw.finalize()


def test_run_after_finalize_names_the_state_not_the_handle(add_scalar_callable):
    # Was INVALID_ARGUMENT "unknown callable handle": the handle was fine, the worker closed.
    from simpler.errors import ChipWorkerError
    cw = ChipWorker()
    cw.init(0, bins())
    handle = cw.register(add_scalar_callable)
    cw.finalize()
    with pytest.raises(ChipWorkerError, match=r"ChipWorker.run: requires an initialized worker \(state CLOSED\)") as e:
        cw.run(handle, ChipStorageTaskArgs())
    assert e.value.code == PTO_RUNTIME_ERR_INVALID_STATE
