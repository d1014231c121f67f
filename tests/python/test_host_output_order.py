"""HOST outputs of program-mode runs are copied back in submission order (docs/api.md): runs
writing the same numpy array leave the last submitted run's result, whichever handle is
waited first. Waiting the last run and then the earlier ones left an earlier run's result."""
from __future__ import annotations

import numpy as np
import pytest

from simpler import Worker

RUNTIMES = ["tensormap_and_ringbuffer", "host_build_graph"]
N = 4096


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("order", ["last_first", "reversed", "polled_reversed"])
def test_the_last_submitted_run_is_what_a_shared_host_output_holds(runtime, order,
                                                                   add_scalar_callable):
    x = np.zeros(N, np.float32)
    y = np.zeros(N, np.float32)
    with Worker(level=2, device_id=1, runtime=runtime) as worker:
        worker.init()
        handle = worker.register(add_scalar_callable)
        runs = [worker.submit(handle, x, y, float(s)) for s in (1, 2, 3, 4)]
        if order == "last_first":
            runs[-1].wait(timeout=60)
            np.testing.assert_array_equal(y, 4.0)
            for run in runs:
                run.wait(timeout=60)
        elif order == "reversed":
            for run in reversed(runs):
                run.wait(timeout=60)
        else:
            runs[-1].wait(timeout=60)
            assert all(run.done for run in reversed(runs))
        np.testing.assert_array_equal(y, 4.0)


def test_an_earlier_failed_run_keeps_its_error_on_its_own_handle(fatal_callable,
                                                                 add_scalar_callable):
    from simpler.errors import ChipWorkerError
    x = np.zeros(N, np.float32)
    y = np.zeros(N, np.float32)
    with Worker(level=2, device_id=1) as worker:
        worker.init()
        fatal = worker.register(fatal_callable)
        add = worker.register(add_scalar_callable)
        failing = worker.submit(fatal, x, y, 1.0)
        after = worker.submit(add, x, y, 2.0)
        after.wait(timeout=60)  # completes the failed run first, without raising its error
        np.testing.assert_array_equal(y, 2.0)
        with pytest.raises(ChipWorkerError):
            failing.wait(timeout=60)
        np.testing.assert_array_equal(y, 2.0)  # a failed run copies nothing back
