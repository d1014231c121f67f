"""Worker(level=3): several chips of one host in one process (issue 12).

Host orchestrations submit the add_scalar program ([IN x, OUT y, SCALAR s]: y = x + s)
to chips; dependencies are inferred from the numpy ranges they read and write.
"""
from __future__ import annotations

import numpy as np
import pytest

from simpler import RunHandle, Worker, sim
from simpler.errors import (ChipWorkerError, SimplerError, SimplerRuntimeError, SimplerTypeError,
                            SimplerValueError, WorkerTimeoutError)
from simpler.host import ChipGroupError, ChipTaskError, HostWorker, LocalTransport
from simpler.task_interface import CallConfig

from conftest import run_in_thread

N = 4096


@pytest.fixture
def w3(add_scalar_callable):
    worker = Worker(level=3, device_ids=[0, 1], platform="a2a3sim",
                    runtime="tensormap_and_ringbuffer")
    worker.add = worker.register(add_scalar_callable)
    worker.init()
    yield worker
    worker.close()


def test_level3_is_a_worker_with_its_chips(w3):
    assert isinstance(w3, Worker) and isinstance(w3, HostWorker)
    assert w3.level == 3 and w3.device_ids == [0, 1] and w3.state == "READY"
    assert w3.execution_mode == "program"
    assert w3.kernel_mode_supported is False      # answered, never raises
    with pytest.raises(SimplerRuntimeError, match="level 2 only"):
        w3.kernel_launch(1, None, caller_stream=0)


def test_kernel_mode_above_level_2_is_refused_at_construction():
    for level in (3, 4):
        with pytest.raises(SimplerValueError, match="level 2 only"):
            Worker(level=level, execution_mode="kernel", device_ids=[0])
    w = Worker(level=3, device_ids=[0])
    assert w.kernel_mode_supported is False and w.state == "NEW"


@pytest.mark.parametrize("ids, match", [
    ([], "empty"),
    ([0, 0], "more than once"),
    ([0, 99], "out of range"),
    ([-1], "negative"),
    (["0"], "must be ints"),
    (None, "required"),
    (list(range(64)), "devices"),
])
def test_bad_device_ids_take_nothing(ids, match):
    before = sim.call_count("malloc"), sim.call_count("stream_create")
    with pytest.raises(SimplerValueError, match=match):
        Worker(level=3, device_ids=ids)
    assert (sim.call_count("malloc"), sim.call_count("stream_create")) == before


def test_split_over_two_chips(w3):
    x = np.linspace(-5, 5, N, dtype=np.float32)
    y = np.zeros_like(x)
    h = N // 2

    def orch(o, args):
        a = o.submit(w3.add, x[:h], y[:h], 1.5, chip=0)
        b = o.submit(w3.add, x[h:], y[h:], 1.5, chip=1)
        assert o.dependencies(b) == [] and (o.chip_of(a), o.chip_of(b)) == (0, 1)

    w3.run(orch)
    np.testing.assert_array_equal(y, x + np.float32(1.5))
    stats = w3.last_run_stats
    assert stats["h2d_bytes"] == x.nbytes and stats["d2h_bytes"] == y.nbytes
    assert stats["peer_bytes"] == 0


def test_cross_chip_raw_moves_device_to_device(w3):
    x = np.arange(N, dtype=np.float32)
    t = np.zeros_like(x)
    y = np.zeros_like(x)

    def orch(o, args):
        a = o.submit(w3.add, x, t, 1.0, chip=0)
        b = o.submit(w3.add, t, y, 2.0, chip=1)
        assert o.dependencies(b) == [a]

    w3.run(orch)
    np.testing.assert_array_equal(t, x + 1)
    np.testing.assert_array_equal(y, x + 3)
    stats = w3.last_run_stats
    assert stats["peer_bytes"] == t.nbytes          # t went chip 0 -> chip 1, not via the host
    assert stats["h2d_bytes"] == x.nbytes           # only x came from the host
    assert stats["d2h_bytes"] == t.nbytes + y.nbytes


