"""RunHandle.wait(timeout) and Worker.close_grace take any number of seconds: inf, and
numbers past a float's range, mean "no bound" (wait) or are refused with a typed error
(close_grace), never an immediate timeout or an OverflowError."""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from simpler import Worker
from simpler.errors import SimplerValueError
from simpler.task_interface import ChipStorageTaskArgs, ChipTensor, DataType


@pytest.fixture
def held_run(wait_flag_callable):
    """(run, release, out): a submitted run that holds until release() is called."""
    w = Worker(level=2, device_id=1)
    w.init()
    flag = w.malloc(4)
    w.copy_to(flag, np.zeros(1, np.int32))
    out = np.zeros(1, np.int32)
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.make(flag, (1,), DataType.INT32))
    args.add_tensor(ChipTensor.from_array(out))
    run = w.submit(w.register(wait_flag_callable), args)

    def release():
        w.copy_to(flag, np.array([7], np.int32))

    yield run, release, out
    release()
    w.close()


@pytest.mark.parametrize("forever", [math.inf, 1e300, 10 ** 400, np.float64(np.inf)],
                         ids=["inf", "1e300", "10**400", "np.inf"])
def test_wait_with_an_unbounded_timeout_waits_for_the_run(held_run, forever):
    run, release, out = held_run
    timer = threading.Timer(0.3, release)
    timer.start()
    try:
        run.wait(forever)       # was a WorkerTimeoutError at once (inf) or an OverflowError
    finally:
        timer.join()
    assert out[0] == 7


def test_close_grace_past_a_floats_range_is_a_typed_error():
    w = Worker(level=2, device_id=1)
    with pytest.raises(SimplerValueError, match="close_grace"):
        w.close_grace = 10 ** 400          # was an OverflowError
    assert w.close_grace == 10
