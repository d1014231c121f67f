"""Worker(level=4) scenarios, run under mpirun by tests/python/test_multi_host.py.

Usage: mpirun -np N python3 l4_cases.py CASE [CASE ...]. Every rank prints
``PASS <case> rank <r>`` per case; any failure prints the traceback and aborts the job.
"""
from __future__ import annotations

import pathlib
import sys
import threading
import time
import traceback

import numpy as np
from mpi4py import MPI

from simpler import KernelCompiler, SimplerError, Worker, sim
from simpler.host import ChipGroupError, ChipTaskError, RankError
from simpler.host.collectives import chunks
from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable, DataType

PROGRAMS = pathlib.Path(__file__).resolve().parents[1] / "programs"
COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
DEVICES = [0, 1]


def program(orch_file: str, entry: str) -> ChipCallable:
    cc = KernelCompiler()
    sig = [D.IN, D.OUT, D.SCALAR]
    kernel = CoreCallable.build(sig, cc.compile_kernel(
        (PROGRAMS / "add_scalar_kernel.cpp").read_text(), "aiv"))
    orch = cc.compile_orchestration((PROGRAMS / orch_file).read_text(), entry=entry)
    return ChipCallable.build(sig, entry, orch, children=[(0, kernel)])


ADD = program("add_scalar_orch.cpp", "add_scalar_entry")
FATAL = program("fatal_orch.cpp", "fatal_entry")


def free_memory() -> list:
    """Free device memory of this rank's devices, as the simulator sees it."""
    box = []

    def measure():
        for d in DEVICES:
            sim.set_device(d)
            box.append(sim.mem_get_info()[0])
    t = threading.Thread(target=measure)
    t.start()
    t.join()
    return box


def expect(exc, fn, match=""):
    try:
        fn()
    except exc as error:
        assert match in str(error), f"{match!r} not in {error}"
        return error
    raise AssertionError(f"{exc.__name__} not raised")


# ---- cases ---------------------------------------------------------------------------------

def case_basics():
    before = free_memory()
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=20)
    assert w.kernel_mode_supported is False
    add = w.register(ADD)
    w.init()
    if w.is_orchestrator:
        assert w.device_ids == [(r, d) for r in range(SIZE) for d in DEVICES]
        n = 3000
        x = np.arange(n, dtype=np.float32)
        t = np.zeros_like(x)
        y = np.zeros_like(x)
        last = (SIZE - 1, 1)

        def orch(o, _):
            a = o.submit(add, x, t, 1.0, chip=last)            # on the last rank
            b = o.submit(add, t, y, 2.0, chip=(0, 0))          # RAW across hosts
            c = o.submit(add, y, y, 3.0)                        # placed by simpler
            assert o.dependencies(b) == [a] and o.dependencies(c) == [b]

        w.run(orch)
        np.testing.assert_array_equal(t, x + 1)
        np.testing.assert_array_equal(y, x + 6)
        run = w.submit(lambda o, a: [o.submit(add, x, t, float(i), chip=c)
                                     for i, c in enumerate(w.device_ids)])
        run.wait(timeout=120)
    else:
        expect(RuntimeError, lambda: w.run(lambda o, a: None), "only rank 0")
        for memory_call in (lambda: w.committed_device_memory(), lambda: w.malloc(64, (0, 0)),
                            lambda: w.device_memory_info((0, 0))):
            error = expect(RuntimeError, memory_call, "only rank 0")   # not a bare IndexError
            assert isinstance(error, SimplerError) and error.code, error
        expect(TypeError, lambda: w.register(5), "expected a ChipCallable")  # as on rank 0
    w.unregister(add)              # every rank: rank 0's removes it everywhere, a no-op elsewhere
    w.close()
    assert w.state == "CLOSED" and free_memory() == before