def test_dependency_rules_across_chips(w3):
    x = np.arange(N, dtype=np.float32)
    t = np.zeros_like(x)
    u = np.zeros_like(x)
    h = N // 2

    def orch(o, args):
        w1 = o.submit(w3.add, x, t, 1.0, chip=0)             # writes t
        r1 = o.submit(w3.add, t, u, 1.0, chip=1)             # RAW on w1
        r2 = o.submit(w3.add, t[:h], u[:h], 2.0, chip=0)     # RAW on w1, WAW on r1 (u)
        w2 = o.submit(w3.add, x, t, 3.0, chip=1)             # WAW w1, WAR r1 and r2
        v1 = o.submit(w3.add, x[:h], t[:h], 4.0, chip=0)     # WAW w2 (overlapping view)
        v2 = o.submit(w3.add, x[h:], u[h:], 5.0, chip=1)     # WAW r1 only (u[h:])
        r3 = o.submit(w3.add, t[h:], u[:h], 6.0, chip=0)     # RAW w2 only; WAW r2 and WAR-free
        assert o.dependencies(r1) == [w1]
        assert o.dependencies(r2) == [w1, r1]
        assert o.dependencies(w2) == [w1, r1, r2]
        assert o.dependencies(v1) == [w2]
        assert o.dependencies(v2) == [r1]
        assert o.dependencies(r3) == [r2, w2]

    w3.run(orch)
    np.testing.assert_array_equal(t[:h], x[:h] + 4)
    np.testing.assert_array_equal(t[h:], x[h:] + 3)
    np.testing.assert_array_equal(u[h:], x[h:] + 5)
    np.testing.assert_array_equal(u[:h], x[h:] + 9)


def test_war_a_reader_sees_the_value_before_a_later_writer_on_another_chip(w3):
    t = np.full(N, 10, dtype=np.float32)
    x = np.arange(N, dtype=np.float32)
    y = np.zeros_like(x)

    def orch(o, args):
        o.submit(w3.add, t, y, 1.0, chip=0)      # reads the old t
        o.submit(w3.add, x, t, 0.0, chip=1)      # then t is overwritten elsewhere

    w3.run(orch)
    np.testing.assert_array_equal(y, np.full(N, 11, dtype=np.float32))
    np.testing.assert_array_equal(t, x)


def test_chain_across_chips_and_back(w3):
    x = np.arange(N, dtype=np.float32)
    t = np.zeros_like(x)

    def orch(o, args):
        o.submit(w3.add, x, t, 1.0, chip=0)
        for i in range(6):
            o.submit(w3.add, t, t, 1.0, chip=i % 2)   # INOUT-like: reads and writes t

    w3.run(orch)
    np.testing.assert_array_equal(t, x + 7)


def test_least_loaded_placement_spreads_independent_tasks(w3):
    x = np.arange(N, dtype=np.float32)
    ys = [np.zeros_like(x) for _ in range(4)]
    placed = []

    def orch(o, args):
        for i, y in enumerate(ys):
            placed.append(o.chip_of(o.submit(w3.add, x, y, float(i))))

    w3.run(orch)
    assert set(placed) == {0, 1}
    for i, y in enumerate(ys):
        np.testing.assert_array_equal(y, x + i)


def test_submit_returns_a_run_handle(w3):
    x = np.arange(N, dtype=np.float32)
    y = np.zeros_like(x)
    run = w3.submit(lambda o, a: o.submit(w3.add, x, y, 2.0), None, CallConfig())
    assert isinstance(run, RunHandle)
    run.wait(timeout=60)
    assert run.done
    run.result()
    np.testing.assert_array_equal(y, x + 2)


