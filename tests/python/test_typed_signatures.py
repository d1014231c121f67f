"""Typed signatures (issue 17, item 2): dtypes/ranks per argument, the core type a kernel
was compiled for, and the checks run/submit/kernel_launch and the orchestration's submit
make before anything is enqueued."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from simpler import Worker, sim
from simpler import _native
from simpler.errors import ChipWorkerError, SignatureMismatchError, SimplerError
from simpler.kernel_compiler import KernelBinary
from simpler.task_interface import (ArgDirection as D, ArgSpec, CallConfig, ChipCallable,
                                    ChipStorageTaskArgs, ChipTensor, CoreCallable, DataType)

from conftest import _source

F32 = DataType.FLOAT32
TYPED = [(D.IN, F32, 1), (D.OUT, F32), (D.SCALAR, F32)]


def test_signature_entries_accept_tuples_argspecs_and_plain_directions():
    c = CoreCallable.build([(D.IN, F32, 2), ArgSpec(D.OUT, np.float32), D.SCALAR], b"k",
                           core_type="aic")
    assert c.arg_specs == [ArgSpec(D.IN, F32, rank=2), ArgSpec(D.OUT, F32), ArgSpec(D.SCALAR)]
    assert c.signature == [D.IN, D.OUT, D.SCALAR]  # the old accessor keeps its meaning
    assert c.core_type == "aic"
    assert c.arg_specs[0].typed and not c.arg_specs[2].typed
    assert CoreCallable.from_bytes(bytes(c)) == c
    assert pickle.loads(pickle.dumps(c)).arg_specs == c.arg_specs


def test_untyped_signatures_build_the_same_image_as_before():
    plain = CoreCallable.build([D.IN, D.OUT, D.SCALAR], b"k")
    assert bytes(plain)[4] == 2  # the untyped format, unchanged
    assert plain.core_type is None
    assert plain.arg_specs == [ArgSpec(D.IN), ArgSpec(D.OUT), ArgSpec(D.SCALAR)]


@pytest.mark.parametrize("entry, error, words", [
    ((D.SCALAR, F32, 1), ValueError, "rank"),
    ((D.IN, F32, 6), ValueError, "rank"),
    ((D.IN, "not a dtype"), TypeError, "dtype"),
    ((D.IN, F32, 1, 2), TypeError, "signature[0]"),
])
def test_bad_signature_entries_name_the_field(entry, error, words):
    with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")):
        CoreCallable.build([entry], b"k")


def test_core_type_argument_checked():
    with pytest.raises(ValueError, match="core_type"):
        CoreCallable.build([D.IN], b"k", core_type="npu")


def test_kernel_compiler_tags_binaries_with_their_core_type(compiler):
    image = compiler.compile_kernel(_source("add_scalar_kernel.cpp"), "AIC")
    assert isinstance(image, KernelBinary) and isinstance(image, bytes)
    assert image.core_type == "aic"
    assert CoreCallable.build([D.IN, D.OUT, D.SCALAR], image).core_type == "aic"
    # An explicit core_type wins over the tag.
    assert CoreCallable.build([D.IN, D.OUT, D.SCALAR], image, core_type="aiv").core_type == "aiv"
    assert pickle.loads(pickle.dumps(image)).core_type == "aic"


def _program(compiler, entry_sig, kernel_sig, core="aiv"):
    kernel = CoreCallable.build(kernel_sig,
                                compiler.compile_kernel(_source("add_scalar_kernel.cpp"), core))
    orch = compiler.compile_orchestration(_source("add_scalar_orch.cpp"), entry="add_scalar_entry")
    return ChipCallable.build(entry_sig, "add_scalar_entry", orch, children=[(0, kernel)])


def _host_args(x, y, scalar=1.0):
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.from_array(x))
    args.add_tensor(ChipTensor.from_array(y))
    args.add_scalar_f32(scalar)
    return args


def test_program_mode_refuses_a_wrong_dtype_before_running(compiler):
    prog = _program(compiler, TYPED, TYPED)
    with Worker(level=2, device_id=2) as w:
        h = w.register(prog)
        w.init()
        x64 = np.arange(8, dtype=np.float64)
        y = np.full(8, -1, dtype=np.float32)
        for call in (w.run, lambda h, a: w.submit(h, a).result()):
            with pytest.raises(SignatureMismatchError) as err:
                call(h, _host_args(x64, y))
            assert err.value.arg_index == 0
            assert "expected dtype FLOAT32" in str(err.value) and "given FLOAT64" in str(err.value)
            assert isinstance(err.value, (ValueError, TypeError, SimplerError))
        assert (y == -1).all()  # nothing ran
        x2 = np.zeros((2, 4), dtype=np.float32)
        with pytest.raises(SignatureMismatchError, match="expected rank 1"):
            w.run(h, _host_args(x2, y))
        x = np.arange(8, dtype=np.float32)
        w.run(h, _host_args(x, y, 2.0))  # fitting args still run
        np.testing.assert_array_equal(y, x + 2)


def test_untyped_program_keeps_accepting_anything_of_the_right_kind(compiler):
    sig = [D.IN, D.OUT, D.SCALAR]
    prog = _program(compiler, sig, sig)
    with Worker(level=2, device_id=2) as w:
        h = w.register(prog)
        w.init()
        x = np.arange(8, dtype=np.float32)
        y = np.zeros_like(x)
        w.run(h, _host_args(x, y, 1.0))
        np.testing.assert_array_equal(y, x + 1)


def test_orchestration_submit_to_the_wrong_core_type_fails_the_run(compiler):
    sig = [D.IN, D.OUT, D.SCALAR]
    prog = _program(compiler, sig, sig, core="aic")  # the orchestration submits to AIV
    with Worker(level=2, device_id=2) as w:
        h = w.register(prog)
        w.init()
        x = np.arange(8, dtype=np.float32)
        y = np.full(8, -1, dtype=np.float32)
        with pytest.raises(ChipWorkerError) as err:
            w.run(h, _host_args(x, y))
        assert err.value.status_name == "SIMPLER_CHIP_ERR_INVALID_ARGS"
        assert (y == -1).all()


def test_orchestration_submit_checks_the_kernels_typed_signature(compiler):
    entry = [D.IN, D.OUT, D.SCALAR]  # untyped entry: the run starts, the task is refused
    kernel = [(D.IN, DataType.INT32), (D.OUT, DataType.INT32), D.SCALAR]
    prog = _program(compiler, entry, kernel)
    with Worker(level=2, device_id=2) as w:
        h = w.register(prog)
        w.init()
        x = np.arange(8, dtype=np.float32)
        y = np.full(8, -1, dtype=np.float32)
        with pytest.raises(ChipWorkerError) as err:
            w.run(h, _host_args(x, y))
        assert err.value.status_name == "SIMPLER_CHIP_ERR_INVALID_ARGS"
        assert (y == -1).all()


def test_chip_worker_refuses_mistyped_args_with_invalid_argument(compiler):
    from simpler import find_build
    from simpler.task_interface import ChipWorker
    prog = _program(compiler, TYPED, TYPED)
    cw = ChipWorker()
    cw.init(2, find_build("a2a3sim", "tensormap_and_ringbuffer"))
    try:
        h = cw.register(prog)
        with pytest.raises(ChipWorkerError) as err:
            cw.run(h, _host_args(np.zeros(8, np.int32), np.zeros(8, np.float32)))
        assert err.value.code == _native.PTO_RUNTIME_ERR_INVALID_ARGUMENT
        assert "argument 0" in str(err.value) and "INT32" in str(err.value)
    finally:
        cw.finalize()


def test_kernel_launch_refuses_a_wrong_dtype_before_enqueueing(compiler):
    prog = _program(compiler, TYPED, TYPED)
    sim.set_device(0)
    stream = sim.Stream()
    n = 64
    dx, dy = sim.malloc(n * 8), sim.malloc(n * 4)
    w = Worker(level=2, execution_mode="kernel", device_id=0)
    w.init(config=CallConfig())
    try:
        cid = w.kernel_prepare_callable(prog)
        args = ChipStorageTaskArgs()
        args.add_tensor(ChipTensor.make(dx, (n,), DataType.FLOAT64))
        args.add_tensor(ChipTensor.make(dy, (n,), F32))
        args.add_scalar_f32(1.0)
        with pytest.raises(SignatureMismatchError) as err:
            w.kernel_launch(cid, args, caller_stream=stream)
        assert err.value.arg_index == 0 and "given FLOAT64" in str(err.value)
        stream.synchronize()  # nothing was enqueued, nothing failed
    finally:
        w.close()
        sim.free(dx)
        sim.free(dy)
        stream.destroy()
