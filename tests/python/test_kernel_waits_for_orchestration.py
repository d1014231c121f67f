"""A kernel must not wait for what its orchestration does after submitting it
(docs/kernels.md): the orchestrating thread may run that kernel itself (work-first). Such
a run is bounded by the run's watchdog, never a hang."""
from __future__ import annotations

import time

import numpy as np
import pytest

from simpler import Worker
from simpler.errors import SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT, KernelTimeoutError
from simpler.task_interface import CallConfig, ChipStorageTaskArgs


@pytest.fixture(scope="module")
def wait_on_orch_callable(compiler):
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    from conftest import PROGRAMS
    sig = [D.INOUT, D.OUT]
    kernel = CoreCallable.build(sig, compiler.compile_kernel(
        (PROGRAMS / "wait_flag_kernel.cpp").read_text(), "aiv"))
    orch = compiler.compile_orchestration((PROGRAMS / "wait_on_orch_orch.cpp").read_text(),
                                          entry="wait_on_orch_entry")
    return ChipCallable.build(sig, "wait_on_orch_entry", orch, children=[(0, kernel)])


def test_a_kernel_waiting_for_its_orchestration_ends_within_the_watchdog(wait_on_orch_callable):
    w = Worker(level=2, device_id=1)
    w.init()
    handle = w.register(wait_on_orch_callable)
    flag = np.zeros(1, dtype=np.int32)
    out = np.zeros(1, dtype=np.int32)
    args = ChipStorageTaskArgs()
    args.add_tensor(w.make_tensor_arg(flag))
    args.add_tensor(w.make_tensor_arg(out))
    time.sleep(0.05)  # schedulers park: the orchestrating thread may then run A itself
    start = time.monotonic()
    try:
        w.run(handle, args, config=CallConfig(watchdog_timeout_ms=300))
        assert out[0] == 42  # a scheduler ran A, so the orchestration went on
    except KernelTimeoutError as e:  # the orchestrating thread ran A: the watchdog ends it
        assert e.code == SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT
        # Names A: the watchdog blames only user code that has itself run the timeout.
        assert str(e).startswith("watchdog: kernel func_id 0 in task 0"), str(e)
    # Well inside the kernel's own 20 s timeout: the watchdog bounded it, not the kernel.
    assert time.monotonic() - start < 10
    start = time.monotonic()
    w.close()
    assert time.monotonic() - start < 5