def test_an_expired_host_run_wait_is_a_typed_timeout(w3):
    import threading
    release = threading.Event()
    run = w3.submit(lambda o, a: release.wait(30))
    with pytest.raises(WorkerTimeoutError, match=r"^HostRunHandle\.wait: .*did not finish") as err:
        run.wait(timeout=0.05)
    assert isinstance(err.value, TimeoutError) and isinstance(err.value, SimplerError)
    assert "keeps running" in str(err.value)        # says what to do: the run is not cancelled
    with pytest.raises(WorkerTimeoutError, match="HostRunHandle.wait"):
        run.wait(0)
    release.set()
    run.wait(timeout=60)


def test_bad_submissions_raise_before_anything_is_enqueued(w3):
    x = np.arange(N, dtype=np.float32)
    y = np.zeros_like(x)
    bad = [
        (lambda o: o.submit(w3.add, x, y), SimplerValueError, "takes 3 arguments"),
        (lambda o: o.submit(w3.add, x, y, 1.0, chip=5), SimplerValueError, "not one of"),
        (lambda o: o.submit(w3.add, x[::2], y[::2], 1.0), SimplerValueError, "C-contiguous"),
        (lambda o: o.submit(w3.add, [1.0], y, 1.0), SimplerTypeError, "numpy array"),
        (lambda o: o.submit(w3.add, x, y, "1"), SimplerTypeError, "scalar"),
        (lambda o: o.submit("add", x, y, 1.0), SimplerValueError, "unknown callable"),
    ]
    for call, exc, match in bad:
        # simpler's typed errors that are still the builtin ValueError/TypeError callers catch
        with pytest.raises(exc, match=match) as err:
            w3.run(lambda o, a: call(o))
        assert isinstance(err.value, (ValueError, TypeError)), err.value
        assert w3.last_run_stats["tasks"] == 0
    with pytest.raises(SimplerTypeError, match="orchestration"):
        w3.run(w3.add)


def test_a_failed_task_names_its_chip_and_skips_its_dependents(w3, fatal_callable):
    fatal = w3.register(fatal_callable)
    x = np.arange(N, dtype=np.float32)
    t = np.zeros_like(x)
    y = np.zeros_like(x)
    w3.run(lambda o, a: [o.submit(w3.add, x, y, 0.0, chip=c) for c in (0, 1)])  # warm both
    y[:] = 0
    before = [w3.committed_device_memory(d) for d in (0, 1)]

    def orch(o, args):
        o.submit(fatal, x, t, 1.0, chip=1)
        o.submit(w3.add, t, y, 1.0, chip=0)

    with pytest.raises(ChipTaskError, match="device 1") as err:
        w3.run(orch)
    assert isinstance(err.value, ChipWorkerError) and err.value.device == "device 1"
    assert "SIMPLER_CHIP_ERR_ORCH_FATAL" in str(err.value)
    assert not y.any()                                    # nothing half-written back
    assert [w3.committed_device_memory(d) for d in (0, 1)] == before
    w3.run(lambda o, a: o.submit(w3.add, x, y, 1.0))     # the worker is still usable
    np.testing.assert_array_equal(y, x + 1)


def test_per_chip_memory_calls_take_a_device_id(w3):
    data = np.arange(256, dtype=np.float32)
    base = w3.committed_device_memory(1)
    ptr = w3.malloc(data.nbytes, 1)
    assert w3.committed_device_memory(1) >= base + data.nbytes
    w3.copy_to(ptr, data, device_id=1)
    out = np.zeros_like(data)
    w3.copy_from(out, ptr, device_id=1)
    np.testing.assert_array_equal(out, data)
    free_bytes, total = w3.device_memory_info(1)
    assert 0 < free_bytes <= total
    with pytest.raises(SimplerValueError, match="device_id= is required"):
        w3.malloc(64)
    with pytest.raises(SimplerValueError, match="not one of"):
        w3.malloc(64, 3)
    w3.free(ptr, 1)
    assert w3.committed_device_memory(1) == base


