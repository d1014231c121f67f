"""Shared fixtures of the Python suite: compiled test programs and the sim device helpers.

Programs for the worker tests live in tests/python/programs/ and are compiled once per
session with simpler.KernelCompiler (results are cached by content).
"""
from __future__ import annotations

import gc
import os
import pathlib
import threading

import pytest

PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"


def _source(name: str) -> str:
    return (PROGRAMS / name).read_text()


@pytest.fixture(scope="session")
def compiler():
    from simpler import KernelCompiler
    return KernelCompiler()


@pytest.fixture(scope="session")
def add_scalar_callable(compiler):
    """ChipCallable [IN x, OUT y, SCALAR s] computing y = x + s (float32, 1-D)."""
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    sig = [D.IN, D.OUT, D.SCALAR]
    kernel = CoreCallable.build(sig, compiler.compile_kernel(_source("add_scalar_kernel.cpp"), "aiv"))
    orch = compiler.compile_orchestration(_source("add_scalar_orch.cpp"), entry="add_scalar_entry")
    return ChipCallable.build(sig, "add_scalar_entry", orch, children=[(0, kernel)])


@pytest.fixture(scope="session")
def wait_flag_callable(compiler):
    """ChipCallable [INOUT flag(int32), OUT out(int32)]: holds its run until flag != 0."""
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    sig = [D.INOUT, D.OUT]
    kernel = CoreCallable.build(sig, compiler.compile_kernel(_source("wait_flag_kernel.cpp"), "aiv"))
    orch = compiler.compile_orchestration(_source("wait_flag_orch.cpp"), entry="wait_flag_entry")
    return ChipCallable.build(sig, "wait_flag_entry", orch, children=[(0, kernel)])


@pytest.fixture(scope="session")
def fatal_callable(compiler, add_scalar_callable):
    """Same signature as add_scalar_callable; its orchestration always reports fatal()."""
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    sig = [D.IN, D.OUT, D.SCALAR]
    kernel = CoreCallable.build(sig, compiler.compile_kernel(_source("add_scalar_kernel.cpp"), "aiv"))
    orch = compiler.compile_orchestration(_source("fatal_orch.cpp"), entry="fatal_entry")
    return ChipCallable.build(sig, "fatal_entry", orch, children=[(0, kernel)])


@pytest.fixture(scope="session")
def crash_callable(compiler):
    """ChipCallable [INOUT x(float32), SCALAR how, SCALAR who] that misbehaves on purpose
    (programs/crash_orch.cpp): who 0 a kernel, who 1 the orchestration; how 0 NULL
    dereference, 1 abort(), 2 division by zero, 3 never returns, else x[0] += 1."""
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    kernel = CoreCallable.build([D.INOUT, D.SCALAR],
                                compiler.compile_kernel(_source("crash_kernel.cpp"), "aiv"))
    orch = compiler.compile_orchestration(_source("crash_orch.cpp"), entry="crash_entry")
    return ChipCallable.build([D.INOUT, D.SCALAR, D.SCALAR], "crash_entry", orch,
                              children=[(0, kernel)])


@pytest.fixture(scope="session")
def two_step_callable(compiler):
    """ChipCallable [IN x, OUT y, OUT z, SCALAR s]: y = x + s, then z = y + s (two tasks,
    one dependency); its orchestration logs one line at DEBUG, INFO and WARN first."""
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    kernel = CoreCallable.build([D.IN, D.OUT, D.SCALAR],
                                compiler.compile_kernel(_source("add_scalar_kernel.cpp"), "aiv"))
    orch = compiler.compile_orchestration(_source("two_step_orch.cpp"), entry="two_step_entry")
    return ChipCallable.build([D.IN, D.OUT, D.OUT, D.SCALAR], "two_step_entry", orch,
                              children=[(0, kernel)])


@pytest.fixture
def add_scalar_kernel_worker(add_scalar_callable):
    """(worker, cid, stream): a kernel-mode Worker on device 0 with add_scalar_callable
    prepared, and a sim.Stream to launch on. Afterwards the stream is synchronized, the
    worker closed and the stream destroyed; arrays a test made on the stream are freed
    first (a fixture built on this one tears down before it)."""
    from simpler import Worker, sim
    from simpler.task_interface import CallConfig
    sim.set_device(0)
    stream = sim.Stream()
    w = Worker(level=2, execution_mode="kernel", device_id=0)
    w.init(config=CallConfig())
    cid = w.kernel_prepare_callable(add_scalar_callable)
    yield w, cid, stream
    stream.synchronize()
    w.close()
    gc.collect()  # arrays kept alive by a reference cycle are freed before the stream goes
    stream.destroy()


@pytest.fixture(scope="session")
def fake_lib_dir():
    """lib dir of the fake runtime build (tests/worker/core), or skip when not built."""
    from simpler import builds
    lib = pathlib.Path(os.environ.get("SIMPLER_LIB_DIR") or builds.default_lib_dir())
    fake = lib.parent / "tests" / "worker" / "core" / "fake_lib"
    if not (fake / "runtimes" / "a2a3sim" / "tensormap_and_ringbuffer" / "libhost_runtime.so").exists():
        pytest.skip(f"fake runtime build not built at {fake} (build target worker_tests)")
    return fake


def run_in_thread(fn):
    """Runs fn() on a fresh thread (no current device there); returns its result or raises."""
    box = {}

    def body():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised on the caller's thread
            box["error"] = e

    t = threading.Thread(target=body)
    t.start()
    t.join(60)
    assert not t.is_alive(), "thread did not finish"
    if "error" in box:
        raise box["error"]
    return box.get("value")
