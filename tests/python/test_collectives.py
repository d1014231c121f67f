"""Collectives between chips at level 3 (issue 19, item 1): numerics against numpy for every
op, dtype and group size 1..4 (sizes not divisible by the group included), the bytes each
chip receives (the documented ring/tree figures), inferred dependencies, bad input."""
from __future__ import annotations

import numpy as np
import pytest

from simpler import Worker
from simpler.host.collectives import chunks
from simpler.task_interface import DataType

DTYPES = ["float32", "float16", "bfloat16", "int32"]


@pytest.fixture(scope="module")
def w4():
    worker = Worker(level=3, device_ids=[0, 1, 2, 3])
    worker.init()
    yield worker
    worker.close()


def _make(rng, dtype, n):
    """(array as passed to simpler, its values as float64/int64, the DataType override)."""
    if dtype == "int32":
        v = rng.integers(-2**30, 2**30, n).astype(np.int32)   # sums wrap like numpy's
        return v, v, None
    v = rng.integers(-8, 9, n).astype(np.float64)              # exact in every float type
    if dtype == "bfloat16":
        return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16), v, \
            DataType.BFLOAT16
    return v.astype(dtype), v, None


def _to(dtype, values):
    if dtype == "bfloat16":
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.asarray(values).astype(dtype)


REDUCE = {"sum": lambda vs: np.sum(vs, axis=0), "max": lambda vs: np.max(vs, axis=0),
          "min": lambda vs: np.min(vs, axis=0)}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("g", [1, 2, 3, 4])
@pytest.mark.parametrize("n", [3, 7, 64])   # 3 < 4 chips: an empty chunk
def test_every_collective_matches_numpy(w4, dtype, g, n):
    rng = np.random.default_rng(g * 100 + n)
    chips = list(range(g))
    store = np.int32 if dtype == "int32" else None
    case = {}

    def fresh():
        arrays, values, override = zip(*[_make(rng, dtype, n) for _ in range(g)])
        return list(arrays), np.stack(values), override[0]

    for op in REDUCE:
        case[("ar", op)] = fresh()
        case[("rs", op)] = fresh()
    case["ag"] = fresh()
    case["bc"] = fresh()
    case["a2a"] = fresh()
    parts = chunks(n, g)
    rs_out = {op: [np.zeros(size, dtype=case[("rs", op)][0][0].dtype) for _, size in parts]
              for op in REDUCE}
    ag_out = [np.zeros(n * g, dtype=case["ag"][0][0].dtype) for _ in range(g)]
    a2a_out = [np.zeros(g * size, dtype=case["a2a"][0][0].dtype) for _, size in parts]
    root = g - 1

    def orch(o, _):
        for op in REDUCE:
            arrays, _, dt = case[("ar", op)]
            o.all_reduce(arrays, op, chips=chips, dtype=dt)
            arrays, _, dt = case[("rs", op)]
            o.reduce_scatter(arrays, rs_out[op], op, chips=chips, dtype=dt)
        o.all_gather(case["ag"][0], ag_out, chips=chips, dtype=case["ag"][2])
        o.broadcast(case["bc"][0], root, chips=chips, dtype=case["bc"][2])
        o.all_to_all(case["a2a"][0], a2a_out, chips=chips, dtype=case["a2a"][2])

    bc_before = case["bc"][1][root].copy()
    w4.run(orch)
    for op, fn in REDUCE.items():
        expected = _to(dtype, fn(case[("ar", op)][1].astype(store) if store else
                                 case[("ar", op)][1]))
        for got in case[("ar", op)][0]:
            np.testing.assert_array_equal(got, expected, err_msg=f"all_reduce {op}")
        full = _to(dtype, fn(case[("rs", op)][1].astype(store) if store else case[("rs", op)][1]))
        for (off, size), got in zip(parts, rs_out[op]):
            np.testing.assert_array_equal(got, full[off:off + size], err_msg=f"reduce_scatter {op}")
    gathered = _to(dtype, np.concatenate(case["ag"][1]))
    for got in ag_out:
        np.testing.assert_array_equal(got, gathered, err_msg="all_gather")
    for got in case["bc"][0]:
        np.testing.assert_array_equal(got, _to(dtype, bc_before), err_msg="broadcast")
    sources = [_to(dtype, v) for v in case["a2a"][1]]
    for j, ((off, size), got) in enumerate(zip(parts, a2a_out)):
        np.testing.assert_array_equal(got, np.concatenate([s[off:off + size] for s in sources]),
                                      err_msg=f"all_to_all output {j}")


