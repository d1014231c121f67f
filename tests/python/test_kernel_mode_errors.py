"""A kernel-mode launch that fails on the chip: the runtime's own message reaches the
Python exception raised by the caller's stream (issue 17, item 5)."""
from __future__ import annotations

import pytest

from simpler import Worker, sim
from simpler.errors import SimError
from simpler.task_interface import (ArgDirection as D, CallConfig, ChipCallable,
                                    ChipStorageTaskArgs, ChipTensor, CoreCallable, DataType)

FAILING = r"""
#include "simpler/kernel/kernel_abi.h"
extern "C" void kernel_entry(int64_t* args) { simpler_kernel_fail(args, 7); }
"""


def test_stream_error_carries_the_runtimes_message(compiler):
    prog = ChipCallable.from_kernel(
        CoreCallable.build([D.INOUT], compiler.compile_kernel(FAILING, "aiv")), block_num=1)
    sim.set_device(0)
    stream = sim.Stream()
    buf = sim.malloc(64)
    w = Worker(level=2, execution_mode="kernel", device_id=0)
    w.init(config=CallConfig())
    try:
        assert w.kernel_launch_error() == ""
        cid = w.kernel_prepare_callable(prog)
        args = ChipStorageTaskArgs()
        args.add_tensor(ChipTensor.make(buf, (16,), DataType.FLOAT32))
        w.kernel_launch(cid, args, caller_stream=stream)
        with pytest.raises(SimError) as err:
            stream.synchronize()
        assert err.value.status_name == "SIMPLER_CHIP_ERR_KERNEL_FAULT"
        text = str(err.value)
        assert "runtime:" in text and f"callable {cid}" in text, text
        assert "SIMPLER_CHIP_ERR_KERNEL_FAULT" in w.kernel_launch_error()
    finally:
        w.close()
        sim.free(buf)
        try:
            stream.destroy()
        except SimError:
            pass
