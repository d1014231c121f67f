"""An enum member (``DataType.INT32``) is not an int where a size, count, id or index is
expected: pybind11 enums implement ``__index__``, so ``w.malloc(DataType.INT32)`` allocated
4 bytes. Refused like a bool, with a SimplerTypeError naming the parameter."""
from __future__ import annotations

import enum

import numpy as np
import pytest

from simpler import Worker, sim
from simpler.errors import SimplerTypeError
from simpler.task_interface import ArgDirection as D, ChipTensor, DataType


class Color(enum.IntEnum):
    RED = 1


@pytest.mark.parametrize("member", [DataType.INT32, D.IN, Color.RED], ids=str)
def test_an_enum_member_is_refused_as_a_size_or_pointer(member):
    with Worker(level=2, device_id=0) as w:
        w.init()
        with pytest.raises(SimplerTypeError, match=r"malloc: size must be an int, got"):
            w.malloc(member)
        with pytest.raises(SimplerTypeError, match=r"free: ptr must be an int, got"):
            w.free(member)
    with pytest.raises(SimplerTypeError, match=r"sim\.malloc: nbytes must be an int, got"):
        sim.malloc(member)


def test_an_enum_member_is_refused_by_the_native_int_arguments():
    with pytest.raises(SimplerTypeError, match="expected an int, got"):
        ChipTensor.make(DataType.INT32, [4], DataType.FLOAT32)   # a data pointer
    with pytest.raises(SimplerTypeError, match="expected an int, got"):
        DataType(D.OUT)                                          # another enum's member


def test_numbers_and_an_enum_of_its_own_type_still_work():
    assert DataType(DataType.INT32) == DataType.INT32
    assert DataType(int(DataType.INT32)) == DataType.INT32
    assert tuple(ChipTensor.make(np.int64(4096), [np.int32(4)], DataType.FLOAT32).shape) == (4,)
    with Worker(level=2, device_id=0) as w:
        w.init()
        w.free(w.malloc(np.uint32(64)))


def test_an_enum_member_is_not_a_number_of_seconds(compiler):
    """float(DataType.INT32) is 5.0: RunHandle.wait(DataType.INT32) waited up to 5 s."""
    import pathlib
    from simpler.task_interface import ChipCallable, CoreCallable
    source = pathlib.Path(__file__).resolve().parent / "programs" / "add_scalar_kernel.cpp"
    kernel = CoreCallable.build([(D.IN, DataType.FLOAT32, 1), (D.OUT, DataType.FLOAT32, 1),
                                 D.SCALAR], compiler.compile_kernel(source.read_text(), "aiv"))
    x = np.ones(4, np.float32)
    y = np.zeros_like(x)
    with Worker(level=2, device_id=0) as w:
        w.init()
        run = w.submit(w.register(ChipCallable.from_kernel(kernel)), x, y, 1.0)
        with pytest.raises(SimplerTypeError, match=r"RunHandle\.wait: timeout must be a number "
                                                   r"of seconds or None, got DataType"):
            run.wait(DataType.INT32)
        run.wait()
    np.testing.assert_array_equal(y, x + 1)
