"""Diagnostics files (issue 17, item 5): output_prefix is a directory created when missing,
kernel mode numbers its per-launch files, and a file that cannot be written is a warning,
never a failed run or lost outputs."""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

from simpler import Worker, sim
from simpler.errors import DiagnosticsWarning, SimplerError
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor, DataType


def _host_args(x, y, s):
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.from_array(x))
    args.add_tensor(ChipTensor.from_array(y))
    args.add_scalar_f32(s)
    return args


def test_program_mode_creates_the_directory(add_scalar_callable, tmp_path):
    out = tmp_path / "not" / "yet" / "there"
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    with Worker(level=2, device_id=1) as w:
        h = w.register(add_scalar_callable)
        w.init()
        cfg = CallConfig(dump_dep_graph=True, enable_swimlane=True, output_prefix=str(out))
        w.run(h, _host_args(x, y, 1.0), config=cfg)
    np.testing.assert_array_equal(y, x + 1)
    assert "digraph" in (out / "deps.dot").read_text()
    assert (out / "swimlane.json").read_text().lstrip().startswith(("{", "["))


def test_unwritable_directory_is_a_warning_and_the_outputs_arrive(add_scalar_callable, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    with Worker(level=2, device_id=1) as w:
        h = w.register(add_scalar_callable)
        w.init()
        cfg = CallConfig(dump_dep_graph=True, output_prefix=str(blocker / "sub"))
        with pytest.warns(DiagnosticsWarning, match="diagnostics"):
            w.run(h, _host_args(x, y, 3.0), config=cfg)
    np.testing.assert_array_equal(y, x + 3)
    assert issubclass(DiagnosticsWarning, SimplerError)


def test_kernel_mode_numbers_each_launchs_files(add_scalar_callable, tmp_path):
    out = tmp_path / "launches"
    sim.set_device(0)
    stream = sim.Stream()
    x = np.arange(128, dtype=np.float32)
    dx, dy = sim.malloc(x.nbytes), sim.malloc(x.nbytes)
    sim.memcpy_htod(dx, x)
    w = Worker(level=2, execution_mode="kernel", device_id=0)
    w.init(config=CallConfig(dump_dep_graph=True, dump_args=True, output_prefix=str(out)))
    try:
        cid = w.kernel_prepare_callable(add_scalar_callable)
        for s in (1.0, 2.0, 3.0):
            args = ChipStorageTaskArgs()
            args.add_tensor(ChipTensor.make(dx, x.shape, DataType.FLOAT32))
            args.add_tensor(ChipTensor.make(dy, x.shape, DataType.FLOAT32))
            args.add_scalar_f32(s)
            w.kernel_launch(cid, args, caller_stream=stream)
        stream.synchronize()
    finally:
        w.close()
        y = np.empty_like(x)
        sim.memcpy_dtoh(y, dy)
        sim.free(dx)
        sim.free(dy)
        stream.destroy()
    np.testing.assert_array_equal(y, x + 3)
    names = sorted(p.name for p in out.iterdir())
    files = ("args.txt", "deps.dot") + (("deps.svg",) if shutil.which("dot") else ())
    assert names == [f"launch-{n:06d}.{f}" for n in (1, 2, 3) for f in files]


def test_kernel_mode_unwritable_directory_does_not_fail_the_launch(add_scalar_callable, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    sim.set_device(0)
    stream = sim.Stream()
    x = np.arange(32, dtype=np.float32)
    dx, dy = sim.malloc(x.nbytes), sim.malloc(x.nbytes)
    sim.memcpy_htod(dx, x)
    w = Worker(level=2, execution_mode="kernel", device_id=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w.init(config=CallConfig(dump_dep_graph=True, output_prefix=str(blocker / "sub")))
    assert any(issubclass(c.category, DiagnosticsWarning) for c in caught)
    try:
        cid = w.kernel_prepare_callable(add_scalar_callable)
        args = ChipStorageTaskArgs()
        args.add_tensor(ChipTensor.make(dx, x.shape, DataType.FLOAT32))
        args.add_tensor(ChipTensor.make(dy, x.shape, DataType.FLOAT32))
        args.add_scalar_f32(0.5)
        w.kernel_launch(cid, args, caller_stream=stream)
        stream.synchronize()  # no error: diagnostics never fail a launch
        y = np.empty_like(x)
        sim.memcpy_dtoh(y, dy)
        np.testing.assert_array_equal(y, x + 0.5)
    finally:
        w.close()
        sim.free(dx)
        sim.free(dy)
        stream.destroy()
