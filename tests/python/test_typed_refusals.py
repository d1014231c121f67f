"""Calls that do not fit a public API are typed SimplerErrors that keep the builtin base
(docs/diagnostics.md, "Errors"): a misspelt CallConfig field (SimplerAttributeError, also an
AttributeError), an unknown keyword or extra positional argument (SimplerTypeError, also a
TypeError), and every argument error carries .code PTO_RUNTIME_ERR_INVALID_ARGUMENT."""
from __future__ import annotations

import copy
import inspect
import pickle

import numpy as np
import pytest

from simpler import Worker, errors, sim
from simpler.errors import (SimplerAttributeError, SimplerError, SimplerTypeError,
                            SimplerValueError)
from simpler.task_interface import CallConfig

INVALID_ARGUMENT = errors.STATUS_CODES["PTO_RUNTIME_ERR_INVALID_ARGUMENT"]


def _assert_invalid_argument(err: SimplerError) -> None:
    assert err.code == INVALID_ARGUMENT
    assert err.status_name == "PTO_RUNTIME_ERR_INVALID_ARGUMENT"


def test_setting_an_unknown_callconfig_field_is_a_typed_attribute_error():
    config = CallConfig()
    with pytest.raises(SimplerAttributeError, match="watchdog_ms.*watchdog_timeout_ms") as err:
        config.watchdog_ms = 5          # the field is watchdog_timeout_ms
    assert isinstance(err.value, AttributeError)
    _assert_invalid_argument(err.value)
    assert config == CallConfig()       # nothing was stored
    assert not hasattr(config, "watchdog_ms")


def test_reading_an_unknown_callconfig_field_is_a_typed_attribute_error():
    with pytest.raises(SimplerAttributeError, match="no field 'bogus'"):
        CallConfig().bogus  # noqa: B018


def test_known_callconfig_fields_still_set_and_check_their_values():
    config = CallConfig()
    config.watchdog_timeout_ms = 250
    assert config.watchdog_timeout_ms == 250
    with pytest.raises(SimplerTypeError, match="watchdog_timeout_ms: expected an int"):
        config.watchdog_timeout_ms = 1.5
    with pytest.raises(SimplerValueError, match="out of range"):
        config.pipeline_depth = -1


def test_callconfig_takes_keywords_only():
    with pytest.raises(SimplerTypeError, match="keyword arguments only") as err:
        CallConfig(1)
    _assert_invalid_argument(err.value)
    with pytest.raises(SimplerTypeError, match="unknown field 'bogus'"):
        CallConfig(bogus=1)


def test_callconfig_copies_and_pickles_with_every_field():
    config = CallConfig(dump_args=True, output_prefix="/tmp/x", pipeline_depth=2,
                        watchdog_timeout_ms=100)
    for clone in (copy.copy(config), copy.deepcopy(config),
                  pickle.loads(pickle.dumps(config))):
        assert clone == config and clone is not config
        assert clone.to_dict() == config.to_dict()


def test_sim_configure_refuses_unknown_keywords_and_positionals_typed():
    before = sim.get_config()
    with pytest.raises(SimplerTypeError, match=r"sim.configure: .*'bogus'") as err:
        sim.configure(bogus=1)
    assert isinstance(err.value, TypeError)
    _assert_invalid_argument(err.value)
    # What did not fit and how to call it (it said Python's 'too many positional arguments').
    with pytest.raises(SimplerTypeError, match=r"^sim\.configure: takes 0 positional arguments, "
                                               r"1 given; call it as sim\.configure\(\*, "):
        sim.configure(2)
    assert sim.get_config() == before
    # The documented signature is still what introspection shows.
    assert list(inspect.signature(sim.configure).parameters) == [
        "device_count", "clusters_per_device", "aicpu_threads", "device_memory_bytes"]


