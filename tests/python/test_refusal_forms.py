"""Refusals a user meets first, in one form (docs/api.md "Errors", docs/diagnostics.md):

- a call that does not fit a signature reads the same for a native method and a Python
  function ("<api>: <what did not fit>; call it as <signature>"): one analysis
  (simpler._typed_call.mismatch) serves both;
- a native property set to a value of the wrong type, or a read-only one set at all, is a
  SimplerError naming the field (pybind11's plain TypeError / Python's AttributeError before);
- an enum built from a value no member has is refused (DataType(99) made '<DataType.???>');
- counts read as written ("takes 1 argument"), value types pickle, handles refuse typed."""
from __future__ import annotations

import copy
import inspect
import pickle

import numpy as np
import pytest

import simpler
from simpler import Worker, sim
from simpler.errors import (PTO_RUNTIME_ERR_INVALID_ARGUMENT, SignatureMismatchError,
                            SimplerAttributeError, SimplerTypeError, SimplerValueError)
from simpler.task_interface import (AddressSpace, ArgDirection as D, ArgSpec, CallConfig,
                                    ChipCallable, ChipStorageTaskArgs, ChipTensor, ChipWorker,
                                    CoreCallable, DataType)

F32 = DataType.FLOAT32


@pytest.mark.parametrize("call, api", [
    (lambda: ChipTensor.make(0, [4], F32, bogus=1), r"ChipTensor\.make\(\)"),
    (lambda: sim.configure(bogus=1), r"sim\.configure"),
    (lambda: Worker(bogus=1), r"Worker"),
    (lambda: CallConfig().to_dict(bogus=1), r"CallConfig\.to_dict\(\)"),
])
def test_native_and_python_calls_that_do_not_fit_read_alike(call, api):
    with pytest.raises(SimplerTypeError, match=rf"^{api}: unknown keyword 'bogus'; call it as ") as e:
        call()
    assert e.value.code == PTO_RUNTIME_ERR_INVALID_ARGUMENT


def test_too_many_positional_arguments_give_the_count_at_both_layers():
    with pytest.raises(SimplerTypeError, match=r"^sim\.configure: takes 0 positional "
                                               r"arguments, 1 given; call it as sim\.configure\(\*, "):
        sim.configure(2)
    with pytest.raises(SimplerTypeError, match=r"^ChipStorageTaskArgs\.add_scalar_f32\(\): takes "
                                               r"1 positional argument, 2 given"):
        ChipStorageTaskArgs().add_scalar_f32(1.0, 2.0)


