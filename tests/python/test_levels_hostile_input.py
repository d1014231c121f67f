"""Levels 3 and 4 refuse hostile input with a typed SimplerError before anything is taken
or moved (docs/api.md "Worker(level=3)", "Collectives", "Worker(level=4)")."""
from __future__ import annotations

import itertools
import os
import pathlib
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from simpler import Worker, errors, sim
from simpler.errors import (SimplerAttributeError, SimplerError, SimplerRuntimeError, SimplerTypeError,
                            SimplerValueError)

PYTHON_DIR = str(pathlib.Path(__file__).resolve().parents[2] / "python")


@pytest.fixture(scope="module")
def w2():
    worker = Worker(level=3, device_ids=[0, 1])
    worker.init()
    yield worker
    worker.close()


def _refused(worker, orchestration, exc, match):
    with pytest.raises(exc, match=match) as err:
        worker.run(orchestration)
    assert isinstance(err.value, SimplerError)
    assert worker.last_run_stats["tasks"] == 0          # nothing was enqueued


@pytest.mark.parametrize("kind", ["reduce_scatter", "all_gather", "all_to_all"])
@pytest.mark.parametrize("out_dtype", [np.uint8, np.float16, np.int32, np.float64])
def test_collective_outputs_of_another_dtype_are_refused(w2, kind, out_dtype):
    # A narrower output was copied past its end (a chip error after data moved); a wider or
    # same-size one silently got reinterpreted bytes.
    ins = [np.ones(10, np.float32), np.full(10, 2, np.float32)]
    size = {"reduce_scatter": 5, "all_gather": 20, "all_to_all": 10}[kind]
    outs = [np.zeros(size, out_dtype) for _ in range(2)]
    _refused(w2, lambda o, a: getattr(o, kind)(ins, outs), SimplerValueError,
             "outputs are .* but inputs are FLOAT32")
    assert not any(o.any() for o in outs)


def test_collective_group_and_dtype_arguments_are_typed(w2):
    xs = [np.ones(4, np.float32), np.ones(4, np.float32)]
    _refused(w2, lambda o, a: o.all_reduce(xs, chips=0), SimplerTypeError, "chips must be a list")
    _refused(w2, lambda o, a: o.all_reduce(xs, dtype="float32"), SimplerTypeError,
             "dtype must be a simpler.task_interface.DataType")
    ys = [np.zeros(4, np.float32), np.arange(4, dtype=np.float32)]
    w2.run(lambda o, a: o.broadcast(ys, np.int64(1)))   # a numpy integer is an index too
    np.testing.assert_array_equal(ys[0], np.arange(4, dtype=np.float32))


@pytest.mark.parametrize("chips", [{0, 1}, frozenset({0, 1}), {0: "x", 1: "y"}], ids=type)
def test_an_unordered_collective_group_is_refused(w2, chips):
    # arrays[i] belongs to chips[i]: a set was taken in its hash order.
    xs = [np.ones(4, np.float32), np.full(4, 2, np.float32)]
    _refused(w2, lambda o, a: o.all_reduce(xs, chips=chips), SimplerTypeError,
             "chips must be an ordered list")


def test_a_bool_is_not_a_chip(w2, add_scalar_callable):
    add = w2.register(add_scalar_callable)
    try:
        x = np.ones(8, np.float32)
        y = np.zeros_like(x)
        _refused(w2, lambda o, a: o.submit(add, x, y, 1.0, chip=True), SimplerValueError,
                 "chip True is not one of")
        _refused(w2, lambda o, a: o.submit(add, x, y, 1.0, chip=1.0), SimplerValueError,
                 "chip 1.0 is not one of")
        w2.run(lambda o, a: o.submit(add, x, y, 1.0, chip=np.int64(1)))   # numpy ints name chips
        with pytest.raises(SimplerValueError, match="not one of"):
            w2.malloc(16, True)
    finally:
        w2.unregister(add)