def _bf16(v):
    return (np.asarray(v, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def check_reductions(w, chips, sizes, dtypes, mpi, rs_mpi=None):
    """all_reduce of every op and reduce_scatter (max) over ``chips`` against numpy; ``mpi``
    / ``rs_mpi``: whether MPI's collectives must carry them (rs_mpi defaults to mpi)."""
    rs_mpi = mpi if rs_mpi is None else rs_mpi
    g = len(chips)
    rng = np.random.default_rng(g)
    for n in sizes:
        for dtype in dtypes:
            vals = [rng.integers(-8, 9, n) for _ in range(g)]
            bf16 = dtype == "bfloat16"
            arr = [_bf16(v) if bf16 else v.astype(dtype) for v in vals]
            dt = DataType.BFLOAT16 if bf16 else None
            for op, fn in (("sum", np.sum), ("max", np.max), ("min", np.min)):
                xs = [a.copy() for a in arr]
                w.run(lambda o, a: o.all_reduce(xs, op, chips=chips, dtype=dt))
                assert w.last_run_stats["mpi_collectives"] == (1 if mpi else 0), chips
                want = fn(np.stack(vals), axis=0)
                for x in xs:
                    np.testing.assert_array_equal(x, _bf16(want) if bf16 else want.astype(dtype))
            ins = [a.copy() for a in arr]
            outs = [np.zeros(size, dtype=arr[0].dtype) for _, size in chunks(n, g)]
            w.run(lambda o, a: o.reduce_scatter(ins, outs, "max", chips=chips, dtype=dt))
            assert w.last_run_stats["mpi_collectives"] == (1 if rs_mpi else 0), chips
            want = np.max(np.stack(vals), axis=0)
            want = _bf16(want) if bf16 else want.astype(dtype)
            for (off, size), got in zip(chunks(n, g), outs):
                np.testing.assert_array_equal(got, want[off:off + size])


def check_movement(w, chips, n, mpi):
    """all_gather (uneven inputs), all_to_all, broadcast, reduce_scatter (sum) vs numpy."""
    g = len(chips)
    parts = chunks(n, g)
    c = [size for _, size in parts]
    src = [np.arange(n, dtype=np.float32) * (i + 1) for i in range(g)]
    uneven = [np.arange(n + i, dtype=np.int32) - i for i in range(g)]
    rs = [np.zeros(size, dtype=np.float32) for size in c]
    ag = [np.zeros(sum(u.size for u in uneven), dtype=np.int32) for _ in range(g)]
    a2a = [np.zeros(g * size, dtype=np.float32) for size in c]
    bc = [s.copy() for s in src]

    def orch(o, _):
        o.reduce_scatter(src, rs, chips=chips)
        o.all_gather(uneven, ag, chips=chips)
        o.all_to_all(src, a2a, chips=chips)
        o.broadcast(bc, root=g - 1, chips=chips)

    w.run(orch)
    assert w.last_run_stats["mpi_collectives"] == (4 if mpi else 0), chips
    total = np.sum(np.stack(src), axis=0)
    for (off, size), got in zip(parts, rs):
        np.testing.assert_array_equal(got, total[off:off + size])
    for got in ag:
        np.testing.assert_array_equal(got, np.concatenate(uneven))
    for (off, size), got in zip(parts, a2a):
        np.testing.assert_array_equal(got, np.concatenate([s[off:off + size] for s in src]))
    for got in bc:
        np.testing.assert_array_equal(got, src[-1])


def case_collectives():
    """Three paths: MPI's own collectives (one chip on every rank, in rank order), the
    hierarchical all_reduce (a chip on every rank, several on some: local reductions + MPI
    between the ranks) and simpler's ring/tree (anything else, or mpi_collectives=False);
    every op, dtype, group sizes 1..2*ranks, sizes not divisible by the group."""
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=20)
    w.init()
    if w.is_orchestrator:
        every = w.device_ids                                    # 2 chips per rank
        per_rank = [(r, 1) for r in range(SIZE)]                # one per rank, in order
        dtypes = ("float32", "int32", "bfloat16", "float16")
        g = len(every)
        check_reductions(w, per_rank, (2 * SIZE - 3, 1000), dtypes, mpi=True)
        check_reductions(w, every, (2 * g - 3, 1000), dtypes, mpi=True, rs_mpi=False)
        check_reductions(w, per_rank[::-1], (7,), ("float32",), mpi=True, rs_mpi=False)
        check_reductions(w, [(0, 0), (0, 1)], (3,), ("float32", "bfloat16"), mpi=False)
        for chips, mpi in ((every, False), (per_rank, True), ([(0, 1)], False),
                           (per_rank[::-1], False), ([(0, 0), (SIZE - 1, 1), (0, 1)], False)):
            for n in (2 * len(chips) - 1, 1000):
                check_movement(w, chips, n, mpi)
        w.mpi_collectives = False                               # the ring everywhere
        check_reductions(w, every, (2 * g - 3, 1000), dtypes, mpi=False)
        check_reductions(w, per_rank, (2 * SIZE - 3,), ("float32",), mpi=False)
        check_movement(w, per_rank, 2 * SIZE - 1, mpi=False)
        n = 1000   # the ring's bytes per chip, as stated in simpler/host/collectives.py
        c = [size for _, size in chunks(n, g)]
        xs = [np.full(n, i + 1, dtype=np.float32) for i in range(g)]
        w.run(lambda o, a: o.all_reduce(xs))
        assert w.last_run_stats["peer_received"] == \
            [(2 * n - c[i] - c[(i + 1) % g]) * 4 for i in range(g)]
        w.mpi_collectives = True
        # MPI's path is ordered like any task: producer -> all_reduce -> consumer.
        add = w.register(ADD)
        x = np.arange(300, dtype=np.float32)
        ys = [np.zeros_like(x) for _ in per_rank]
        z = np.zeros_like(x)

        def orch(o, _):
            producers = [o.submit(add, x, y, float(i), chip=chip)
                         for i, (y, chip) in enumerate(zip(ys, per_rank))]
            reduce = o.all_reduce(ys, chips=per_rank)
            consumer = o.submit(add, ys[-1], z, 1.0, chip=(0, 0))
            assert o.dependencies(reduce) == producers
            assert o.dependencies(consumer) == [reduce]

        w.run(orch)
        assert w.last_run_stats["mpi_collectives"] == 1
        want = SIZE * x + sum(range(SIZE))
        for y in ys:
            np.testing.assert_array_equal(y, want)
        np.testing.assert_array_equal(z, want + 1)
        # The size picks the path (mpi_all_reduce_max_bytes): MPI's up to the limit, the
        # ring past it, for one chip per rank and for the hierarchy; the same numbers.
        assert w.mpi_all_reduce_max_bytes == 16 << 20
        w.mpi_all_reduce_max_bytes = 1000 * 4
        for chips, rs_mpi in ((per_rank, True), (every, False)):
            check_reductions(w, chips, (1000,), ("float32", "int32"), mpi=True, rs_mpi=rs_mpi)
            check_reductions(w, chips, (1001,), ("float32", "int32"), mpi=False, rs_mpi=rs_mpi)
        w.mpi_all_reduce_max_bytes = 16 << 20
    w.close()


def case_bad_input():
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=20)
    add = w.register(ADD)
    w.init()
    if w.is_orchestrator:
        x = np.zeros(64, dtype=np.float32)
        y = np.zeros_like(x)
        huge = np.zeros(sim.get_config().device_memory_bytes // 4 + 1024, dtype=np.float32)
        cases = [
            (lambda o: o.submit(add, x, y, 1.0, chip=(SIZE, 0)), "not one of"),
            (lambda o: o.submit(add, x, y, 1.0, chip=(0, 5)), "not one of"),
            (lambda o: o.submit(add, huge, huge, 1.0, chip=(SIZE - 1, 0)), "do not fit"),
            (lambda o: o.all_reduce([x, np.zeros(65, np.float32)], chips=[(0, 0), (SIZE - 1, 1)]),
             "same size"),
            (lambda o: o.all_gather([x, x[:10]], [np.zeros(74, np.float32)] * 2,
                                    chips=[(0, 0), (SIZE - 1, 0)]), "overlap"),
        ]
        for call, match in cases:
            expect(ValueError, lambda: w.run(lambda o, a: call(o)), match)
            assert w.last_run_stats["tasks"] == 0
        expect(ValueError, lambda: w.malloc(64, (SIZE + 1, 0)), "not one of")
        for value, exc in ((-1, ValueError), (1.5, TypeError), (True, TypeError)):
            error = expect(exc, lambda: setattr(w, "mpi_all_reduce_max_bytes", value),
                           "mpi_all_reduce_max_bytes")
            assert isinstance(error, SimplerError) and error.code, error
        assert w.mpi_all_reduce_max_bytes == 16 << 20
        if SIZE >= 3:
            refused_transfer_between_serving_ranks(w)
    else:
        # Rank 0 picks every collective's path: a setting made elsewhere was stored and ignored.
        for name, value in (("mpi_collectives", False), ("mpi_all_reduce_max_bytes", 0)):
            error = expect(SimplerError, lambda: setattr(w, name, value), "set it on rank 0")
            assert isinstance(error, RuntimeError) and f"rank {RANK}" in str(error), error
        assert w.mpi_collectives is True and w.mpi_all_reduce_max_bytes == 16 << 20
    w.close()


def refused_transfer_between_serving_ranks(w):
    """A copy from rank 2's chip to rank 1's that rank 1 refuses (not its memory): a typed
    error at once (rank 2's send never completes, so it never replies: awaiting it first
    hung), the tag held (the data may sit at rank 1), later transfers unharmed."""
    t, n = w.transport, 1 << 16
    src, dst = w.malloc(n, (2, 0)), w.malloc(n, (1, 0))
    w.copy_to(src, np.full(n, 7, np.uint8), device_id=(2, 0))
    s1, s2 = w.device_ids.index((1, 0)), w.device_ids.index((2, 0))
    held = t.native.stale_replies
    expect(ValueError, lambda: t.copy_peer(s1, dst + (1 << 24), s2, src, n),
           "not inside a live allocation")
    assert t.native.stale_replies > held
    t.copy_peer(s1, dst, s2, src, n)
    out = np.zeros(n, np.uint8)
    w.copy_from(out, dst, device_id=(1, 0))
    assert (out == 7).all()
    w.free(src, (2, 0))
    w.free(dst, (1, 0))


def case_remote_failure():
    """A failing task on another rank: typed error naming it; nothing leaked there."""
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=20)
    add = w.register(ADD)
    fatal = w.register(FATAL)
    w.init()
    if w.is_orchestrator:
        remote = (SIZE - 1, 0)
        x = np.arange(128, dtype=np.float32)
        t, y = np.zeros_like(x), np.zeros_like(x)
        w.run(lambda o, a: o.submit(add, x, y, 0.0, chip=remote))          # warm the chip
        held = w.committed_device_memory(remote)
        free_before = w.device_memory_info(remote)[0]
        err = expect(ChipTaskError, lambda: w.run(lambda o, a: [
            o.submit(fatal, x, t, 1.0, chip=remote), o.submit(add, t, y, 1.0, chip=(0, 1))]),
            f"rank {SIZE - 1} device 0")
        assert "SIMPLER_CHIP_ERR_ORCH_FATAL" in str(err), err
        assert w.committed_device_memory(remote) == held
        assert w.device_memory_info(remote)[0] == free_before
        w.run(lambda o, a: o.submit(add, x, y, 4.0, chip=remote))
        np.testing.assert_array_equal(y, x + 4)
    w.close()