def test_float32_sums_of_fractions_are_close(w4):
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal(1000).astype(np.float32) for _ in range(4)]
    expected = np.sum(np.stack(xs).astype(np.float64), axis=0)
    w4.run(lambda o, a: o.all_reduce(xs))
    for x in xs:
        np.testing.assert_allclose(x, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("g, n", [(2, 10), (3, 10), (4, 10), (4, 1 << 12)])
def test_bytes_received_per_chip_match_the_documented_algorithms(w4, g, n):
    chips = list(range(g))
    c = [size for _, size in chunks(n, g)]
    e = 4  # float32
    N = n

    def run(fn):
        w4.run(fn)
        return w4.last_run_stats["peer_received"][:g]

    xs = [np.ones(n, dtype=np.float32) for _ in range(g)]
    assert run(lambda o, a: o.all_reduce(xs, chips=chips)) == \
        [(2 * N - c[i] - c[(i + 1) % g]) * e for i in range(g)]
    outs = [np.zeros(size, dtype=np.float32) for size in c]
    assert run(lambda o, a: o.reduce_scatter(xs, outs, chips=chips)) == \
        [(N - c[(i - 1) % g]) * e for i in range(g)]
    gathered = [np.zeros(n * g, dtype=np.float32) for _ in range(g)]
    assert run(lambda o, a: o.all_gather(xs, gathered, chips=chips)) == \
        [(N * g - N) * e for _ in range(g)]
    assert run(lambda o, a: o.broadcast(xs, 1 % g, chips=chips)) == \
        [0 if i == 1 % g else N * e for i in range(g)]
    a2a = [np.zeros(g * size, dtype=np.float32) for size in c]
    assert run(lambda o, a: o.all_to_all(xs, a2a, chips=chips)) == \
        [(g - 1) * c[i] * e for i in range(g)]
    if n % g == 0:  # the textbook ring figure: 2 (g-1)/g of the buffer per chip
        assert run(lambda o, a: o.all_reduce(xs, chips=chips)) == [2 * (g - 1) * N // g * e] * g


def test_collectives_are_ordered_by_inferred_dependencies(w4, add_scalar_callable):
    add = w4.register(add_scalar_callable)
    try:
        n = 1000
        x = np.arange(n, dtype=np.float32)
        a, b = np.zeros_like(x), np.full(n, 5, dtype=np.float32)
        y, other = np.zeros_like(x), np.zeros_like(x)

        def orch(o, _):
            produce = o.submit(add, x, a, 1.0, chip=0)          # a = x + 1 on chip 0
            unrelated = o.submit(add, x, other, 0.0, chip=2)
            reduce_ = o.all_reduce([a, b], chips=[0, 1])        # waits for produce
            consume = o.submit(add, b, y, 2.0, chip=1)          # waits for the all-reduce
            assert o.dependencies(reduce_) == [produce]
            assert o.dependencies(consume) == [reduce_]
            assert unrelated not in o.dependencies(reduce_)

        w4.run(orch)
        np.testing.assert_array_equal(a, x + 6)
        np.testing.assert_array_equal(b, x + 6)
        np.testing.assert_array_equal(y, x + 8)
    finally:
        w4.unregister(add)


def test_bad_collectives_raise_before_anything_moves(w4):
    f = [np.zeros(8, dtype=np.float32) for _ in range(2)]
    shared = np.zeros(16, dtype=np.float32)
    bad = [
        (lambda o: o.all_reduce(f, chips=[0, 1, 2]), "list of 3 arrays"),
        (lambda o: o.all_reduce([f[0], np.zeros(9, np.float32)], chips=[0, 1]), "same size"),
        (lambda o: o.all_reduce(f, "prod", chips=[0, 1]), "op must be"),
        (lambda o: o.all_reduce([np.zeros(8), np.zeros(8)], chips=[0, 1]), "reductions support"),
        (lambda o: o.all_reduce(f, chips=[0, 0]), "twice"),
        (lambda o: o.all_reduce(f, chips=[0, 7]), "not one of"),
        (lambda o: o.all_reduce([shared[:8], shared[4:12]], chips=[0, 1]), "overlap"),
        (lambda o: o.reduce_scatter(f, [np.zeros(3, np.float32)] * 2, chips=[0, 1]), "sizes"),
        (lambda o: o.broadcast(f, 2, chips=[0, 1]), "root"),
        (lambda o: o.all_gather(f, [np.zeros(8, np.float32)] * 2, chips=[0, 1]), "sizes"),
        (lambda o: o.all_reduce(f, chips=[0, 1], dtype=DataType.FLOAT16), "2-byte"),
    ]
    for call, match in bad:
        with pytest.raises(ValueError, match=match):
            w4.run(lambda o, a: call(o))
        assert w4.last_run_stats["tasks"] == 0