def test_numpy_device_ids_name_the_same_chips():
    w = Worker(level=3, device_ids=np.array([1, 0]))
    assert w.device_ids == [1, 0] and all(type(d) is int for d in w.device_ids)
    with pytest.raises(SimplerValueError, match=r"must be ints, got 0\.0 \(float\)"):
        Worker(level=3, device_ids=[0.0])


@pytest.mark.parametrize("ids, match", [
    (list(range(200_000)), "more than 4096 device ids"),
    (itertools.count(), "more than 4096 device ids"),            # never ends
    ([0] * 4000, r"\[0\] appear more than once in \[0, 0, 0, 0, 0, 0, 0, 0, \.\.\. \(4000 ids\)\]"),
    (list(range(4, 4000)), "3996 device ids given but the simulator has"),
])
def test_a_huge_or_endless_device_list_is_refused_at_once(ids, match):
    # The duplicate search was quadratic (200,000 ids: hours) and list() never ended.
    start = time.monotonic()
    with pytest.raises(SimplerValueError, match=match) as err:
        Worker(level=3, device_ids=ids)
    assert time.monotonic() - start < 5 and len(str(err.value)) < 400


def test_device_ids_at_level_2_point_to_level_3():
    with pytest.raises(SimplerTypeError, match="level=3"):
        Worker(level=2, device_ids=[0])


@pytest.mark.parametrize("level, exc, match", [
    (5, SimplerValueError, r"level must be 2, 3 or 4 \(got 5\)"),
    (0, SimplerValueError, r"level must be 2, 3 or 4 \(got 0\)"),
    (True, SimplerTypeError, "level must be an int, got bool"),
    ("3", SimplerTypeError, "level must be an int, got str"),
    (3.0, SimplerTypeError, "level must be an int, got float"),
])
def test_device_ids_with_a_wrong_level_name_the_level(level, exc, match):
    # It said "unexpected keyword argument 'device_ids'", pointing away from the mistake.
    with pytest.raises(exc, match=match):
        Worker(level=level, device_ids=[0, 1])


def test_bad_configs_are_typed_errors_before_any_chip_is_taken(w2):
    w = Worker(level=3, device_ids=[0, 1])
    before = sim.call_count("malloc"), sim.call_count("stream_create")
    with pytest.raises(SimplerTypeError, match="prewarm_config must be a CallConfig"):
        w.init(prewarm_config=3)
    assert (sim.call_count("malloc"), sim.call_count("stream_create")) == before
    assert w.state == "NEW"
    with pytest.raises(SimplerTypeError, match="config must be a CallConfig"):
        w2.run(lambda o, a: None, config=3)
    with pytest.raises(SimplerTypeError, match="config must be a CallConfig"):
        w2.submit(lambda o, a: None, config="fast")


def test_per_chip_copies_check_nbytes_as_level_2_does(w2):
    ptr = w2.malloc(64, 1)
    try:
        src = np.arange(4, dtype=np.float32)              # 16 bytes
        with pytest.raises(SimplerValueError, match="nbytes 64 exceeds the host buffer's 16"):
            w2.copy_to(ptr, src, 64, device_id=1)
        with pytest.raises(SimplerValueError, match="nbytes 64 exceeds"):
            w2.copy_from(np.zeros(4, np.float32), ptr, 64, device_id=1)
        with pytest.raises(SimplerValueError, match="nbytes must be >= 0"):
            w2.copy_to(ptr, src, -1, device_id=1)
        with pytest.raises(SimplerTypeError, match="C-contiguous"):
            w2.copy_to(ptr, np.arange(8, dtype=np.float32)[::2], device_id=1)
        with pytest.raises(SimplerTypeError, match="writable"):
            w2.copy_from(np.frombuffer(bytes(16), np.float32), ptr, device_id=1)
        for call in (lambda: w2.copy_to("0x10", src, device_id=1),
                     lambda: w2.copy_from(np.zeros(4, np.float32), None, device_id=1),
                     lambda: w2.free(1.5, 1), lambda: w2.malloc("64", 1)):
            with pytest.raises(SimplerTypeError, match="must be an int"):  # at level 4 a remote
                call()                                                     # rank got a raw str
        w2.copy_to(ptr, src, 8, device_id=1)               # a prefix still works
        out = np.zeros(4, np.float32)
        w2.copy_from(out, ptr, 8, device_id=1)
        np.testing.assert_array_equal(out, [0, 1, 0, 0])
    finally:
        w2.free(ptr, 1)