@pytest.mark.parametrize("call, api", [
    (lambda: Worker(bogus=1), "Worker"),
    (lambda: Worker(level=2, devce_id=1), "Worker"),
    (lambda: Worker(2, 0), "Worker"),
    (lambda: Worker(level=3, device_ids=[0, 1], bogus=1), r"Worker\(level=3\)"),
    (lambda: Worker().init(conifg=CallConfig()), "Worker.init"),
    (lambda: Worker().run(None, cfg=CallConfig()), "Worker.run"),
    (lambda: Worker().submit(None, cfg=CallConfig()), "Worker.submit"),
    (lambda: Worker(level=3, device_ids=[0]).run(lambda orch, args: None, None, None, 4),
     "Worker.run"),
])
def test_a_call_that_does_not_fit_the_signature_is_a_simpler_type_error(call, api):
    with pytest.raises(SimplerTypeError, match=api + ": ") as err:
        call()
    assert isinstance(err.value, TypeError)
    assert "; call it as " in str(err.value)


def _public_calls():
    """(call, api): an unknown keyword for each public Python method and function."""
    import simpler
    from simpler import KernelCompiler, compile_many, find_build, trace
    return [
        (lambda: Worker().malloc(sizee=64), "Worker.malloc"),
        (lambda: Worker().close(force=True), "Worker.close"),
        (lambda: Worker().register(None, name="x"), "Worker.register"),
        (lambda: Worker().copy_to(0, b"", nbytes=1, offset=0), "Worker.copy_to"),
        (lambda: Worker().device_memory_info(device=0), "Worker.device_memory_info"),
        (lambda: Worker().kernel_launch(0, stream=1), "Worker.kernel_launch"),
        (lambda: Worker().kernel_bind(0, caller_stream=1), "Worker.kernel_bind"),
        (lambda: Worker().kernel_prepare_callable(None, 1), "Worker.kernel_prepare_callable"),
        (lambda: sim.Stream().synchronize(timeout=1), "Stream.synchronize"),
        (lambda: sim.Stream().query(1), "Stream.query"),
        (lambda: sim.Event().synchronize(timeout=1), "Event.synchronize"),
        (lambda: sim.DeviceArray((4,), np.float32, strem=None), "DeviceArray"),
        (lambda: sim.DeviceArray.zeros((4,), np.float32, None, 1), "DeviceArray.zeros"),
        (lambda: sim.DeviceArray.from_numpy(np.zeros(4), strem=None), "DeviceArray.from_numpy"),
        (lambda: sim.malloc(nbytes=4, device=0), "sim.malloc"),
        (lambda: sim.set_device(0, 1), "sim.set_device"),
        (lambda: sim.device_count(all=True), "sim.device_count"),
        (lambda: find_build("a2a3sim", "tensormap_and_ringbuffer", lib="x"), "simpler.find_build"),
        (lambda: KernelCompiler().compile_kernel("", core="aiv"), "KernelCompiler.compile_kernel"),
        (lambda: compile_many(None, [], workers=2), "compile_many"),
        (lambda: errors.status_name(status=0), "simpler.errors.status_name"),
        (lambda: trace.load(file="x"), "simpler.trace.load"),
        (lambda: simpler.set_log_level(lvl=10), "simpler.set_log_level"),
    ]


def test_every_public_python_call_refuses_unknown_keywords_typed():
    """Not only the documented examples: every public method and function of the Python
    layer reports a call that does not fit as SimplerTypeError naming it (Python's bare
    TypeError before, e.g. 'Worker.malloc() got an unexpected keyword argument')."""
    sim.set_device(0)
    for call, api in _public_calls():
        with pytest.raises(SimplerTypeError, match="^" + api.replace(".", r"\.") + ": ") as err:
            call()
        assert isinstance(err.value, TypeError)
        _assert_invalid_argument(err.value)
    # Introspection still shows the documented signatures.
    assert list(inspect.signature(Worker.malloc).parameters) == ["self", "size"]
    assert list(inspect.signature(sim.DeviceArray.zeros).parameters) == [
        "shape", "dtype", "stream"]
    assert list(inspect.signature(sim.malloc).parameters) == ["nbytes"]
    assert list(inspect.signature(Worker.kernel_launch).parameters) == [
        "self", "callable_id", "args", "caller_stream"]


