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