def test_level4_options_are_checked_before_mpi():
    with pytest.raises(SimplerTypeError, match="mpi_collectives must be True or False"):
        Worker(level=4, device_ids=[0], mpi_collectives="no")
    # A heartbeat as long as the timeout declared healthy ranks dead between two beats.
    with pytest.raises(SimplerValueError, match="heartbeat .* at most half of rank_timeout"):
        Worker(level=4, device_ids=[0], rank_timeout=1.0, heartbeat=3.0)


@pytest.mark.parametrize("name", ["rank_timeout", "heartbeat"])
@pytest.mark.parametrize("seconds", [1e6 + 1, 1e12, 1e300, float("inf"), float("nan"), 0, -1])
def test_level4_times_are_bounded(name, seconds):
    # 1e12 s overflowed the native engine's 64-bit nanoseconds: every rank was declared dead
    # at once and the process aborted at exit; 1e300 hung init.
    times = {"rank_timeout": 1e6 if name == "heartbeat" else seconds}
    if name == "heartbeat":
        times["heartbeat"] = seconds
    with pytest.raises(SimplerValueError, match=f"{name} must be a positive number of seconds, "
                                                r"at most 1e\+06"):
        Worker(level=4, device_ids=[0], **times)


def test_level4_times_take_numpy_numbers_but_not_bools():
    # docs/api.md: numpy numbers are numbers; np.float32(4) was 'not a positive number'.
    w = Worker(level=4, device_ids=[0], rank_timeout=np.float32(4), heartbeat=np.float16(0.5))
    assert w.rank_timeout == 4.0 and type(w.rank_timeout) is float
    for name, flag in (("rank_timeout", True), ("heartbeat", np.bool_(True))):
        with pytest.raises(SimplerValueError, match=f"{name} must be a positive number of seconds"):
            Worker(level=4, device_ids=[0], **{name: flag})


@pytest.mark.parametrize("field, value, bounds", [
    ("device_count", 0, "1..64"), ("device_count", 65, "1..64"),
    ("clusters_per_device", 0, "1..64"), ("aicpu_threads", 1000, "1..64"),
    ("device_memory_bytes", 1024, f"{64 << 10}..{1 << 40}"),
])
def test_sim_configure_names_the_field_and_its_range(field, value, bounds):
    # Checked before the driver (which only said "null, zero or out of range"), so this
    # holds even after the devices are in use.
    before = sim.get_config()
    with pytest.raises(SimplerValueError, match=f"{field} must be in {bounds}, got {value}"):
        sim.configure(**{field: value})
    assert sim.get_config() == before


REENTRY = """
import numpy as np
from simpler import Worker
from simpler.errors import SimplerRuntimeError
w = Worker(level=3, device_ids=[0, 1])
w.init()
for name, inner in [("run", lambda: w.run(lambda o, a: None)), ("close", w.close),
                    ("submit", lambda: w.submit(lambda o, a: None).wait())]:
    try:
        w.run(lambda o, a: inner())
    except SimplerRuntimeError as e:
        assert "inside a host orchestration" in str(e), e
        print("refused", name, flush=True)
h = w.submit(lambda o, a: w.close())
try:
    h.wait(30)
except SimplerRuntimeError:
    print("refused close in submit", flush=True)
kept = []
w.run(lambda o, a: kept.append(o))
x = np.ones(4, np.float32)
try:
    kept[0].all_reduce([x, x.copy()])
except SimplerRuntimeError:
    print("refused finished orch", flush=True)
assert w.committed_device_memory() == sum(w.committed_device_memory(d) for d in (0, 1))
w.close()
print("closed", w.state, flush=True)
"""