def test_a_numpy_bool_is_not_an_int_either():
    """bool is refused where an int is expected; numpy.bool_ slipped through __index__."""
    with Worker() as worker:
        worker.init()
        for flag in (True, np.bool_(True)):
            with pytest.raises(SimplerTypeError, match="Worker.malloc: size must be an int"):
                worker.malloc(flag)
            with pytest.raises(SimplerTypeError, match="create_buffer: nbytes must be an int"):
                worker.create_buffer(flag)
        worker.free(worker.malloc(np.int64(64)))     # numpy integers are ints
    sim.set_device(0)
    for flag in (True, np.bool_(True)):
        with pytest.raises(SimplerTypeError, match="nbytes must be an int, got bool"):
            sim.malloc(flag)
        with pytest.raises(SimplerTypeError, match="DeviceArray: shape must be an int"):
            sim.DeviceArray((flag, 4), np.float32)
    assert sim.DeviceArray((np.int32(2), 4), np.float32).shape == (2, 4)
    # The native int arguments follow the same rule (numpy.bool_ passed as 1 before).
    from simpler.task_interface import ChipTensor, DataType
    with pytest.raises(SimplerTypeError, match="task_window_size: expected an int"):
        CallConfig(task_window_size=np.bool_(True))
    with pytest.raises(SimplerTypeError, match=r"shape\[0\]: expected an int"):
        ChipTensor.make(4096, (np.bool_(True),), DataType.FLOAT32)
    assert CallConfig(task_window_size=np.int64(64)).task_window_size == 64


def test_device_array_from_a_tensor_numpy_cannot_read_is_a_typed_refusal():
    torch = pytest.importorskip("torch")
    sim.set_device(0)
    with pytest.raises(SimplerTypeError, match="DeviceArray.from_numpy: cannot read a Tensor"):
        sim.DeviceArray.from_numpy(torch.zeros(4, dtype=torch.bfloat16))


def test_a_type_error_from_inside_a_fitting_call_is_not_rewritten():
    with pytest.raises(SimplerTypeError, match="device_id must be an int"):
        Worker(device_id="0")


def test_value_and_type_errors_carry_the_invalid_argument_status():
    for cls in (SimplerValueError, SimplerTypeError, SimplerAttributeError,
                errors.SignatureMismatchError, errors.ArgumentError):
        _assert_invalid_argument(cls("refused"))
    with pytest.raises(SimplerValueError) as err:
        Worker(level=7)
    _assert_invalid_argument(err.value)
    # A native status behind the error still wins over the class's default.
    assert SimplerValueError("x", errors.PTO_RUNTIME_ERR_INVALID_STATE).code == \
        errors.PTO_RUNTIME_ERR_INVALID_STATE


def test_run_before_init_is_reported_under_run(add_scalar_callable):
    """Worker.run submits and waits: its refusals name run, the API the caller used."""
    from simpler.task_interface import ChipStorageTaskArgs
    worker = Worker()
    handle = worker.register(add_scalar_callable)
    with pytest.raises(errors.SimplerRuntimeError, match=r"^Worker\.run: requires an initialized"):
        worker.run(handle, ChipStorageTaskArgs())
    with pytest.raises(SimplerTypeError, match=r"^Worker\.run: handle must be"):
        worker.run(None, ChipStorageTaskArgs())
    worker.close()


@pytest.mark.parametrize("make", [
    lambda: sim.Stream(),
    lambda: sim.Event(),
    lambda: sim.DeviceArray((4,), "float32"),
    lambda: Worker(),
    lambda: Worker(level=3, device_ids=[0, 1]),
], ids=["Stream", "Event", "DeviceArray", "Worker", "Worker(level=3)"])
def test_objects_naming_process_resources_refuse_pickling_and_copying(make):
    """A copied Stream shared the original's handle and destroyed it when collected; a
    pickled one named a handle of another process. Refused, typed, nothing released."""
    sim.set_device(0)
    obj = make()
    for attempt in (lambda: pickle.dumps(obj), lambda: copy.copy(obj),
                    lambda: copy.deepcopy(obj)):
        with pytest.raises(SimplerTypeError, match="cannot be pickled or copied"):
            attempt()
    if isinstance(obj, sim.Stream):
        target = sim.DeviceArray((4,), "float32")
        obj.memset_async(target.ptr, 0, 16)
        obj.synchronize()   # still the live stream: nothing destroyed it
        obj.destroy()
    elif isinstance(obj, sim.Event):
        obj.destroy()
    elif isinstance(obj, sim.DeviceArray):
        assert obj.numpy().shape == (4,)
    else:
        obj.close()


