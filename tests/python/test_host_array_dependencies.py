"""Program mode: runs are ordered through the host arrays they share (docs/api.md "Host
arrays between runs"). A run that reads (RAW) or writes (WAW) host memory an earlier
in-flight run writes starts after that run's copy-back; overlap is by bytes (slices,
views), not identity. Runs sharing no host memory stay asynchronous. The old code staged
a new run's inputs at submit, before the earlier run's outputs were copied back: a chain
`submit(x -> y); submit(y -> z)` computed z from the old y."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from conftest import run_in_thread
from simpler import Worker
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor, DataType

RUNTIMES = ["tensormap_and_ringbuffer", "host_build_graph"]
N = 1024
THREE = int(np.float32(3.0).view(np.int32))  # a flag value whose bits read as 3.0f


def _x():
    return np.linspace(-1, 1, N, dtype=np.float32)


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("depth", [1, 2])
def test_a_run_reads_what_the_run_submitted_before_it_writes(runtime, depth,
                                                             add_scalar_callable):
    x, y, z = _x(), np.zeros(N, np.float32), np.zeros(N, np.float32)
    config = CallConfig(pipeline_depth=depth)
    with Worker(level=2, device_id=1, runtime=runtime) as worker:
        worker.init()
        add = worker.register(add_scalar_callable)
        first = worker.submit(add, x, y, 1.0, config=config)
        second = worker.submit(add, y, z, 1.0, config=config)  # reads the first's output
        worker.run(add, z, x, 1.0, config=config)  # and the blocking form too
        second.wait(timeout=60)
        first.wait(timeout=60)
    want_y = _x() + np.float32(1.0)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(z, want_y + np.float32(1.0))
    np.testing.assert_array_equal(x, want_y + np.float32(2.0))


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_overlap_is_by_bytes_through_slices_and_views(runtime, add_scalar_callable):
    x = _x()
    buf = np.zeros(2 * N, np.float32)
    z = np.zeros(N, np.float32)
    raw = np.zeros(4 * N, np.uint8)  # the same bytes seen through another dtype
    with Worker(level=2, device_id=1, runtime=runtime) as worker:
        worker.init()
        add = worker.register(add_scalar_callable)
        worker.submit(add, x, buf[:N], 1.0)
        # Half of what it reads is the first run's output: the slices differ, the bytes not.
        late = worker.submit(add, buf[N // 2:N + N // 2], z, 1.0)
        late.wait(timeout=60)
        np.testing.assert_array_equal(z[:N // 2], x[N // 2:] + np.float32(1) + np.float32(1))
        np.testing.assert_array_equal(z[N // 2:], np.float32(1))
        worker.submit(add, x, raw.view(np.float32), 5.0)
        out = np.zeros(N, np.float32)
        worker.run(add, raw[: 4 * N].view(np.float32), out, 0.0)
        np.testing.assert_array_equal(out, x + np.float32(5))


class Held:
    """A run held until release(value): it then writes `value` (int32) into `out`."""

    def __init__(self, worker, wait_flag_callable, out, config=None):
        self.worker = worker
        self.flag = worker.malloc(4)
        worker.copy_to(self.flag, np.zeros(1, np.int32))
        args = ChipStorageTaskArgs()
        args.add_tensor(ChipTensor.make(self.flag, (1,), DataType.INT32))
        args.add_tensor(worker.make_tensor_arg(out))
        self.run = worker.submit(worker.register(wait_flag_callable), args, config=config)

    def release(self, value=THREE, after=0.0):
        def go():
            self.worker.copy_to(self.flag, np.array([value], np.int32))
        if after:
            t = threading.Timer(after, go)
            t.start()
            return t
        go()
        return None


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_new_run_waits_for_a_running_writer_of_its_input(runtime, wait_flag_callable,
                                                           add_scalar_callable):
    out, y = np.zeros(1, np.int32), np.zeros(1, np.float32)
    with Worker(level=2, device_id=1, runtime=runtime) as worker:
        worker.init()
        add = worker.register(add_scalar_callable)
        held = Held(worker, wait_flag_callable, out)
        timer = held.release(after=0.3)
        run = worker.submit(add, out.view(np.float32), y, 1.0)  # waits for the held run
        assert held.run.done
        run.wait(timeout=60)
        timer.join()
    assert y[0] == 4.0  # read the 3.0f the held run wrote, not the 0 before it


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_two_writers_of_one_array_leave_the_later_result(runtime, wait_flag_callable,
                                                         add_scalar_callable):
    out = np.zeros(1, np.int32)
    with Worker(level=2, device_id=1, runtime=runtime) as worker:
        worker.init()
        add = worker.register(add_scalar_callable)
        held = Held(worker, wait_flag_callable, out)
        timer = held.release(after=0.3)
        # WAW: waited first, the later run used to be overwritten by the held run's copy-back.
        worker.submit(add, np.full(1, 2.0, np.float32), out.view(np.float32), 5.0).wait(60)
        held.run.wait(timeout=60)
        timer.join()
    assert out.view(np.float32)[0] == 7.0


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_new_output_an_earlier_run_reads_does_not_change_its_input(runtime,
                                                                     add_scalar_callable):
    # WAR: an input is staged at submit, so a later run may write the array at once.
    x, y = _x(), np.zeros(N, np.float32)
    with Worker(level=2, device_id=1, runtime=runtime) as worker:
        worker.init()
        add = worker.register(add_scalar_callable)
        reader = worker.submit(add, x, y, 1.0)
        writer = worker.submit(add, np.zeros(N, np.float32), x, 5.0)
        writer.wait(timeout=60)
        reader.wait(timeout=60)
    np.testing.assert_array_equal(y, _x() + np.float32(1))
    np.testing.assert_array_equal(x, np.float32(5))


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_runs_sharing_no_host_memory_stay_asynchronous(runtime, wait_flag_callable,
                                                       add_scalar_callable):
    out, x, y = np.zeros(1, np.int32), _x(), np.zeros(N, np.float32)
    with Worker(level=2, device_id=1, runtime=runtime) as worker:
        worker.init()
        add = worker.register(add_scalar_callable)
        # At depth 1 the runtime starts a run after the one before it; a deeper pipeline
        # lets both runs start while the held one is still in flight.
        config = CallConfig(pipeline_depth=4)
        held = Held(worker, wait_flag_callable, out, config)
        try:
            # Neither waits for the held run (it would not finish: nobody releases it).
            run_in_thread(lambda: worker.submit(add, x, y, 1.0, config=config).wait(timeout=15))
            run_in_thread(lambda: worker.run(add, y, x, 1.0, config=config))
            assert not held.run.done
            # At depth 1 the submit itself returns at once all the same.
            late = worker.submit(add, x, np.zeros(N, np.float32), 1.0)
            assert not held.run.done and not late.done
        finally:
            held.release()
        held.run.wait(timeout=60)
    np.testing.assert_array_equal(y, _x() + np.float32(1))
    assert out[0] == THREE


def test_a_failed_writer_leaves_the_array_as_it_was_and_keeps_its_error(
        fatal_callable, add_scalar_callable):
    from simpler.errors import ChipWorkerError
    x, y, z = _x(), np.full(N, 2.0, np.float32), np.zeros(N, np.float32)
    with Worker(level=2, device_id=1) as worker:
        worker.init()
        fatal = worker.register(fatal_callable)
        add = worker.register(add_scalar_callable)
        failing = worker.submit(fatal, x, y, 1.0)
        worker.run(add, y, z, 1.0)  # proceeds after the failed run: y as it left it
        np.testing.assert_array_equal(z, np.float32(3))
        with pytest.raises(ChipWorkerError):
            failing.wait(timeout=60)