def test_run_submit_close_from_inside_an_orchestration_are_refused_not_a_hang():
    # In a subprocess: before the fix these deadlocked on the worker's own run lock.
    result = subprocess.run([sys.executable, "-c", REENTRY], capture_output=True, text=True,
                            timeout=120, env=dict(os.environ, PYTHONPATH=PYTHON_DIR))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split("\n")[:-1] == [
        "refused run", "refused close", "refused submit", "refused close in submit",
        "refused finished orch", "closed CLOSED"], result.stdout + result.stderr[-3000:]


def test_unregister_during_a_run_is_refused_and_the_run_completes(w2, add_scalar_callable):
    # It used to drop the callable on some chips while others refused (in use): the run
    # failed and the handle stayed half-registered.
    add = w2.register(add_scalar_callable)
    x = np.arange(1 << 16, dtype=np.float32)
    ys = [np.zeros_like(x) for _ in range(8)]
    submitted, release = threading.Event(), threading.Event()

    def orch(o, a):
        for i, y in enumerate(ys):
            o.submit(add, x, y, float(i))
        submitted.set()
        release.wait(30)

    run = w2.submit(orch)
    assert submitted.wait(30)
    with pytest.raises(SimplerRuntimeError, match="a host run is in flight"):
        w2.unregister(add)
    release.set()
    run.wait(60)
    for i, y in enumerate(ys):
        np.testing.assert_array_equal(y, x + i)
    with pytest.raises(SimplerRuntimeError, match="a host run is in flight"):
        w2.run(lambda o, a: w2.unregister(add))
    w2.unregister(add)                                   # after the run: fine


@pytest.mark.parametrize("value, match", [(2 ** 64, "does not fit 64 bits"),
                                          (-2 ** 63 - 1, "does not fit 64 bits"),
                                          (1e40, "out of range for FLOAT32")])
def test_a_scalar_that_does_not_fit_is_refused_not_truncated(w2, add_scalar_callable, value, match):
    # 2**64 used to reach the chip as 0; 1e40 raised struct's bare OverflowError.
    add = w2.register(add_scalar_callable)
    try:
        x = np.ones(8, np.float32)
        y = np.zeros_like(x)
        _refused(w2, lambda o, a: o.submit(add, x, y, value), SimplerValueError, match)
    finally:
        w2.unregister(add)


def test_an_infinite_wait_on_a_host_run_means_forever(w2):
    run = w2.submit(lambda o, a: None)
    for timeout in (float("inf"), 1e300, 2 ** 70):   # was OverflowError from threading
        run.wait(timeout)
        run.result(timeout)
    assert run.done


@pytest.mark.parametrize("timeout", [np.float32(0.05), np.float64(0.05), np.int64(0), 0])
def test_a_host_run_wait_takes_numpy_numbers_as_level_2_does(w2, timeout):
    # A numpy float32 timeout raised threading's bare TypeError ("cannot be interpreted as
    # an integer") at level 3; level 2's RunHandle.wait takes it.
    gate = threading.Event()
    run = w2.submit(lambda o, a: gate.wait(30))
    try:
        with pytest.raises(errors.WorkerTimeoutError, match="did not finish within"):
            run.wait(timeout)
    finally:
        gate.set()
    run.wait(30)


def test_close_grace_is_every_chips_close_grace():
    # It raised AttributeError ("no attribute '_native'") at level 3.
    w = Worker(level=3, device_ids=[2, 3])                # the module's worker holds 0 and 1
    assert w.close_grace == 10.0
    w.close_grace = 2.5                                   # before init: applied at init
    with pytest.raises(SimplerValueError, match="close_grace"):
        w.close_grace = -1
    with pytest.raises(SimplerTypeError, match="close_grace"):
        w.close_grace = "soon"
    w.init()
    try:
        assert [w.transport.worker(s).close_grace for s in (0, 1)] == [2.5, 2.5]
        w.close_grace = 4
        assert w.close_grace == 4.0
        assert [w.transport.worker(s).close_grace for s in (0, 1)] == [4.0, 4.0]
    finally:
        w.close()