def _fail_init_on(monkeypatch, device, op="stream_create"):
    original = LocalTransport._init_chip

    def init_chip(worker, prewarm_config):
        if worker.device_id == device:
            sim.inject_fault(op, count=1)
        try:
            original(worker, prewarm_config)
        finally:
            sim.clear_faults()

    monkeypatch.setattr(LocalTransport, "_init_chip", staticmethod(init_chip))


def _free_memory(devices):
    def measure():
        out = []
        for d in devices:
            sim.set_device(d)
            out.append(sim.mem_get_info()[0])
        return out
    return run_in_thread(measure)


def test_init_failure_on_chip_k_rolls_back_the_others(monkeypatch, add_scalar_callable):
    devices = [0, 1, 2, 3]
    before = _free_memory(devices)
    _fail_init_on(monkeypatch, device=2)
    w = Worker(level=3, device_ids=devices)
    w.register(add_scalar_callable)
    with pytest.raises(ChipGroupError, match="device 2") as err:
        w.init()
    assert list(err.value.failures) == [2] and "[0, 1] were rolled back" in str(err.value)
    assert w.state == "FAILED" and w.committed_device_memory() == 0
    assert _free_memory(devices) == before   # chips 0 and 1 came up and were released
    w.close()  # nothing left to tear down
    assert w.state == "CLOSED"                 # as at level 2 (it stayed FAILED)
    monkeypatch.undo()
    again = Worker(level=3, device_ids=[0, 1, 2, 3])   # the devices are free again
    again.init()
    again.close()


def test_close_tears_every_chip_down_and_reports_every_failure(add_scalar_callable):
    w = Worker(level=3, device_ids=[0, 1])
    w.register(add_scalar_callable)
    w.init()
    sim.inject_fault("stream_destroy", count=2)   # both chips' teardown fails once
    with pytest.raises(ChipGroupError) as err:
        w.close()
    assert sorted(err.value.failures) == [0, 1]   # every chip attempted, every failure named
    assert "device 0" in str(err.value) and "device 1" in str(err.value)
    assert "SIM_ERR_INJECTED_FAULT" in str(err.value)
    assert w.state == "READY"
    before = sim.call_count("stream_destroy")
    w.close()                                      # the retry releases what was kept
    assert w.state == "CLOSED" and sim.call_count("stream_destroy") == before + 2
    assert w.committed_device_memory() == 0
    w.close()                                      # idempotent


def test_close_completes_runs_in_flight(add_scalar_callable):
    w = Worker(level=3, device_ids=[2, 3])
    add = w.register(add_scalar_callable)
    w.init()
    x = np.arange(N, dtype=np.float32)
    y = np.zeros_like(x)
    run = w.submit(lambda o, a: [o.submit(add, x, y, 1.0, chip=c) for c in (2, 3)])
    w.close()
    assert run.done
    np.testing.assert_array_equal(y, x + 1)
    with pytest.raises(SimplerRuntimeError, match="CLOSED") as err:
        w.run(lambda o, a: None)
    assert isinstance(err.value, (SimplerError, RuntimeError))


def test_close_waits_for_a_run_on_another_thread(add_scalar_callable):
    import threading
    w = Worker(level=3, device_ids=[0, 1])
    add = w.register(add_scalar_callable)
    w.init()
    x = np.arange(N, dtype=np.float32)
    ys = [np.zeros_like(x) for _ in range(8)]
    started = threading.Event()

    def orch(o, a):
        started.set()
        for i, y in enumerate(ys):
            o.submit(add, x, y, float(i))

    runner = threading.Thread(target=w.run, args=(orch,))
    runner.start()
    started.wait(30)
    w.close()                                  # waits for the run, then tears down
    runner.join(30)
    assert w.state == "CLOSED"
    for i, y in enumerate(ys):
        np.testing.assert_array_equal(y, x + i)