def test_descriptors_copy_but_refuse_pickling_and_deep_copies():
    """ChipTensor and ChipStorageTaskArgs are descriptors of this process's memory: copy.copy
    copies the descriptor (same memory, still kept alive), pickle and deepcopy are typed
    refusals (they were Python's bare "cannot pickle" TypeError, copy.copy included)."""
    from simpler.task_interface import ChipStorageTaskArgs, ChipTensor
    x = np.arange(4, dtype=np.float32)
    tensor = ChipTensor.from_array(x)
    args = ChipStorageTaskArgs()
    args.add_tensor(tensor)
    args.add_scalar_f32(1.5)
    copied = copy.copy(tensor)
    assert copied is not tensor and repr(copied) == repr(tensor)
    copied_args = copy.copy(args)
    assert copied_args is not args and repr(copied_args) == repr(args)
    for obj in (tensor, args):
        for attempt in (lambda: pickle.dumps(obj), lambda: copy.deepcopy(obj)):
            with pytest.raises(SimplerTypeError, match="cannot be pickled or deep-copied") as err:
                attempt()
            assert err.value.code == errors.PTO_RUNTIME_ERR_INVALID_ARGUMENT


def test_a_kernel_launch_refuses_pickling_and_copying(add_scalar_kernel_worker):
    worker, cid, stream = add_scalar_kernel_worker
    x = sim.DeviceArray((8,), "float32")
    y = sim.DeviceArray((8,), "float32")
    launch = worker.kernel_bind(cid, x, y, 1.0)
    for attempt in (lambda: pickle.dumps(launch), lambda: copy.copy(launch),
                    lambda: copy.deepcopy(launch)):
        with pytest.raises(SimplerTypeError, match="KernelLaunch cannot be pickled or copied"):
            attempt()
    launch.launch(caller_stream=stream)   # still bound and usable
    stream.synchronize()


def test_caller_stream_refusals_name_the_api_called(add_scalar_kernel_worker):
    """docs/faults.md: one prefix, the API you called, also for the caller_stream checks."""
    w, cid, stream = add_scalar_kernel_worker
    dx = sim.DeviceArray.zeros(8, "float32", stream=stream)
    dy = sim.DeviceArray.zeros(8, "float32", stream=stream)
    with pytest.raises(SimplerTypeError, match=r"^Worker\.kernel_launch: caller_stream is required"):
        w.kernel_launch(cid, dx, dy, 1.0)
    with pytest.raises(SimplerValueError, match=r"^Worker\.kernel_launch: caller_stream: must be"):
        w.kernel_launch(cid, dx, dy, 1.0, caller_stream=0)
    launch = w.kernel_bind(cid, dx, dy, 1.0)
    with pytest.raises(SimplerTypeError, match=r"^KernelLaunch\.launch: caller_stream: expected"):
        launch.launch(caller_stream="stream")
    with pytest.raises(SimplerValueError, match=r"^KernelLaunch\.launch: caller_stream: not a valid"):
        launch.launch(caller_stream=-1)
    launch.launch(caller_stream=stream)
    stream.synchronize()
    assert (dy.numpy() == 1.0).all()


def test_a_refused_device_tensor_is_reported_under_the_api_called(add_scalar_callable):
    """A DEVICE ChipTensor outside any allocation: the runtime's refusal names the argument,
    with one prefix, the API the caller used (was "ChipWorker.submit: preparing the run
    failed: ...")."""
    from simpler.task_interface import ChipTensor, DataType
    with Worker() as worker:
        handle = worker.register(add_scalar_callable)
        worker.init()
        ptr = worker.malloc(32)
        y = np.zeros(8, np.float32)
        for api, call in (("run", worker.run), ("submit", worker.submit)):
            with pytest.raises(errors.ChipWorkerError,
                               match=rf"^Worker\.{api}: argument 0: DEVICE tensor") as err:
                call(handle, ChipTensor.make(ptr, (64,), DataType.FLOAT32), y, 1.0)
            _assert_invalid_argument(err.value)
        worker.free(ptr)