def case_not_addressable():
    """A platform whose device memory MPI cannot address: a transfer between ranks is a typed
    error naming the rank (not a hang), and collectives never take MPI's path."""
    from simpler.host.transport import LocalTransport
    original = LocalTransport.addressable
    LocalTransport.addressable = property(lambda self: False)
    try:
        w = Worker(level=4, device_ids=DEVICES, rank_timeout=20)
        add = w.register(ADD)
        w.init()
        if w.is_orchestrator:
            x = np.arange(64, dtype=np.float32)
            y = np.zeros_like(x)
            err = expect(ChipTaskError, lambda: w.run(
                lambda o, a: o.submit(add, x, y, 1.0, chip=(SIZE - 1, 0))), f"rank {SIZE - 1}")
            assert "address" in str(err), err
            assert w.transport.mpi_group([w.device_ids.index((r, 0)) for r in range(SIZE)]) is None
            w.run(lambda o, a: o.submit(add, x, y, 2.0, chip=(0, 1)))     # local chips work
            np.testing.assert_array_equal(y, x + 2)
        w.close()
    finally:
        LocalTransport.addressable = original


def case_init_rollback():
    """A chip failing to come up on the last rank: every rank rolls back and is told."""
    before = free_memory()
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=20)
    if RANK == SIZE - 1:
        sim.inject_fault("stream_create", count=1)     # this rank's device 0 fails init
    err = expect(ChipGroupError, w.init, f"rank {SIZE - 1} device 0")
    sim.clear_faults()
    assert (SIZE - 1, 0) in err.failures and w.state == "FAILED"
    assert free_memory() == before
    w.close()
    assert w.state == "CLOSED"                  # as at level 2 (it stayed FAILED)
    COMM.Barrier()