@pytest.mark.parametrize("shape", [(), (1,) * 6])
def test_a_tensor_of_a_rank_chips_do_not_take_is_refused_at_submit(w2, add_scalar_callable, shape):
    # It was staged and enqueued, then the chip run failed (ChipTaskError).
    add = w2.register(add_scalar_callable)
    try:
        x = np.ones(shape, np.float32)
        y = np.zeros_like(x)
        _refused(w2, lambda o, a: o.submit(add, x, y, 1.0), SimplerValueError,
                 f"a {len(shape)}-d array; chip tensors have 1..5 dimensions")
    finally:
        w2.unregister(add)


def test_another_workers_handle_does_not_name_this_workers_callable(
        w2, add_scalar_callable, fatal_callable):
    # Both handles had key 1: the other Worker's fatal program ran as this one's add.
    other = Worker(level=3, device_ids=[2, 3])             # never init: nothing is taken
    add = w2.register(add_scalar_callable)
    foreign = other.register(fatal_callable)
    while foreign.key < add.key:                           # the same key in both Workers
        foreign = other.register(fatal_callable)
    assert foreign.key == add.key
    try:
        x = np.ones(8, np.float32)
        y = np.zeros_like(x)
        _refused(w2, lambda o, a: o.submit(foreign, x, y, 1.0), SimplerValueError,
                 "unknown callable handle")
    finally:
        w2.unregister(add)


@pytest.fixture(scope="module")
def typed_add(compiler):
    """add_scalar as a typed one-kernel program: (IN FLOAT32 rank 1, OUT FLOAT32 rank 1, SCALAR)."""
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable, DataType
    source = (pathlib.Path(__file__).resolve().parent / "programs" / "add_scalar_kernel.cpp").read_text()
    f32 = DataType.FLOAT32
    kernel = CoreCallable.build([(D.IN, f32, 1), (D.OUT, f32, 1), (D.SCALAR, f32)],
                                compiler.compile_kernel(source, "aiv"))
    return ChipCallable.from_kernel(kernel)


@pytest.mark.parametrize("x, match", [
    (np.zeros(8, np.float64), r"argument 0 \(IN\): expected a FLOAT32 array, got FLOAT64"),
    (np.zeros((2, 4), np.float32), r"argument 0 \(IN\): expected an array of rank 1, got rank 2"),
])
def test_submit_checks_a_typed_signature_before_anything_is_enqueued(w2, typed_add, x, match):
    """A typed signature's dtype and rank are refused at orch.submit (ArgumentTypeError, a
    SignatureMismatchError naming the index), not as a ChipTaskError once the task ran."""
    from simpler.errors import ArgumentTypeError
    handle = w2.register(typed_add)
    y = np.zeros(8, np.float32)
    with pytest.raises(ArgumentTypeError, match=match) as err:
        w2.run(lambda o, a: o.submit(handle, x, y, 1.0))
    assert err.value.arg_index == 0 and w2.last_run_stats["tasks"] == 0
    w2.run(lambda o, a: o.submit(handle, np.ones(8, np.float32), y, 1.0))
    np.testing.assert_array_equal(y, np.full(8, 2, np.float32))
    w2.unregister(handle)


@pytest.mark.parametrize("call", [
    lambda o, h, xs: o.submit(h, xs[0], xs[1], 1.0, chp=0),
    lambda o, h, xs: o.all_reduce(xs, bogus=1),
    lambda o, h, xs: o.broadcast(xs, 0, [0, 1]),
], ids=["submit", "all_reduce", "broadcast"])
def test_orch_calls_that_do_not_fit_the_signature_are_typed(w2, add_scalar_callable, call):
    handle = w2.register(add_scalar_callable)
    xs = [np.ones(4, np.float32), np.zeros(4, np.float32)]
    _refused(w2, lambda o, a: call(o, handle, xs), SimplerTypeError,
             r"HostOrchestrator\.\w+: .*; call it as orch\.")
    w2.unregister(handle)


