"""ChipCallable.from_kernel (issue 17, item 4): one kernel, no orchestration C++."""
from __future__ import annotations

import numpy as np
import pytest

from simpler import KernelCompiler, Worker, sim
from simpler.errors import SignatureMismatchError, SimplerTypeError
from simpler.task_interface import (ArgDirection as D, CallConfig, ChipCallable,
                                    ChipStorageTaskArgs, ChipTensor, CoreCallable, DataType)

from conftest import _source

# out[block_idx] = block_num * 100 + block_idx: shows the SPMD width the task ran with.
BLOCKS_KERNEL = r"""
#include "simpler/kernel/kernel_abi.h"
extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* out = simpler_tensor_arg(args, 0);
  int32_t* p = (int32_t*)simpler_tensor_data(out, sizeof(int32_t));
  p[simpler_block_idx(args) * out->strides[0]] =
      (int32_t)(simpler_block_num(args) * 100 + simpler_block_idx(args));
}
"""


@pytest.fixture(scope="module")
def add_scalar_kernel(compiler):
    image = compiler.compile_kernel(_source("add_scalar_kernel.cpp"), "aiv")
    return CoreCallable.build([(D.IN, DataType.FLOAT32), (D.OUT, DataType.FLOAT32),
                               (D.SCALAR, DataType.FLOAT32)], image)


def test_program_mode_runs_one_kernel_without_orchestration(add_scalar_kernel):
    prog = ChipCallable.from_kernel(add_scalar_kernel, block_num=4)
    assert prog.arg_specs == add_scalar_kernel.arg_specs  # the kernel's signature, typed
    assert prog.func_ids == [0]
    x = np.linspace(-1, 1, 1000, dtype=np.float32)
    y = np.zeros_like(x)
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.from_array(x))
    args.add_tensor(ChipTensor.from_array(y))
    args.add_scalar_f32(0.25)
    with Worker(level=2, device_id=3) as w:
        h = w.register(prog)
        w.init()
        w.run(h, args)
        np.testing.assert_array_equal(y, x + np.float32(0.25))
        bad = ChipStorageTaskArgs()  # float64 where the kernel reads float32: refused
        bad.add_tensor(ChipTensor.from_array(x.astype(np.float64)))
        bad.add_tensor(ChipTensor.from_array(y))
        bad.add_scalar_f32(0.25)
        with pytest.raises(SignatureMismatchError, match="argument 0"):
            w.run(h, bad)


def test_block_num_is_the_tasks_spmd_width(compiler):
    kernel = CoreCallable.build([(D.INOUT, DataType.INT32)], compiler.compile_kernel(BLOCKS_KERNEL, "aic"))
    out = np.full(8, -1, dtype=np.int32)
    with Worker(level=2, device_id=3) as w:
        w.init()
        for blocks in (1, 3):
            out[:] = -1
            args = ChipStorageTaskArgs()
            args.add_tensor(ChipTensor.from_array(out))
            w.run(w.register(ChipCallable.from_kernel(kernel, block_num=blocks)), args)
            expected = [blocks * 100 + i for i in range(blocks)] + [-1] * (8 - blocks)
            assert out.tolist() == expected


def test_kernel_mode_launch_on_a_caller_stream(add_scalar_kernel):
    prog = ChipCallable.from_kernel(add_scalar_kernel, block_num=2)
    sim.set_device(0)
    stream = sim.Stream()
    x = np.arange(256, dtype=np.float32)
    dx, dy = sim.malloc(x.nbytes), sim.malloc(x.nbytes)
    sim.memcpy_htod(dx, x)
    w = Worker(level=2, execution_mode="kernel", device_id=0)
    w.init(config=CallConfig())
    try:
        cid = w.kernel_prepare_callable(prog)
        args = ChipStorageTaskArgs()
        args.add_tensor(ChipTensor.make(dx, x.shape, DataType.FLOAT32))
        args.add_tensor(ChipTensor.make(dy, x.shape, DataType.FLOAT32))
        args.add_scalar_f32(-1.0)
        w.kernel_launch(cid, args, caller_stream=stream)
        stream.synchronize()
        y = np.empty_like(x)
        sim.memcpy_dtoh(y, dy)
        np.testing.assert_array_equal(y, x - 1)
    finally:
        w.close()
        sim.free(dx)
        sim.free(dy)
        stream.destroy()


def test_a_second_build_is_served_from_the_compiler_cache(add_scalar_kernel, tmp_path):
    cc = KernelCompiler(tmp_path)
    first = ChipCallable.from_kernel(add_scalar_kernel, block_num=4, compiler=cc)
    runs = cc.stats["compiler_runs"]
    again = ChipCallable.from_kernel(add_scalar_kernel, block_num=4, compiler=cc)
    assert cc.stats["compiler_runs"] == runs and cc.stats["cache_hits"] >= 1
    assert again == first


def test_refusals_name_what_is_missing(add_scalar_kernel):
    untagged = CoreCallable.build([D.IN, D.OUT, D.SCALAR], add_scalar_kernel.binary)
    assert untagged.core_type is None
    with pytest.raises(ValueError, match="core_type='aic' or 'aiv'"):
        ChipCallable.from_kernel(untagged)
    assert ChipCallable.from_kernel(untagged, core_type="aiv").func_ids == [0]
    with pytest.raises(ValueError, match="contradicts"):
        ChipCallable.from_kernel(add_scalar_kernel, core_type="aic")
    for bad in (0, 65536):
        with pytest.raises(ValueError, match="block_num"):
            ChipCallable.from_kernel(add_scalar_kernel, block_num=bad)
    for bad in (2.0, True, np.bool_(True)):            # a bool is not a count
        with pytest.raises(SimplerTypeError, match="block_num must be an int"):
            ChipCallable.from_kernel(add_scalar_kernel, block_num=bad)
    # numpy integers are ints, as for every other count of the API (it refused them)
    numpy_width = ChipCallable.from_kernel(add_scalar_kernel, block_num=np.int64(4))
    assert bytes(numpy_width) == bytes(ChipCallable.from_kernel(add_scalar_kernel, block_num=4))
    with pytest.raises(TypeError, match="CoreCallable"):
        ChipCallable.from_kernel(b"not a kernel")
    for bad in (3, b"aiv", SimplerTypeError):  # was AttributeError: 'int' has no 'lower'
        with pytest.raises(SimplerTypeError, match="core_type must be 'aic', 'aiv', 'mix' or None"):
            ChipCallable.from_kernel(untagged, core_type=bad)