def test_an_out_of_memory_malloc_is_reported_under_worker_malloc():
    """One prefix, the API called, and no C ABI entry name (was "ChipWorker.malloc(N)
    failed: allocating N device bytes for simpler_device_malloc: ...")."""
    with Worker() as worker:
        worker.init()
        with pytest.raises(errors.ChipWorkerError,
                           match=r"^Worker\.malloc: allocating \d+ device bytes") as err:
            worker.malloc(1 << 62)
        assert err.value.status_name == "SIM_ERR_OUT_OF_MEMORY"
        assert "simpler_device_malloc" not in str(err.value)
        worker.free(worker.malloc(64))   # the worker stays usable


def test_memory_calls_after_a_device_reset_are_reported_under_the_worker_api():
    """copy_to / copy_from / free on a reset device name the Worker method called, not
    the native ChipWorker ("ChipWorker.copy_to failed: ..." before), and keep the status."""
    with Worker() as worker:
        worker.init()
        ptr = worker.malloc(64)
        host = np.zeros(16, np.float32)
        sim.device_reset(0)
        for api, call in (("copy_to", lambda: worker.copy_to(ptr, host)),
                          ("copy_from", lambda: worker.copy_from(host, ptr)),
                          ("free", lambda: worker.free(ptr))):
            with pytest.raises(errors.ChipWorkerError,
                               match=rf"^Worker\.{api}: device 0 was reset") as err:
                call()
            assert "ChipWorker" not in str(err.value)
            assert err.value.code is not None and err.value.status_name


def test_every_call_after_a_device_reset_names_the_worker_api_and_the_python_remedy(
        add_scalar_callable):
    """register / unregister / device_memory_info on a reset device are reported under the
    Worker method called (they said "ChipWorker.register_callable failed: ..."), and the
    message tells a Python user to close the Worker (it said only "finalize_device it",
    the C ABI's entry)."""
    with Worker() as worker:
        worker.init()
        handle = worker.register(add_scalar_callable)
        sim.device_reset(0)
        for api, call in (("register", lambda: worker.register(add_scalar_callable)),
                          ("unregister", lambda: worker.unregister(handle)),
                          ("device_memory_info", worker.device_memory_info),
                          ("malloc", lambda: worker.malloc(64))):
            with pytest.raises(errors.ChipWorkerError,
                               match=rf"^Worker\.{api}: device 0 was reset") as err:
                call()
            assert "ChipWorker" not in str(err.value)
            assert "close the Worker (worker.close()" in str(err.value)
            assert err.value.code == errors.PTO_RUNTIME_ERR_INVALID_STATE
    assert worker.state == "CLOSED"                      # close() still succeeded


def test_kernel_calls_after_a_device_reset_name_the_worker_api_and_the_python_remedy(
        add_scalar_callable):
    sim.set_device(0)
    worker = Worker(level=2, execution_mode="kernel")
    worker.init(config=CallConfig())
    try:
        sim.device_reset(0)
        sim.set_device(0)
        with pytest.raises(errors.ChipWorkerError,
                           match=r"^Worker\.kernel_prepare_callable: the device was reset") as err:
            worker.kernel_prepare_callable(add_scalar_callable)
        assert "close the Worker (worker.close()" in str(err.value)
    finally:
        worker.close()


def test_a_closed_worker_says_so_and_what_to_do(add_scalar_callable):
    """After close() the advice is a new Worker, not 'call init() first' (init after close
    is refused); a run in the borrowed form is refused as closed (SimplerRuntimeError), not
    as an 'unknown callable handle' (ValueError) because close() forgot the handles."""
    worker = Worker()
    worker.init()
    handle = worker.register(add_scalar_callable)
    worker.close()
    x = np.zeros(8, np.float32)
    for call in (lambda: worker.malloc(64), worker.device_memory_info,
                 lambda: worker.run(handle, x, x.copy(), 1.0),
                 lambda: worker.submit(handle, x, x.copy(), 1.0)):
        with pytest.raises(errors.SimplerRuntimeError,
                           match=r"\(state: CLOSED\); the worker is closed: create a new Worker"):
            call()
    fresh = Worker()
    with pytest.raises(errors.SimplerRuntimeError, match=r"\(state: NEW\); call init\(\) first"):
        fresh.malloc(64)
    sim.set_device(0)
    kernel = Worker(level=2, execution_mode="kernel")
    kernel.init(config=CallConfig())
    kernel.close()
    with pytest.raises(errors.SimplerRuntimeError, match="the worker is closed: create a new"):
        kernel.kernel_prepare_callable(add_scalar_callable)