def test_run_and_submit_take_the_documented_keywords(w2):
    """docs/api.md: run(fn, args=None, config=None), submit(fn, args=None, config=None)."""
    from simpler.task_interface import CallConfig
    seen = []
    w2.run(fn=lambda orch, args: seen.append(args), args=7, config=CallConfig())
    w2.submit(fn=lambda orch, args: seen.append(args), args=8, config=None).wait(30)
    assert seen == [7, 8]


@pytest.mark.parametrize("call, api", [
    (lambda w: w.malloc(sizee=4), "Worker.malloc"),
    (lambda w: w.free(0, 0, 0), "Worker.free"),
    (lambda w: w.copy_to(0, b"x", 1, bogus=True), "Worker.copy_to"),
    (lambda w: w.device_memory_info(chip=0), "Worker.device_memory_info"),
    (lambda w: w.register(), "Worker.register"),
    (lambda w: w.close(now=True), "Worker.close"),
    (lambda w: w.submit(lambda orch, args: None).wait(timeout=1, extra=2), "RunHandle.wait"),
])
def test_a_call_that_does_not_fit_a_level3_method_is_a_typed_error(w2, call, api):
    # docs/api.md: a call that does not fit a public API's signature is a SimplerTypeError
    # naming the API and its signature, at every level (it was a bare TypeError at level 3).
    with pytest.raises(SimplerTypeError, match=rf"^{api}: .*; call it as {api}\(") as err:
        call(w2)
    assert isinstance(err.value, TypeError)
    assert err.value.code is not None
    assert w2.state == "READY"


def test_a_run_whose_orchestration_raises_copies_nothing_back(w2, add_scalar_callable):
    # docs/api.md, concepts.md: outputs come back only if the run succeeded. The tasks the
    # orchestration submitted before it raised used to be copied back into the host arrays.
    add = w2.register(add_scalar_callable)
    try:
        x = np.arange(64, dtype=np.float32)
        y = np.zeros_like(x)

        def orchestration(orch, args):
            orch.submit(add, x, y, 1.0, chip=0)
            raise KeyError("the orchestration's own bug")

        w2.run(lambda o, a: o.submit(add, x, y, 1.0, chip=0))
        np.testing.assert_array_equal(y, x + 1)
        y[:] = 0
        held = w2.committed_device_memory()                  # the chips' own, once warm
        with pytest.raises(KeyError, match="own bug"):
            w2.run(orchestration)
        assert not y.any()                                   # nothing copied back
        assert w2.committed_device_memory() == held          # the run's buffers are freed
        w2.run(lambda o, a: o.submit(add, x, y, 2.0, chip=0))    # the worker stays usable
        np.testing.assert_array_equal(y, x + 2)
    finally:
        w2.unregister(add)


def test_task_numbers_of_the_orch_are_ints_not_bools(w2, add_scalar_callable):
    # docs/api.md: numpy integers are ints, bool and numpy.bool_ are not (True named task #1).
    add = w2.register(add_scalar_callable)
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    seen = []

    def orchestration(orch, args):
        first = orch.submit(add, x, y, 1.0, chip=0)
        second = orch.submit(add, y, y, 1.0, chip=1)
        seen.append((orch.dependencies(np.int64(second)), orch.chip_of(np.int32(first))))
        for bad in (True, np.bool_(True), "1", 1.0):
            for api in (orch.dependencies, orch.chip_of):
                with pytest.raises(SimplerTypeError, match="a task number is the int submit "
                                                           "returned"):
                    api(bad)
        with pytest.raises(SimplerValueError, match="no task #3 in this run"):
            orch.chip_of(3)

    try:
        w2.run(orchestration)
    finally:
        w2.unregister(add)
    assert seen == [([1], 0)]