def test_kernel_launch_shows_its_documented_signature_and_refuses_unknown_keywords():
    # docs/kernel-mode.md: kernel_launch(callable_id, *args, caller_stream)
    params = inspect.signature(Worker.kernel_launch).parameters
    assert list(params) == ["self", "callable_id", "args", "caller_stream"]
    assert params["caller_stream"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["caller_stream"].default is inspect.Parameter.empty
    with pytest.raises(SimplerTypeError, match=r"^Worker\.kernel_launch: unknown keyword 'stream'; "
                                               r"call it as Worker\.kernel_launch\(callable_id, "
                                               r"\*args, caller_stream\)$"):
        Worker(execution_mode="kernel").kernel_launch(0, stream=1)


def test_a_native_property_set_to_the_wrong_type_names_the_field():
    bins = simpler.find_build("a2a3sim", "tensormap_and_ringbuffer")
    with pytest.raises(SimplerTypeError, match=r"^RuntimeBins\.platform: expected a str, got int$") as e:
        bins.platform = 5
    assert e.value.code == PTO_RUNTIME_ERR_INVALID_ARGUMENT
    bins.runtime = "host_build_graph"  # a str still sets
    assert bins.runtime == "host_build_graph"


@pytest.mark.parametrize("obj, field", [
    (ChipStorageTaskArgs(), "tensor_count"),
    (ChipTensor.make(4096, [4], F32), "shape"),
    (ArgSpec(D.IN), "direction"),
    (CoreCallable.build([D.IN], b"k"), "signature"),
])
def test_a_read_only_native_property_says_so(obj, field):
    name = type(obj).__name__
    with pytest.raises(SimplerAttributeError, match=rf"^{name}\.{field} is read-only") as e:
        setattr(obj, field, 1)
    assert isinstance(e.value, AttributeError)
    assert e.value.code == PTO_RUNTIME_ERR_INVALID_ARGUMENT


def test_a_read_only_python_property_says_so():
    with pytest.raises(SimplerAttributeError, match=r"^Worker\.state is read-only"):
        Worker().state = "READY"
    assert Worker().state == "NEW"


@pytest.mark.parametrize("enum, value, error, words", [
    (DataType, 99, SimplerValueError, r"DataType\(\): 99 is not a DataType \(values: FLOAT32=0, "),
    (DataType, -1, SimplerValueError, r"DataType\(\): -1 is not a DataType"),
    (DataType, 2 ** 70, SimplerValueError, r"DataType\(\): 1180591620717411303424 is not a DataType"),
    (D, 7, SimplerValueError, r"ArgDirection\(\): 7 is not an ArgDirection \(values: SCALAR=0, IN=1, "
                              r"OUT=2, INOUT=3\)"),
    (AddressSpace, 9, SimplerValueError, r"AddressSpace\(\): 9 is not an AddressSpace"),
    (DataType, True, SimplerTypeError, r"DataType\(\): value: expected an int, got bool"),
    (DataType, 1.0, SimplerTypeError, r"DataType\(\): value: expected an int, got float"),
    (DataType, "FLOAT32", SimplerTypeError, r"DataType\(\): value must be an int .*DataType\.FLOAT32"),
])
def test_an_enum_is_built_only_from_a_members_value(enum, value, error, words):
    with pytest.raises(error, match="^" + words) as e:
        enum(value)
    assert e.value.code == PTO_RUNTIME_ERR_INVALID_ARGUMENT


def test_enum_values_still_build_and_pickle():
    assert DataType(np.int64(1)) == DataType.FLOAT16
    assert D(2) == D.OUT and AddressSpace(1) == AddressSpace.DEVICE
    assert pickle.loads(pickle.dumps(DataType.BFLOAT16)) == DataType.BFLOAT16
    with pytest.raises(SimplerTypeError, match=r"^DataType\(\): missing argument 'value'"):
        DataType()


def test_counts_read_as_written(compiler):
    from conftest import _source
    one = ChipCallable.from_kernel(CoreCallable.build(
        [D.IN], compiler.compile_kernel(_source("add_scalar_kernel.cpp"), "aiv")))
    with Worker() as w:
        w.init()
        h = w.register(one)
        with pytest.raises(SignatureMismatchError, match=r"takes 1 argument, 2 given"):
            w.run(h, np.zeros(4, np.float32), np.zeros(4, np.float32))
    assert "signature=1 arg, binary=1 byte)" in repr(CoreCallable.build([D.IN], b"k"))
    with pytest.raises(SimplerValueError, match=r"truncated: 1 byte, the ChipCallable header"):
        ChipCallable.from_bytes(b"x")


def test_value_types_pickle_and_copy():
    bins = simpler.find_build("a2a3sim", "tensormap_and_ringbuffer")
    for value in (bins, ArgSpec(D.IN, F32, 2), ArgSpec(D.SCALAR)):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.deepcopy(value) == value


def test_handles_of_this_process_refuse_pickling_typed(add_scalar_callable):
    with Worker() as w:
        w.init()
        h = w.register(add_scalar_callable)
        x = np.zeros(4, np.float32)
        run = w.submit(h, x, np.zeros_like(x), 1.0)
        for handle in (run, h, ChipWorker(), simpler.KernelCompiler()):
            with pytest.raises(SimplerTypeError, match="cannot be pickled"):
                pickle.dumps(handle)
        run.wait()


def test_a_scalar_arg_spec_has_no_rank():
    # docs/task-interface.md: "for a scalar ... rank must be 0" (refused by build() before).
    with pytest.raises(SimplerValueError, match=r"^rank: 2 given for a SCALAR"):
        ArgSpec(D.SCALAR, F32, 2)
    assert ArgSpec(D.SCALAR, F32).rank == 0


def test_make_tensor_arg_refuses_a_bool_size_and_names_itself_for_a_torch_tensor():
    with Worker() as w:
        w.init()
        buf = w.create_buffer(16)
        with pytest.raises(SimplerTypeError, match=r"^Worker\.make_tensor_arg: shape must be a "
                                                   r"sequence of ints, got \(True,\)"):
            w.make_tensor_arg(buf, shape=(True,), dtype=F32)  # it made a 1-element tensor
        assert w.make_tensor_arg(buf, shape=(np.int64(4),), dtype=F32).shape == (4,)
        torch = pytest.importorskip("torch")
        with pytest.raises(SimplerTypeError, match=r"^Worker\.make_tensor_arg: the array's dtype "
                                                   r"torch\.float32 is not a numpy dtype"):
            w.make_tensor_arg(torch.zeros(4))


@pytest.mark.parametrize("make", [
    lambda flag: Worker(enable_sdma=flag),
    lambda flag: Worker(level=3, device_ids=[0], enable_sdma=flag),
])
def test_enable_sdma_is_a_flag_not_any_truthy_value(make):
    # "no" read as True (and level 3 took anything until init); CallConfig's flags refuse the same.
    for flag in ("no", 1, None):
        with pytest.raises(SimplerTypeError, match=r"enable_sdma must be True or False, got"):
            make(flag)
    make(np.bool_(False))


def test_a_misspelt_attribute_of_a_native_object_lists_the_attributes():
    # docs/diagnostics.md: reading or setting a field an object does not have is a
    # SimplerAttributeError listing the fields (CallConfig only, before; the others said
    # Python's plain "'...ChipStorageTaskArgs' object has no attribute ...").
    args = ChipStorageTaskArgs()
    with pytest.raises(SimplerAttributeError, match=r"^ChipStorageTaskArgs has no attribute "
                                                    r"'tensorcount' \(attributes: .*tensor_count"):
        args.tensorcount
    bins = simpler.find_build("a2a3sim", "tensormap_and_ringbuffer")
    with pytest.raises(SimplerAttributeError, match=r"^RuntimeBins has no attribute 'platfrom'"):
        bins.platfrom = "a2a3sim"
    assert not hasattr(args, "tensorcount") and not hasattr(args, "__array__")
    assert bins.platform == "a2a3sim"


@pytest.mark.parametrize("call, message", [
    (lambda: sim.malloc(True), r"sim\.malloc: nbytes must be an int, got bool"),
    (lambda: sim.malloc(-1), r"sim\.malloc: nbytes must be in 0\.\.2\*\*63-1, got -1"),
    (lambda: sim.set_device("0"), r"sim\.set_device: device must be an int, got str"),
    (lambda: sim.device_topology(1.0), r"sim\.device_topology: device must be an int, got float"),
    (lambda: sim.free("0x10"), r"sim\.free: ptr must be an int, got str"),
    (lambda: sim.memcpy_dtod(0, 0, None), r"sim\.memcpy_dtod: nbytes must be an int, got NoneType"),
    (lambda: sim.configure(device_count=True), r"sim\.configure: device_count must be an int, got bool"),
])
def test_sim_refusals_name_the_function(call, message):
    # They named the parameter only ("nbytes must be an int, got bool").
    with pytest.raises((SimplerTypeError, SimplerValueError), match="^" + message):
        call()