def test_a_second_worker_on_a_claimed_device_is_told_to_close_the_first():
    """The claim refusal names the Python remedy (it said only 'finalize that one first')."""
    with Worker() as owner:
        owner.init()
        second = Worker()
        with pytest.raises(errors.ChipWorkerError,
                           match=r"already owned by .*close that Worker first \(worker\.close\(\)"):
            second.init()
        second.close()
    sim.set_device(0)
    with Worker(execution_mode="kernel") as owner:
        owner.init(config=CallConfig())
        second = Worker(execution_mode="kernel")
        with pytest.raises(errors.ChipWorkerError,
                           match=r"live kernel-mode context .*close that Worker first"):
            second.init(config=CallConfig())
        second.close()


def test_close_grace_takes_numpy_numbers_but_not_bools():
    worker = Worker()
    worker.close_grace = np.float32(2.5)      # refused as "got float32" before
    assert worker.close_grace == 2.5
    worker.close_grace = np.int64(3)
    assert worker.close_grace == 3.0
    for flag in (True, np.bool_(True)):
        with pytest.raises(SimplerTypeError, match="close_grace: seconds must be a number"):
            worker.close_grace = flag
    assert worker.close_grace == 3.0


def test_args_index_accessors_refuse_bad_indexes_typed():
    from simpler.task_interface import ChipStorageTaskArgs
    args = ChipStorageTaskArgs()
    args.add_scalar(7)
    assert args.scalar(np.int64(0)) == 7
    for call in (lambda: args.scalar(-1), lambda: args.scalar(1), lambda: args.tensor(0)):
        # An IndexError that is a SimplerError, as every refusal (docs/diagnostics.md).
        with pytest.raises(errors.SimplerIndexError, match=r"index -?\d+ out of range \(count") as err:
            call()
        assert isinstance(err.value, IndexError)
        assert err.value.code == errors.PTO_RUNTIME_ERR_INVALID_ARGUMENT
    with pytest.raises(SimplerTypeError, match="scalar"):
        args.scalar("0")


def test_add_scalar_refuses_bools_as_add_scalar_i64_does():
    from simpler.task_interface import ChipStorageTaskArgs
    args = ChipStorageTaskArgs()
    for flag in (True, np.bool_(False)):
        for add in (args.add_scalar, args.add_scalar_i64, args.add_scalar_u64):
            with pytest.raises(SimplerTypeError, match="expected an int, got .*bool"):
                add(flag)
    assert args.scalar_count == 0
    args.add_scalar(np.uint8(7))   # numpy integers are ints
    assert args.scalars == [7]


def test_status_name_takes_int_codes_only():
    assert errors.status_name(np.int32(-1003)) == "PTO_RUNTIME_ERR_INVALID_STATE"
    assert errors.status_name(2 ** 70) == errors.status_name(12345)   # unknown, no TypeError
    assert errors.status_meaning(2 ** 70) == ""
    for bad in (1.5, True, "-1003", None):                    # int() made 1.5 a status
        with pytest.raises(SimplerTypeError, match="status_name: code must be an int"):
            errors.status_name(bad)


def test_kernel_ids_and_stream_handles_take_numpy_integers(add_scalar_kernel_worker):
    """A callable id or a stream handle kept in a numpy array works (both were refused as
    'expected an int, got numpy.int64' while every size and pointer took numpy ints)."""
    worker, cid, stream = add_scalar_kernel_worker
    x = sim.DeviceArray.from_numpy(np.arange(8, dtype=np.float32), stream=stream)
    y = sim.DeviceArray.zeros((8,), np.float32, stream=stream)
    worker.kernel_launch(np.int64(cid), x, y, 1.0, caller_stream=np.uint64(stream.handle))
    launch = worker.kernel_bind(np.int32(cid), x, y, 2.0)
    launch.launch(caller_stream=np.int64(stream.handle))
    stream.synchronize()
    assert (y.numpy() == np.arange(8) + 2).all()
    for flag in (True, np.bool_(True)):
        with pytest.raises(SimplerTypeError, match="callable_id: expected an int"):
            worker.kernel_launch(flag, x, y, 1.0, caller_stream=stream)
        with pytest.raises(SimplerTypeError, match="caller_stream: expected a stream handle"):
            worker.kernel_launch(cid, x, y, 1.0, caller_stream=flag)