def case_mismatched_device_ids():
    """The last rank gives fewer device_ids than rank 0 (which names every rank's chips after
    its own): every rank's init fails naming that rank, and every chip is rolled back."""
    before = free_memory()
    w = Worker(level=4, device_ids=DEVICES[:1] if RANK == SIZE - 1 else DEVICES, rank_timeout=20)
    err = expect(ChipGroupError, w.init, f"rank {SIZE - 1}: device_ids [0] differ from rank 0's")
    assert (SIZE - 1, None) in err.failures and w.state == "FAILED"
    assert free_memory() == before
    w.close()
    COMM.Barrier()


def case_skipped_init():
    """The last rank never calls init() (its script failed before): the others' init() raises
    RankError within rank_timeout instead of blocking in MPI forever; nothing is taken."""
    timeout = 1.0
    before = free_memory()
    COMM.Barrier()
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=timeout)
    if RANK == SIZE - 1:
        time.sleep(3 * timeout)
    else:
        start = time.monotonic()
        err = expect(RankError, w.init, f"rank {SIZE - 1} did not call init()")
        assert err.rank == SIZE - 1 and w.state == "FAILED", err   # every rank names it
        assert time.monotonic() - start < timeout + 2.0
    assert free_memory() == before
    w.close()
    COMM.Barrier()


