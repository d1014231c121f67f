"""A kernel-mode launch that fails on the chip: the runtime's own message reaches the
Python exception raised by the caller's stream (issue 17, item 5)."""
from __future__ import annotations

import pytest

from simpler import Worker, sim
from simpler.errors import ChipWorkerError, KernelFaultError, SimError
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
        with pytest.raises(KernelFaultError) as err:
            stream.synchronize()
        # The class program mode raises for the status, still a SimError for old callers.
        assert isinstance(err.value, SimError) and isinstance(err.value, ChipWorkerError)
        assert err.value.status_name == "SIMPLER_CHIP_ERR_KERNEL_FAULT"
        text = str(err.value)
        # One API prefix, the runtime's message (kernel, task), the status name once.
        assert text.startswith(f"Stream.synchronize: kernel launch of callable {cid}: "), text
        assert "kernel func_id 0" in text and "task 0" in text, text
        assert text.endswith("[SIMPLER_CHIP_ERR_KERNEL_FAULT]") and text.count("SIMPLER_CHIP") == 1, text
        assert "failed: " not in text and "runtime:" not in text, text
        assert "SIMPLER_CHIP_ERR_KERNEL_FAULT" in w.kernel_launch_error()
    finally:
        w.close()
        sim.free(buf)
        try:
            stream.destroy()
        except SimError:
            pass
