"""A call to a task-interface type that fits no signature (unknown keyword, missing or
extra argument, wrong self, a class with no constructor) is a SimplerTypeError with .code
naming the API, what did not fit and the signature (docs/api.md), not pybind11's plain
"incompatible function arguments" TypeError; calls that fit behave as before."""
from __future__ import annotations

import numpy as np
import pytest

from simpler.errors import PTO_RUNTIME_ERR_INVALID_ARGUMENT, SimplerTypeError
from simpler.task_interface import (ArgDirection, ArgSpec, CallConfig, ChipCallable,
                                    ChipStorageTaskArgs, ChipTensor, CoreCallable, DataType)

F32 = DataType.FLOAT32
D = ArgDirection


def _tensor():
    return ChipTensor.from_array(np.zeros((2, 4), np.float32))


@pytest.mark.parametrize("call, message", [
    (lambda: ChipTensor.make(0, [4], F32, bogus=1),
     r"ChipTensor\.make\(\): unknown keyword 'bogus'; call it as "
     r"make\(ptr, shape, dtype, buffer_bytes=0\)"),
    (lambda: ChipTensor.make(0), r"ChipTensor\.make\(\): missing argument 'shape'"),
    (lambda: ChipTensor.make(0, [4], F32, 0, 5),
     r"ChipTensor\.make\(\): takes 4 positional arguments, 5 given"),
    (lambda: ChipTensor.from_array(np.zeros(4), dtyp=F32),
     r"ChipTensor\.from_array\(\): unknown keyword 'dtyp'; call it as "
     r"from_array\(array, dtype=None\)"),
    (lambda: _tensor().slice(0, 1), r"ChipTensor\.slice\(\): missing argument 'stop'"),
    (lambda: _tensor().reshape(shape=(8,), order="C"),
     r"ChipTensor\.reshape\(\): unknown keyword 'order'"),
    (lambda: _tensor().transpose(0, dim0=1),
     r"ChipTensor\.transpose\(\): 'dim0' given twice"),
    (lambda: _tensor().validate(1), r"ChipTensor\.validate\(\): takes 0 positional arguments"),
    (lambda: ChipTensor(), r"ChipTensor\(\): has no constructor; make one with ChipTensor\.make"),
    (lambda: ChipTensor(np.zeros(4)), r"ChipTensor\(\): has no constructor"),
    (lambda: ChipStorageTaskArgs(1),
     r"ChipStorageTaskArgs\(\): takes 0 positional arguments, 1 given; call it as "
     r"ChipStorageTaskArgs\(\)"),
    (lambda: ChipStorageTaskArgs().add_scalar(),
     r"ChipStorageTaskArgs\.add_scalar\(\): missing argument 'value'"),
    (lambda: ChipStorageTaskArgs().add_tensor(tensor=_tensor(), extra=1),
     r"ChipStorageTaskArgs\.add_tensor\(\): unknown keyword 'extra'"),
    (lambda: ChipStorageTaskArgs.add_tensor(5, _tensor()),
     r"ChipStorageTaskArgs\.add_tensor\(\): self must be a ChipStorageTaskArgs, got int"),
    (lambda: ChipStorageTaskArgs().add_scalar_f32(1.0, 2.0),
     r"ChipStorageTaskArgs\.add_scalar_f32\(\): takes 1 positional argument, 2 given"),
    (lambda: ChipStorageTaskArgs().tensor(), r"ChipStorageTaskArgs\.tensor\(\): missing"),
    (lambda: CallConfig().validate(1), r"CallConfig\.validate\(\): takes 0 positional"),
    (lambda: CallConfig().to_dict(deep=True), r"CallConfig\.to_dict\(\): unknown keyword 'deep'"),
    (lambda: ArgSpec(), r"ArgSpec\(\): missing argument 'direction'; call it as "
                        r"ArgSpec\(direction, dtype=None, rank=0\)"),
    (lambda: ArgSpec(D.IN, dtpye=F32), r"ArgSpec\(\): unknown keyword 'dtpye'"),
    (lambda: CoreCallable(), r"CoreCallable\(\): has no constructor; make one with "
                             r"CoreCallable\.build"),
    (lambda: CoreCallable.from_bytes(), r"CoreCallable\.from_bytes\(\): missing argument 'image'"),
    (lambda: CoreCallable.build([(D.IN, F32)]),
     r"CoreCallable\.build\(\): missing argument 'binary'"),
    (lambda: ChipCallable(), r"ChipCallable\(\): has no constructor"),
    (lambda: ChipCallable.build([], "f", b"", childs=()),
     r"ChipCallable\.build\(\): unknown keyword 'childs'"),
    (lambda: ChipCallable.build([], 5, b"x"),
     r"ChipCallable\.build\(\): func_name must be a str, got int; call it as "
     r"build\(signature, func_name: str, binary, children=\(\)\)"),
    (lambda: DataType.from_name(5), r"DataType\.from_name\(\): name must be a str, got int"),
    (lambda: DataType.FLOAT32.to_numpy(1), r"DataType\.to_numpy\(\): takes 0 positional"),
])
def test_a_call_that_fits_no_signature_is_a_typed_error(call, message):
    with pytest.raises(SimplerTypeError, match="^" + message) as err:
        call()
    assert isinstance(err.value, TypeError)
    assert err.value.code == PTO_RUNTIME_ERR_INVALID_ARGUMENT
    assert "incompatible" not in str(err.value)


def test_calls_that_fit_are_unchanged_and_help_shows_the_real_signature():
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.make(4096, [4], F32))
    args.add_tensor(tensor=_tensor().slice(dim=1, start=0, stop=2))
    args.add_scalar(value=-1)
    assert (args.tensor_count, args.scalars) == (2, [2 ** 64 - 1])
    assert ChipStorageTaskArgs.add_tensor.__doc__.startswith("add_tensor(self: ")
    assert ChipTensor.make.__doc__.startswith("make(ptr: ")
    for doc in (ChipTensor.make.__doc__, ChipStorageTaskArgs.__init__.__doc__):
        assert "*args" not in doc and "Overloaded" not in doc
    # A value of the wrong type still gets its own, more precise refusal.
    with pytest.raises(SimplerTypeError, match="add_tensor: expected a ChipTensor, got int"):
        args.add_tensor(5)


def test_enum_constructors_still_take_numpy_integers():
    assert DataType(np.int64(1)) == DataType.FLOAT16
    assert ArgDirection(np.uint8(2)) == ArgDirection.OUT
    with pytest.raises(SimplerTypeError, match=r"^DataType\(\): value must be an int .*; name a "
                                               r"member as DataType\.FLOAT32"):
        DataType("FLOAT32")


def test_operators_still_answer_not_implemented():
    assert (CallConfig() == 5) is False
    assert (ArgSpec(D.IN) == "IN") is False
    assert CallConfig(pipeline_depth=2) == CallConfig(pipeline_depth=2)