def case_stale_hello():
    """An init() that timed out leaves its hello queued at rank 0 (MPI cannot take a sent
    message back): rank 0's next init() must not take it for a rank that is not there (it
    would enter the collective setup and block until that rank came back), and a later
    init() of every rank must still succeed."""
    timeout = 1.0
    COMM.Barrier()
    if RANK != 0:                      # 1. rank 0 is late: the others give up, hellos queued
        w = Worker(level=4, device_ids=DEVICES, rank_timeout=timeout)
        expect(RankError, w.init, "rank 0 did not call init()")
    else:
        time.sleep(timeout + 0.5)
    COMM.Barrier()
    if RANK == 0:                      # 2. now the others are late: rank 0 must see it
        w = Worker(level=4, device_ids=DEVICES, rank_timeout=timeout)
        start = time.monotonic()
        err = expect(RankError, w.init, "rank 1 did not call init()")
        assert err.rank == 1 and time.monotonic() - start < timeout + 1.0, err
    else:
        time.sleep(timeout + 1.0)
    COMM.Barrier()
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=20)   # 3. everybody: it works
    add = w.register(ADD)
    w.init()
    if w.is_orchestrator:
        x = np.arange(64, dtype=np.float32)
        y = np.zeros_like(x)
        w.run(lambda o, a: o.submit(add, x, y, 1.0, chip=(SIZE - 1, 0)))
        np.testing.assert_array_equal(y, x + 1)
    w.close()
    COMM.Barrier()
    assert not COMM.Iprobe(source=MPI.ANY_SOURCE, tag=32001), "a rendezvous message left queued"


