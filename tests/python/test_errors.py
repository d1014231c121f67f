"""Every simpler exception derives from SimplerError (issue 17, item 5) and keeps the
builtin base existing except clauses catch."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import simpler.errors as errors
from simpler import KernelCompiler, Worker, find_build
from simpler.errors import SimplerError
from simpler.kernel_compiler import KernelCompileError
from simpler.task_interface import ArgDirection as D, CallConfig, ChipTensor, CoreCallable


def test_every_class_in_simpler_errors_is_a_simpler_error():
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)
               if c.__module__ == "simpler.errors"]
    assert len(classes) >= 10
    for cls in classes:
        assert issubclass(cls, SimplerError), cls
    assert issubclass(KernelCompileError, SimplerError) and issubclass(KernelCompileError, RuntimeError)


@pytest.mark.parametrize("call, builtin", [
    (lambda: ChipTensor.from_array(np.zeros((1,) * 6, np.float32)), ValueError),   # bad input
    (lambda: CoreCallable.build([D.IN], b""), ValueError),                         # empty binary
    (lambda: CoreCallable.build("not a signature", b"k"), TypeError),              # wrong type
    (lambda: CallConfig(aicpu_thread_num=1).validate(), ValueError),               # bad field
    (lambda: Worker(level=2).malloc(16), RuntimeError),                            # wrong state
    (lambda: Worker(level=7), ValueError),                                         # bad level
    (lambda: find_build("a2a3sim", "tensormap_and_ringbuffer", lib_dir="/nonexistent"),
     FileNotFoundError),
    (lambda: KernelCompiler(use_cache=False).compile_kernel("not C++", "aiv"), RuntimeError),
])
def test_native_and_python_refusals_are_simpler_errors_with_their_builtin_base(call, builtin):
    with pytest.raises(SimplerError) as err:
        call()
    assert isinstance(err.value, builtin), type(err.value).__mro__
    # ... and each carries a named int status (a wrong state too, not None).
    assert isinstance(err.value.code, int), (type(err.value), err.value.code)
    assert err.value.status_name == errors.status_name(err.value.code) != ""


@pytest.mark.parametrize("cls, status", [
    (errors.SimplerRuntimeError, "PTO_RUNTIME_ERR_INVALID_STATE"),
    (errors.WorkerTimeoutError, "PTO_RUNTIME_ERR_TIMEOUT"),
    (errors.NotImplementedYetError, "PTO_RUNTIME_ERR_UNSUPPORTED"),
    (errors.UnsupportedRuntimeOperation, "PTO_RUNTIME_ERR_UNSUPPORTED"),
    (errors.RuntimeBuildNotFoundError, "PTO_RUNTIME_ERR_UNSUPPORTED"),
    (errors.KernelFaultError, "SIMPLER_CHIP_ERR_KERNEL_FAULT"),
    (errors.KernelTimeoutError, "SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT"),
    (errors.ClusterUnavailableError, "SIMPLER_CHIP_ERR_CLUSTER_UNAVAILABLE"),
    (KernelCompileError, "PTO_RUNTIME_ERR_INVALID_ARGUMENT"),
    (errors.SimplerError, "PTO_RUNTIME_ERR_INTERNAL"),
    (errors.ChipWorkerError, "PTO_RUNTIME_ERR_INTERNAL"),
])
def test_an_error_raised_without_a_native_status_carries_its_class_status(cls, status):
    err = cls("refused")
    assert err.code == errors.STATUS_CODES[status] and err.status_name == status


def test_every_simpler_error_class_carries_an_int_status_by_default():
    for _, cls in inspect.getmembers(errors, inspect.isclass):
        if issubclass(cls, SimplerError) and cls.__init__ is SimplerError.__init__:
            assert isinstance(cls("x").code, int), cls


def test_a_wrong_state_refusal_carries_invalid_state():
    worker = Worker(level=2)
    with pytest.raises(errors.SimplerRuntimeError) as err:
        worker.malloc(16)  # before init
    assert err.value.code == errors.PTO_RUNTIME_ERR_INVALID_STATE
    assert err.value.status_name == "PTO_RUNTIME_ERR_INVALID_STATE"


def test_status_carrying_errors_have_code_and_status_name():
    err = errors.ChipWorkerError("x failed", errors.PTO_RUNTIME_ERR_INVALID_STATE)
    assert err.code == errors.PTO_RUNTIME_ERR_INVALID_STATE
    assert err.status_name == "PTO_RUNTIME_ERR_INVALID_STATE"
    plain = errors.SimplerRuntimeError("bad")
    assert plain.code == errors.PTO_RUNTIME_ERR_INVALID_STATE
    assert plain.status_name == "PTO_RUNTIME_ERR_INVALID_STATE"


# Raised by protocol, not as a refusal: __getattr__'s AttributeError, a missing optional
# dependency's ImportError (mpi4py), an internal invariant's AssertionError.
_PROTOCOL_EXCEPTIONS = ("AttributeError", "ImportError", "AssertionError", "StopIteration")


def test_the_package_raises_only_simpler_errors():
    """Every exception the package raises itself is a SimplerError (issue 16.4): a `raise`
    of a bare builtin class (ValueError, RuntimeError, ...) is refused here, so that
    `except SimplerError` catches all of simpler's refusals. The Simpler* subclasses keep
    the builtin base, so old `except ValueError` clauses still work."""
    import ast
    import builtins
    import pathlib

    import simpler
    package = pathlib.Path(simpler.__file__).resolve().parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if (isinstance(target, ast.Name) and isinstance(getattr(builtins, target.id, None), type)
                    and issubclass(getattr(builtins, target.id), Exception)
                    and target.id not in _PROTOCOL_EXCEPTIONS):
                offenders.append(f"{path.relative_to(package)}:{node.lineno}: raise {target.id}")
    assert not offenders, "raise a simpler.errors class instead:\n" + "\n".join(offenders)