def test_a_run_without_arguments_is_a_count_refusal_like_a_launch(add_scalar_callable):
    """run(h) / submit(h) / run(h, None) for a callable that takes arguments is the
    borrowed form's ArgumentTypeError (the wrong count, .index None), as kernel_launch(cid)
    is, not the runtime's ChipWorkerError (a RuntimeError) after staging began."""
    with Worker() as worker:
        worker.init()
        handle = worker.register(add_scalar_callable)
        for call in (lambda: worker.run(handle), lambda: worker.run(handle, None),
                     lambda: worker.submit(handle)):
            with pytest.raises(errors.ArgumentTypeError,
                               match=r"takes 3 arguments, 0 given") as err:
                call()
            assert err.value.index is None and isinstance(err.value, TypeError)
    fresh = Worker()
    handle = fresh.register(add_scalar_callable)
    with pytest.raises(errors.SimplerRuntimeError, match=r"state: NEW\); call init\(\) first"):
        fresh.run(handle)                                     # the state comes first


def test_a_bad_output_prefix_is_named_before_its_directory_is_made(add_scalar_callable, tmp_path):
    """A NUL byte in output_prefix was Python's bare ValueError 'embedded null byte' from
    os.makedirs; it is the config's SimplerValueError naming the field, before any run."""
    x = np.zeros(8, np.float32)
    with Worker() as worker:
        worker.init()
        handle = worker.register(add_scalar_callable)
        config = CallConfig(enable_profiling=True, output_prefix=str(tmp_path / "a\0b"))
        with pytest.raises(SimplerValueError, match="output_prefix: contains a NUL byte"):
            worker.run(handle, x, x.copy(), 1.0, config=config)


def test_warnings_point_at_the_callers_line(add_scalar_callable):
    """The DiagnosticsWarning of an unwritable directory names the user's file, not
    simpler's own wrapper."""
    import warnings
    x = np.zeros(8, np.float32)
    with Worker() as worker:
        worker.init()
        handle = worker.register(add_scalar_callable)
        config = CallConfig(enable_profiling=True, output_prefix="/proc/no/such/dir")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            worker.run(handle, x, x.copy(), 1.0, config=config)
    diagnostics = [w for w in caught if issubclass(w.category, errors.DiagnosticsWarning)]
    assert diagnostics and diagnostics[0].filename == __file__


def test_wait_timeouts_take_numpy_numbers_but_not_bools(add_scalar_callable):
    x = np.zeros(8, np.float32)
    with Worker() as worker:
        worker.init()
        run = worker.submit(worker.register(add_scalar_callable), x, x.copy(), 1.0)
        run.wait(np.float32(30))
        for flag in (True, np.bool_(True)):               # numpy.bool_ waited 1 s before
            with pytest.raises(SimplerTypeError, match="timeout must be a number of seconds"):
                run.wait(flag)
        for bad in (-1, float("nan"), np.float64("nan")):
            with pytest.raises(SimplerValueError, match="timeout must be >= 0"):
                run.wait(bad)


def test_callconfig_switches_take_numpy_bools_but_not_ints():
    """A switch computed with numpy (array.any()) is a bool; 1 and None are not."""
    cfg = CallConfig(enable_swimlane=np.bool_(True), dump_args=np.False_)
    cfg.enable_profiling = np.array([0, 3]).any()
    assert (cfg.enable_swimlane, cfg.dump_args, cfg.enable_profiling) == (True, False, True)
    assert type(cfg.enable_swimlane) is bool
    for value in (1, None, "yes", np.int8(1)):
        with pytest.raises(SimplerTypeError, match="CallConfig.dump_dep_graph: expected a bool"):
            CallConfig(dump_dep_graph=value)