def case_silent_rank():
    """The last rank stops answering: rank 0 gets RankError naming it within the bound."""
    before = free_memory()
    timeout = 1.0
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=timeout)
    add = w.register(ADD)
    w.init()
    silent = SIZE - 1
    COMM.Barrier()
    if RANK == silent:
        w._test_go_silent(4.0)
    if w.is_orchestrator:
        time.sleep(0.2)
        x = np.arange(64, dtype=np.float32)
        y = np.zeros_like(x)
        # First inside one of MPI's own collectives (one chip per rank), then a task.
        xs = [np.arange(64, dtype=np.float32) for _ in range(SIZE)]
        start = time.monotonic()
        err = expect(ChipTaskError, lambda: w.run(
            lambda o, a: o.all_reduce(xs, chips=[(r, 0) for r in range(SIZE)])), f"rank {silent}")
        elapsed = time.monotonic() - start
        assert elapsed < timeout + 2.5, f"took {elapsed:.1f} s to notice"
        assert err.device == f"rank {silent} device 0", err    # its inputs could not be staged
        assert isinstance(err.__cause__, RankError) and err.__cause__.rank == silent, err
        err = expect(ChipTaskError, lambda: w.run(
            lambda o, a: o.submit(add, x, y, 1.0, chip=(silent, 1))), f"rank {silent}")
        assert isinstance(err.__cause__, RankError) and err.__cause__.rank == silent
        close_err = expect(ChipGroupError, w.close, f"rank {silent}")
        assert any(isinstance(e, RankError) and e.rank == silent
                   for e in close_err.failures.values())
    else:
        if RANK == silent:
            time.sleep(4.5)
        try:
            w.close()
        except ChipGroupError:
            pass
    assert w.state == "CLOSED"
    assert free_memory() == before, (free_memory(), before)
    COMM.Barrier()


def case_abandoned_collective():
    """The last rank stalls inside one of MPI's collectives (a broadcast from it) and resumes
    after rank 0 gave up: rank 0 gets a typed error within the bound, the run's device
    buffers are freed on every live rank, and the collective completing late (once the rank
    resumes) writes none of them — they have new owners by then."""
    before = free_memory()
    timeout, stall = 1.0, 3.0
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=timeout)
    w.init()
    silent = SIZE - 1
    if RANK == silent:
        w._test_go_silent(stall, at_collective=True)
    COMM.Barrier()
    if w.is_orchestrator:
        n = 1 << 20          # 4 MiB: larger than any hole below the broadcast's buffers,
        chips = [(r, 0) for r in range(SIZE)]   # so that malloc gets their addresses back
        bufs = [np.full(n, 5.0, np.float32) for _ in chips]
        start = time.monotonic()
        err = expect(ChipTaskError, lambda: w.run(
            lambda o, a: o.broadcast(bufs, root=silent, chips=chips)), f"rank {silent}")
        assert isinstance(err.__cause__, RankError) and err.__cause__.rank == silent, err
        assert time.monotonic() - start < timeout + 2.5
        pattern = np.full(n, -7.0, np.float32)
        held = {chip: w.malloc(4 * n, chip) for chip in chips[:-1]}   # the freed addresses
        for chip, ptr in held.items():
            w.copy_to(ptr, pattern, device_id=chip)
        time.sleep(max(0.0, start + stall + 1.5 - time.monotonic()))  # it resumed, completed
        for chip, ptr in held.items():
            got = np.zeros_like(pattern)
            w.copy_from(got, ptr, device_id=chip)
            np.testing.assert_array_equal(got, pattern, err_msg=f"chip {chip} overwritten")
            w.free(ptr, chip)
        expect(ChipGroupError, w.close, f"rank {silent}")
    else:
        if RANK == silent:            # resumes and completes its part of the broadcast
            time.sleep(stall + 0.5)
        try:
            w.close()
        except ChipGroupError:
            pass
        except RankError as error:    # rank 0 stopped heartbeats to the rank it gave up on
            assert RANK == silent and error.rank == 0, error
    assert w.state == "CLOSED" and free_memory() == before, (free_memory(), before)
    COMM.Barrier()


