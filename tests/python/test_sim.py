"""Tests of simpler.sim, the Python binding of the simulated device driver."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from simpler import sim
from simpler.errors import SimError, SimplerError

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + "/python"


@pytest.fixture(autouse=True)
def _clean_driver_state():
    sim.clear_faults()
    sim.set_device(0)
    sim.reset_counters()
    yield
    sim.clear_faults()


def _status(name: str) -> int:
    from simpler import _native
    return getattr(_native, name)


# ---- devices and configuration -------------------------------------------------------

def test_get_device_is_none_until_set_on_a_thread():
    seen = []
    t = threading.Thread(target=lambda: seen.append(sim.get_device()))
    t.start()
    t.join()
    assert seen == [None]
    sim.set_device(1)
    assert sim.get_device() == 1


def test_invalid_device_raises_sim_error_with_code_and_name():
    with pytest.raises(SimError) as info:
        sim.set_device(sim.device_count())
    assert info.value.code == _status("SIM_ERR_INVALID_DEVICE")
    assert info.value.status_name == "SIM_ERR_INVALID_DEVICE"
    assert "device_count" in str(info.value)
    assert isinstance(info.value, SimplerError)


def test_config_and_topology_are_consistent():
    config = sim.get_config()
    assert config.device_count == sim.device_count()
    topology = sim.device_topology(0)
    assert topology.clusters == config.clusters_per_device
    assert topology.aiv_cores == 2 * topology.aic_cores
    assert topology.aicpu_threads == config.aicpu_threads
    free, total = sim.mem_get_info()
    assert total == config.device_memory_bytes and 0 < free <= total


def test_configure_after_first_use_is_refused():
    with pytest.raises(SimError) as info:
        sim.configure(device_count=2)
    assert info.value.status_name == "SIM_ERR_ALREADY_INITIALIZED"


def _run_fresh(code: str, env_extra: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIMPLER_SIM_")}
    env.update(env_extra)
    env["PYTHONPATH"] = PYTHON_DIR
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_defaults_environment_and_configure_in_a_fresh_process():
    assert _run_fresh(
        "from simpler import sim; c = sim.get_config();"
        "print(c.device_count, c.clusters_per_device, c.aicpu_threads, c.device_memory_bytes)",
        {}) == f"4 8 4 {1 << 30}"
    assert _run_fresh(
        "from simpler import sim; c = sim.get_config(); print(c.device_count, c.device_memory_bytes)",
        {"SIMPLER_SIM_DEVICES": "2", "SIMPLER_SIM_DEVICE_MEMORY": "32M"}) == f"2 {32 << 20}"
    assert _run_fresh(
        "from simpler import sim; sim.configure(device_count=3, clusters_per_device=2);"
        "sim.set_device(2); print(sim.device_count(), sim.device_topology(2).aiv_cores)",
        {}) == "3 4"


# ---- memory --------------------------------------------------------------------------

def test_malloc_copy_round_trip_with_numpy():
    a = np.arange(1000, dtype=np.float32)
    ptr = sim.malloc(a.nbytes)
    try:
        assert ptr % 1024 == 0
        assert sim.pointer_device(ptr, a.nbytes) == 0
        sim.memcpy_htod(ptr, a)
        other = sim.malloc(a.nbytes)
        sim.memcpy_dtod(other, ptr, a.nbytes)
        sim.memset(other, 0, 16)  # first 4 floats become 0
        b = np.empty_like(a)
        sim.memcpy_dtoh(b, other)
        expected = a.copy()
        expected[:4] = 0
        np.testing.assert_array_equal(b, expected)
        sim.free(other)
    finally:
        sim.free(ptr)


def test_memory_errors_are_named():
    ptr = sim.malloc(1024)
    with pytest.raises(SimError) as info:
        sim.free(ptr + 8)
    assert info.value.status_name == "SIM_ERR_INVALID_POINTER"
    with pytest.raises(SimError) as info:
        sim.memcpy_htod(ptr, np.zeros(2048, dtype=np.uint8))
    assert info.value.status_name == "SIM_ERR_OUT_OF_RANGE"
    sim.free(ptr)
    with pytest.raises(SimError) as info:
        sim.free(ptr)
    assert info.value.status_name == "SIM_ERR_INVALID_POINTER"
    free, _ = sim.mem_get_info()
    with pytest.raises(SimError) as info:
        sim.malloc(free + 1024)
    assert info.value.status_name == "SIM_ERR_OUT_OF_MEMORY"
    with pytest.raises(ValueError):
        sim.malloc(-1)


def test_host_buffers_are_checked():
    ptr = sim.malloc(4096)
    try:
        strided = np.arange(64, dtype=np.int32)[::2]
        with pytest.raises(ValueError, match="C-contiguous"):
            sim.memcpy_htod(ptr, strided)
        with pytest.raises(TypeError, match="buffer-protocol"):
            sim.memcpy_htod(ptr, 12345)
        with pytest.raises(ValueError, match="writable"):
            sim.memcpy_dtoh(b"immutable bytes", ptr)
        with pytest.raises(ValueError, match="exceeds"):
            sim.memcpy_htod(ptr, bytes(8), nbytes=9)
        with pytest.raises(ValueError, match="byte"):
            sim.memset(ptr, 256, 4)
        sim.memcpy_htod(ptr, b"abcdefgh", nbytes=4)  # bytes and partial sizes are fine
        out = bytearray(4)
        sim.memcpy_dtoh(out, ptr)
        assert out == b"abcd"
    finally:
        sim.free(ptr)


# ---- streams -------------------------------------------------------------------------

def test_stream_async_copies_and_handle():
    a = np.random.default_rng(1).integers(0, 1 << 30, size=4096, dtype=np.int64)
    b = np.zeros_like(a)
    with sim.Stream() as stream:
        assert isinstance(stream.handle, int) and stream.handle != 0
        assert stream.device == 0
        ptr = sim.malloc(a.nbytes)
        stream.memcpy_htod_async(ptr, a)
        stream.memset_async(ptr, 0, 8)
        stream.memcpy_dtoh_async(b, ptr)
        stream.synchronize()
        assert stream.query() is True
        expected = a.copy()
        expected[0] = 0
        np.testing.assert_array_equal(b, expected)
        sim.free(ptr)


def test_host_func_runs_in_order_and_query_reports_pending():
    gate = threading.Event()
    order = []
    with sim.Stream() as stream:
        stream.host_func(lambda: gate.wait(30))
        for i in range(5):
            stream.host_func(lambda i=i: order.append(i))
        assert stream.query() is False
        gate.set()
        stream.synchronize()
    assert order == [0, 1, 2, 3, 4]


def test_sticky_error_is_raised_by_synchronize_and_later_work_is_skipped():
    ptr = sim.malloc(4096)
    sim.set_device(3)
    source = sim.malloc(4096)  # memory of another device, gone at its reset
    sim.set_device(0)
    gate = threading.Event()
    ran = []
    stream = sim.Stream()
    stream.host_func(lambda: gate.wait(30))
    stream.memcpy_dtod_async(ptr, source, 4096)
    stream.host_func(lambda: ran.append(True))
    sim.device_reset(3)  # the queued copy's source is gone (a free would wait for it)
    gate.set()
    with pytest.raises(SimError) as info:
        stream.synchronize()
    assert info.value.status_name == "SIM_ERR_INVALID_POINTER"
    assert ran == []
    with pytest.raises(SimError):
        stream.query()
    stream.destroy()
    sim.free(ptr)


def test_free_is_ordered_after_the_work_queued_before_it():
    ptr = sim.malloc(4096)
    gate = threading.Event()
    stream = sim.Stream()
    stream.host_func(lambda: gate.wait(30))
    stream.memcpy_htod_async(ptr, np.ones(1024, dtype=np.float32))
    sim.free(ptr)  # ordered after the copy: no error, memory not reused before it ran
    with pytest.raises(SimError):
        sim.memset(ptr, 0, 16)  # gone for new work at once
    other = sim.malloc(4096)
    assert other != ptr
    gate.set()
    stream.synchronize()
    stream.destroy()
    sim.free(other)


def test_destroy_waits_for_pending_work_and_invalidates_the_handle():
    done = []
    stream = sim.Stream()
    stream.host_func(lambda: (threading.Event().wait(0.05), done.append(True)))
    stream.destroy()
    assert done == [True]
    with pytest.raises(SimError) as info:
        stream.synchronize()
    assert info.value.status_name == "SIM_ERR_INVALID_HANDLE"
    with pytest.raises(SimError):
        stream.destroy()


def test_host_func_exception_goes_to_unraisablehook(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: seen.append(info.exc_type))

    def boom():
        raise RuntimeError("from a host function")

    with sim.Stream() as stream:
        stream.host_func(boom)
        stream.synchronize()  # host functions have no status: the stream stays healthy
    assert seen == [RuntimeError]


def test_two_streams_on_one_device_run_concurrently():
    barrier = threading.Barrier(2, timeout=30)
    results = []
    with sim.Stream() as a, sim.Stream() as b:
        a.host_func(lambda: results.append(barrier.wait()))
        b.host_func(lambda: results.append(barrier.wait()))
        a.synchronize()
        b.synchronize()
    assert sorted(results) == [0, 1]


# ---- events --------------------------------------------------------------------------

def test_event_cross_device_wait():
    data = np.arange(256, dtype=np.uint8)
    out = np.zeros_like(data)
    gate = threading.Event()
    with sim.Event() as event, sim.Stream() as producer:
        src = sim.malloc(data.nbytes)
        producer.host_func(lambda: gate.wait(30))
        producer.memcpy_htod_async(src, data)
        producer.record(event)
        assert event.query() is False
        sim.set_device(1)
        with sim.Stream() as consumer:
            dst = sim.malloc(data.nbytes)
            consumer.wait_event(event)
            consumer.memcpy_dtod_async(dst, src, data.nbytes)
            consumer.memcpy_dtoh_async(out, dst)
            gate.set()
            consumer.synchronize()
            event.synchronize()
            assert event.query() is True
            sim.free(dst)
        sim.free(src)
    np.testing.assert_array_equal(out, data)


def test_event_record_on_other_device_stream_is_refused():
    with sim.Event() as event:
        sim.set_device(1)
        with sim.Stream() as stream:
            with pytest.raises(SimError) as info:
                event.record(stream)
            assert info.value.status_name == "SIM_ERR_WRONG_DEVICE"


# ---- reset, faults, counters ---------------------------------------------------------

def test_device_reset_destroys_streams_and_frees_memory():
    sim.set_device(2)
    _, total = sim.mem_get_info()
    ptr = sim.malloc(1 << 20)
    stream = sim.Stream()
    sim.device_reset(2)
    assert sim.mem_get_info() == (total, total)
    with pytest.raises(SimError):
        stream.synchronize()
    with pytest.raises(SimError):
        sim.free(ptr)
    assert sim.call_count("device_reset") == 1


def test_fault_injection_then_retry_and_counters():
    ptr = sim.malloc(1024)
    sim.inject_fault("free", count=2, status=_status("SIMPLER_CHIP_ERR_DEVICE_FAULT"))
    for _ in range(2):
        with pytest.raises(SimError) as info:
            sim.free(ptr)
        assert info.value.status_name == "SIMPLER_CHIP_ERR_DEVICE_FAULT"
    sim.free(ptr)
    assert sim.call_count("free") == 3
    assert sim.call_count("malloc") == 1
    sim.reset_counters()
    assert sim.call_count("free") == 0

    sim.inject_fault("malloc")
    with pytest.raises(SimError) as info:
        sim.malloc(1024)
    assert info.value.status_name == "SIM_ERR_INJECTED_FAULT"
    sim.free(sim.malloc(1024))

    with pytest.raises(SimError) as info:
        sim.inject_fault("no_such_op")
    assert info.value.status_name == "SIM_ERR_UNKNOWN_OPERATION"
    with pytest.raises(SimError):
        sim.call_count("no_such_op")
    assert set(sim.OPERATIONS) >= {"launch", "stream_destroy", "event_destroy"}


def test_stream_destroy_fault_keeps_the_stream_for_retry():
    stream = sim.Stream()
    sim.inject_fault("stream_destroy")
    with pytest.raises(SimError):
        stream.destroy()
    stream.synchronize()  # still alive
    stream.destroy()
    sim.clear_faults()


def test_stream_keeps_async_callables_alive_until_a_successful_synchronize():
    import gc
    import weakref

    class Callback:
        def __call__(self) -> None:
            pass

    gate = threading.Event()
    stream = sim.Stream()
    stream.host_func(lambda: gate.wait(30))
    callback = Callback()
    alive = weakref.ref(callback)
    stream.host_func(callback)
    del callback
    gc.collect()
    assert alive() is not None  # queued behind the gate: the stream keeps it
    sim.inject_fault("stream_synchronize")
    # synchronize() first waits in slices (Ctrl-C), so the injected refusal comes once the
    # queue drained: open the gate meanwhile (else the wait is the gate's 30 s).
    threading.Timer(0.1, gate.set).start()
    with pytest.raises(SimError):
        stream.synchronize()  # refused: not a successful wait, so nothing is released
    gc.collect()
    assert alive() is not None
    stream.synchronize()
    gc.collect()
    assert alive() is None
    stream.destroy()


@pytest.mark.parametrize("with_stream", [False, True], ids=["no_stream", "stream_ordered"])
def test_device_array_after_device_reset_never_frees_a_reused_address(with_stream):
    """A reset frees all of the device's memory; the next allocation may reuse the old
    array's address. Collecting the old array must not free the new owner's memory."""
    sim.set_device(2)
    sim.device_reset(2)  # an empty device: what earlier tests left there would move the reuse
    sim.set_device(2)
    stream = sim.Stream() if with_stream else None
    old = sim.DeviceArray.zeros((4096,), "float32", stream=stream)
    old_ptr = old.ptr
    sim.device_reset(2)
    assert old.ptr == 0  # the address is no longer the array's
    with pytest.raises(ValueError, match="device_reset"):
        old.numpy()
    sim.set_device(2)
    new = sim.DeviceArray.from_numpy(np.arange(4096, dtype=np.float32))
    assert new.ptr == old_ptr  # the allocator reuses the freed range (what makes this matter)
    _, total = sim.mem_get_info()
    used = total - sim.mem_get_info()[0]
    old.free()
    del old
    assert total - sim.mem_get_info()[0] == used  # nothing of the new owner's was freed
    np.testing.assert_array_equal(new.to_numpy(), np.arange(4096, dtype=np.float32))


def test_a_freed_device_array_never_exposes_its_old_address():
    """Buffer export of a freed array used to throw inside pybind11's buffer hook, which
    terminates the process. Now numpy() raises and a raw export is empty."""
    a = sim.DeviceArray.zeros((8,), "float32")
    a.free()
    with pytest.raises(ValueError, match="freed"):
        a.numpy()
    raw = np.asarray(a)
    assert raw.shape == (0,)  # nothing of the old address is reachable
    with pytest.raises(ValueError, match="freed"):
        a.__dlpack__()


@pytest.mark.parametrize("dtype", ["bfloat16", "BF16"])
def test_device_array_takes_bfloat16_by_name(dtype):
    """numpy has no bfloat16: the name maps to DataType.BFLOAT16 (a uint16 numpy view)."""
    from simpler.task_interface import DataType
    sim.set_device(0)
    a = sim.DeviceArray.zeros((2, 3), dtype)
    assert a.data_type == DataType.BFLOAT16 and a.nbytes == 12
    assert a.numpy().dtype == np.uint16 and not a.numpy().any()
    a.free()