def test_device_id_of_a_multi_chip_worker_is_a_typed_refusal(w2):
    # docs/api.md: every exception is a SimplerError; it was Python's bare AttributeError.
    with pytest.raises(SimplerAttributeError, match=r"has several chips: use device_ids") as err:
        w2.device_id  # noqa: B018
    assert err.value.code is not None
    assert not hasattr(w2, "device_id") and w2.device_ids == [0, 1]


def test_close_completes_the_runs_started_and_refuses_new_ones():
    # docs/api.md: close() completes the runs in flight, then closes every chip. A submit
    # (or run) that came while close() waited for them was accepted and then ran on closed
    # chips: ChipTaskError 'list index out of range', or it raced close for the chips.
    w = Worker(level=3, device_ids=[2, 3])          # the module's w2 holds chips 0 and 1
    ready, go, gate = threading.Event(), threading.Event(), threading.Event()

    def owner():                                    # close() runs on the thread that init()'d
        try:
            w.init()
        finally:
            ready.set()
        go.wait(60)
        w.close()

    closer = threading.Thread(target=owner)
    closer.start()
    assert ready.wait(60) and w.state == "READY"
    xs = [np.ones(16, np.float32), np.ones(16, np.float32)]
    first = w.submit(lambda o, a: (gate.wait(60), o.all_reduce(xs)))
    go.set()
    deadline = time.monotonic() + 30
    while not w._lifecycle.locked() and time.monotonic() < deadline:   # close() has begun
        time.sleep(0.01)
    time.sleep(0.2)                                 # ... and waits for the first run
    with pytest.raises(SimplerRuntimeError, match=r"submit: close\(\) was called"):
        w.submit(lambda o, a: o.all_reduce([np.ones(4, np.float32)] * 2))
    outcome = []

    def late_run():
        try:
            w.run(lambda o, a: o.all_reduce([np.ones(4, np.float32), np.ones(4, np.float32)]))
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - checked below
            outcome.append(error)

    runner = threading.Thread(target=late_run)
    runner.start()
    time.sleep(0.1)
    gate.set()
    closer.join(60)
    runner.join(60)
    first.wait(30)                                  # the run already started completed
    np.testing.assert_array_equal(xs[0], np.full(16, 2, np.float32))
    assert isinstance(outcome[0], SimplerRuntimeError), outcome
    assert w.state == "CLOSED"


def test_close_with_a_task_that_never_returns_is_bounded(wait_flag_callable):
    # docs/api.md: close() waits at most close_grace for the runs, then the chips' close
    # abandons a stuck one. It joined the run without a bound: a kernel that never returned
    # (no watchdog) hung close() forever, close_grace notwithstanding.
    from simpler.host import ChipTaskError
    from simpler.errors import PTO_RUNTIME_ERR_TIMEOUT
    w = Worker(level=3, device_ids=[2, 3])          # the module's w2 holds chips 0 and 1
    w.close_grace = 0.5
    flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32)   # the flag is never set
    state = {}

    def owner():                                    # close() runs on the thread that init()'d
        w.init()
        handle = w.register(wait_flag_callable)
        state["run"] = w.submit(lambda o, a: o.submit(handle, flag, out, chip=2))
        time.sleep(0.3)                             # the kernel is waiting
        started = time.monotonic()
        w.close()
        state["close_s"] = time.monotonic() - started

    closer = threading.Thread(target=owner, daemon=True)
    closer.start()
    closer.join(60)
    assert not closer.is_alive(), "close() hung on a run that never returns"
    # About 2 x close_grace; the kernel itself gives up only after ~20 s (what old close()
    # waited for: it had no bound of its own).
    assert state["close_s"] < 10 and w.state == "CLOSED"
    with pytest.raises(ChipTaskError, match="abandoned") as err:
        state["run"].wait(30)
    assert err.value.code == PTO_RUNTIME_ERR_TIMEOUT