def case_refused_collective():
    """The last rank refuses its part of an MPI collective (the others posted theirs, which
    can then never complete): rank 0 gets a typed error at once — not a wait for a
    collective that cannot finish —, and the next collective over the same chips still
    gives the right result (through the ring: the MPI collectives are out of step now)."""
    before = free_memory()
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=20)
    w.init()
    if RANK == SIZE - 1:
        w._test_go_silent(0, at_collective=True)
    COMM.Barrier()
    if w.is_orchestrator:
        chips = [(r, 0) for r in range(SIZE)]
        xs = [np.full(100, r + 1, np.float32) for r in range(SIZE)]
        start = time.monotonic()
        expect(ChipTaskError, lambda: w.run(lambda o, a: o.all_reduce(xs, chips=chips)),
               "collective refused")
        assert time.monotonic() - start < 5.0
        xs = [np.full(100, r + 1, np.float32) for r in range(SIZE)]
        w.run(lambda o, a: o.all_reduce(xs, chips=chips))
        assert w.last_run_stats["mpi_collectives"] == 0
        for x in xs:
            np.testing.assert_array_equal(x, np.full(100, SIZE * (SIZE + 1) / 2, np.float32))
    w.close()
    assert free_memory() == before, (free_memory(), before)
    COMM.Barrier()


def case_silent_orchestrator():
    """Rank 0 stops answering: every other rank gets RankError(0) within the bound."""
    before = free_memory()
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=1.0)
    w.init()
    COMM.Barrier()
    if w.is_orchestrator:
        w._test_go_silent(3.0)
        time.sleep(3.5)
        try:
            w.close()
        except ChipGroupError as error:
            assert all(isinstance(e, RankError) for e in error.failures.values()), error
    else:
        start = time.monotonic()
        err = expect(RankError, w.close, "rank 0")
        assert err.rank == 0 and time.monotonic() - start < 1.0 + 2.5
    assert w.state == "CLOSED" and free_memory() == before
    COMM.Barrier()


def case_exit_without_close():
    """A script that never calls close(): the process still exits cleanly (run alone, last)."""
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=10.0)
    w.init()
    COMM.Barrier()                              # rank 0's init finished too (its last queries)
    globals()["_leftover"] = w                  # alive until the interpreter exits


def case_dead_rank():
    """A rank whose process exits: Open MPI ends the job (run separately; never a hang)."""
    w = Worker(level=4, device_ids=DEVICES, rank_timeout=2.0)
    add = w.register(ADD)
    w.init()
    COMM.Barrier()
    if RANK == SIZE - 1:
        import os
        os._exit(3)
    if w.is_orchestrator:
        x = np.arange(64, dtype=np.float32)
        y = np.zeros_like(x)
        time.sleep(0.5)
        try:
            w.run(lambda o, a: o.submit(add, x, y, 1.0, chip=(SIZE - 1, 0)))
        except ChipTaskError as error:
            print(f"rank 0 saw: {error}", flush=True)
    try:
        w.close()
    except (ChipGroupError, RankError):
        pass


def main() -> int:
    for name in sys.argv[1:]:
        try:
            globals()[f"case_{name}"]()
        except BaseException:  # noqa: BLE001 - reported, then the whole job stops
            print(f"FAIL {name} rank {RANK}\n{traceback.format_exc()}", flush=True)
            COMM.Abort(1)
        print(f"PASS {name} rank {RANK}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
