"""A scalar argument means the same at every level: ``orch.submit`` at level 3 packs it by
level 2's rules (docs/kernel-mode.md, "Arguments"; docs/api.md, the orchestrator table),
so both levels pass the same 64-bit pattern or refuse the same value with the same typed
error, before anything is enqueued."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

from simpler import Worker
from simpler.errors import ArgumentError, ArgumentTypeError
from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable, DataType

KERNEL = pathlib.Path(__file__).resolve().parent / "programs" / "add_scalar_kernel.cpp"
SCALAR_TYPES = (None, DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16, DataType.FLOAT64,
                DataType.INT32, DataType.BOOL)
VALUES = [1.5, 1e300, -1e300, float("inf"), float("nan"), 70000.0, 2, -3, 2 ** 64, True,
          np.float16(1.5), np.float32(2.5), np.float64(1e300), np.int32(-3), np.uint64(2 ** 63),
          np.bool_(True), "1.0", None]


@pytest.fixture(scope="module")
def levels(compiler):
    """(level-2 Worker, level-3 Worker, {scalar DataType: (level-2 handle, level-3 handle)})
    of y = x + s, whose kernel reads s as float32 (so y shows the bits passed)."""
    binary = compiler.compile_kernel(KERNEL.read_text(), "aiv")
    with Worker(level=2, device_id=0) as w2, Worker(level=3, device_ids=[1]) as w3:
        w2.init()
        w3.init()
        handles = {}
        for dtype in SCALAR_TYPES:
            scalar = D.SCALAR if dtype is None else (D.SCALAR, dtype)
            kernel = CoreCallable.build([(D.IN, DataType.FLOAT32, 1),
                                         (D.OUT, DataType.FLOAT32, 1), scalar], binary)
            program = ChipCallable.from_kernel(kernel)
            handles[dtype] = (w2.register(program), w3.register(program))
        yield w2, w3, handles


def _outcome(run):
    """The bits of y, or the refusal's class and argument index."""
    x = np.arange(4, dtype=np.float32)
    y = np.full_like(x, -1)
    try:
        run(x, y)
    except ArgumentError as error:
        return type(error).__name__, error.index
    return y.view(np.uint32).tolist()


@pytest.mark.parametrize("dtype", SCALAR_TYPES, ids=lambda d: "untyped" if d is None else d.name)
@pytest.mark.parametrize("value", VALUES, ids=lambda v: f"{type(v).__name__}:{v!r}")
def test_levels_2_and_3_pass_or_refuse_a_scalar_alike(levels, dtype, value):
    w2, w3, handles = levels
    h2, h3 = handles[dtype]
    at_level_2 = _outcome(lambda x, y: w2.run(h2, x, y, value))
    at_level_3 = _outcome(lambda x, y: w3.run(lambda o, a: o.submit(h3, x, y, value)))
    assert at_level_3 == at_level_2
    if isinstance(at_level_3, tuple):
        assert w3.last_run_stats["tasks"] == 0          # refused before anything was enqueued


def test_a_float_an_untyped_float32_slot_cannot_hold_is_refused_at_level_2(levels):
    """It reached the chip as infinity at level 2 while level 3 refused it."""
    w2, _, handles = levels
    x = np.ones(4, np.float32)
    y = np.zeros_like(x)
    with pytest.raises(ArgumentError, match=r"argument 2 \(SCALAR\): 1e\+300 is out of range "
                                            r"for FLOAT32 .*numpy\.float64") as err:
        w2.run(handles[None][0], x, y, 1e300)
    assert err.value.index == 2 and not y.any()
    w2.run(handles[None][0], x, y, np.float64(1e300))   # a double is passed as one


def test_a_numpy_float16_keeps_its_16_bit_pattern_at_level_3(levels):
    """It became float32 at level 3 while level 2 passed its own type."""
    _, w3, handles = levels
    x = np.zeros(4, np.float32)
    y = np.full_like(x, -1)
    w3.run(lambda o, a: o.submit(handles[None][1], x, y, np.float16(1.5)))
    assert y.view(np.uint32).tolist() == [int(np.float16(1.5).view(np.uint16))] * 4


def test_a_bool_for_a_typed_float_is_refused_at_level_3(levels):
    """It passed as 1 at level 3 while level 2 refused it (ArgumentTypeError)."""
    _, w3, handles = levels
    x = np.zeros(4, np.float32)
    with pytest.raises(ArgumentTypeError, match="got bool True"):
        w3.run(lambda o, a: o.submit(handles[DataType.FLOAT32][1], x, np.zeros_like(x), True))
    assert w3.last_run_stats["tasks"] == 0


@pytest.mark.parametrize("dtype", [DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16,
                                   DataType.FLOAT64], ids=lambda d: d.name)
@pytest.mark.parametrize("value", [np.float16(1.5), np.float16(-6e-8), np.float32(0.1),
                                   np.float64(0.1), np.float64(70000.0), np.float64(1e300),
                                   np.float32(np.inf), np.float64(np.nan)],
                         ids=lambda v: f"{type(v).__name__}:{v!r}")
def test_a_numpy_float_of_another_width_passes_like_a_python_float(levels, dtype, value):
    """README: scalars as Python or numpy numbers. numpy.float16(1.5) for a FLOAT32 slot
    was refused ("convert it") while 1.5 passed; now any numpy float for a float slot is
    converted like the Python float of its value (rounded; refused when it would become
    infinity), the same at levels 2 and 3."""
    w2, w3, handles = levels
    h2, h3 = handles[dtype]
    as_python = _outcome(lambda x, y: w2.run(h2, x, y, float(value)))
    assert _outcome(lambda x, y: w2.run(h2, x, y, value)) == as_python
    assert _outcome(lambda x, y: w3.run(lambda o, a: o.submit(h3, x, y, value))) == as_python


def test_a_numpy_scalar_packs_the_same_bits_cold_and_cached():
    """numpy scalar types are remembered by type after the first (a fast path): the bits
    and the refusals stay those of the first call, for every numpy type."""
    from simpler import _native
    from simpler.task_interface import ArgSpec
    pack = _native.worker.pack_scalar
    values = [np.float16(-2.5), np.float32(3.25), np.float64(-0.1), np.int8(-3), np.int16(-300),
              np.int32(-7), np.int64(-2 ** 62), np.uint8(200), np.uint16(60000),
              np.uint32(2 ** 32 - 1), np.uint64(2 ** 64 - 1), np.bool_(True), np.bool_(False)]
    for value in values:
        raw = value.tobytes().ljust(8, b"\0")
        expected = int.from_bytes(raw, "little")
        if np.issubdtype(value.dtype, np.signedinteger):
            expected = int(value) & (2 ** 64 - 1)
        for _ in range(3):
            assert pack(ArgSpec(D.SCALAR), value, "t", 0) == expected
        for slot in (DataType.INT32, DataType.UINT8, DataType.FLOAT16):  # converted or refused
            outcomes = []
            for _ in range(3):
                try:
                    outcomes.append(pack(ArgSpec(D.SCALAR, slot), value, "t", 0))
                except ArgumentError as error:
                    outcomes.append(type(error))
            assert outcomes[0] == outcomes[1] == outcomes[2]