@pytest.mark.parametrize("level", [3, 4])
@pytest.mark.parametrize("ids", [{0, 1}, frozenset({1}), {0: "a", 1: "b"}], ids=type)
def test_unordered_device_ids_are_refused(level, ids):
    # Chip i is device_ids[i]: a set (iterated in hash order) was taken as given.
    with pytest.raises(SimplerValueError, match="must be an ordered list of ints") as err:
        Worker(level=level, device_ids=ids)
    assert err.value.code == errors.PTO_RUNTIME_ERR_INVALID_ARGUMENT


@pytest.mark.parametrize("level", [2, 3, 4])
@pytest.mark.parametrize("option, match", [({"runtime": "nope"}, "unknown runtime 'nope'"),
                                           ({"platform": "nope"}, "unknown platform 'nope'")])
def test_a_bad_runtime_or_platform_leaves_every_level_new(level, option, match):
    # Level 3 (and 4) took it as a chip failing to come up: ChipGroupError, FAILED.
    ids = {"device_id": 3} if level == 2 else {"device_ids": [3]}   # w2 holds 0 and 1
    w = Worker(level=level, **ids, **option)
    before = sim.call_count("malloc"), sim.call_count("stream_create")
    with pytest.raises(SimplerValueError, match=match) as err:
        w.init()
    assert type(err.value).__name__ == "SimplerValueError"     # bad input, not a chip failure
    assert (sim.call_count("malloc"), sim.call_count("stream_create")) == before
    assert w.state == "NEW"
    w.close()
    assert w.state == "CLOSED"


def test_a_bad_prewarm_config_leaves_a_level4_worker_new():
    # Level 3 refused it before anything was taken; level 4 took it for a chip failing to
    # come up: ChipGroupError on every rank, FAILED.
    w = Worker(level=4, device_ids=[3])
    with pytest.raises(SimplerTypeError, match="prewarm_config must be a CallConfig"):
        w.init(prewarm_config=3)
    assert w.state == "NEW"
    w.close()


def test_close_on_another_thread_is_refused_and_the_worker_stays_usable():
    # docs/api.md: close() only on the thread that called init(). At level 3 every chip's
    # close failed (a ChipGroupError) after close() had begun: no run was admitted after.
    w = Worker(level=3, device_ids=[2, 3])          # the module's w2 holds chips 0 and 1
    w.init()
    try:
        box = {}

        def other():
            try:
                w.close()
            except BaseException as error:  # noqa: BLE001 - checked below
                box["error"] = error

        closer = threading.Thread(target=other)
        closer.start()
        closer.join(60)
        assert isinstance(box.get("error"), SimplerRuntimeError), box
        assert "thread that called init()" in str(box["error"]) and w.state == "READY"
        xs = [np.ones(4, np.float32), np.ones(4, np.float32)]
        w.run(lambda o, a: o.all_reduce(xs))        # still usable
        np.testing.assert_array_equal(xs[1], np.full(4, 2, np.float32))
    finally:
        w.close()
    assert w.state == "CLOSED"


@pytest.mark.parametrize("array_dtype, dtype", [(np.float16, "BFLOAT16"), (np.float32, "INT32"),
                                                (np.float16, "INT16")])
def test_a_collective_dtype_does_not_reinterpret_float_arrays(w2, array_dtype, dtype):
    # dtype= is for raw bits (uint16 arrays with BFLOAT16); float16 arrays with
    # dtype=BFLOAT16 were summed as bfloat16 bits: garbage, no error.
    from simpler.task_interface import DataType
    xs = [np.ones(4, array_dtype), np.ones(4, array_dtype)]
    _refused(w2, lambda o, a: o.all_reduce(xs, dtype=getattr(DataType, dtype)), SimplerValueError,
             f"the array is {np.dtype(array_dtype).name} but dtype={dtype}")
    assert (xs[0] == 1).all()
    bits = [np.full(4, 0x3c00, np.uint16), np.full(4, 0x3c00, np.uint16)]   # float16 1.0
    w2.run(lambda o, a: o.all_reduce(bits, dtype=DataType.FLOAT16))      # raw bits: fine
    np.testing.assert_array_equal(bits[0].view(np.float16), np.full(4, 2, np.float16))
