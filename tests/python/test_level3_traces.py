"""Diagnostics files of a level-3 run (docs/api.md "Worker(level=3)", docs/traces.md): every
task's chip run writes its own directory, so no chip's trace overwrites another's."""
from __future__ import annotations

import json

import numpy as np
import pytest

from simpler import Worker
from simpler.errors import SimplerValueError
from simpler.task_interface import CallConfig


def test_each_task_of_a_host_run_writes_its_own_trace(tmp_path, add_scalar_callable):
    x = np.arange(1024, dtype=np.float32)
    t = np.zeros_like(x)
    y = np.zeros_like(x)

    def orch(o, _):
        o.submit(add, x[:512], t[:512], 1.0, chip=0)
        o.submit(add, x[512:], t[512:], 1.0, chip=1)
        o.submit(add, t, y, 1.0, chip=1)

    with Worker(level=3, device_ids=[0, 1]) as w:
        add = w.register(add_scalar_callable)
        w.init()
        w.run(orch, config=CallConfig(enable_swimlane=True, output_prefix=str(tmp_path)))
    np.testing.assert_array_equal(y, x + 2)
    written = sorted(p.parent.name for p in tmp_path.glob("*/swimlane.json"))
    assert written == ["task-0001-chip-0", "task-0002-chip-1", "task-0003-chip-1"]
    for name in written:
        trace = json.loads((tmp_path / name / "swimlane.json").read_text())
        assert any(e.get("ph") == "X" for e in trace["traceEvents"])   # a kernel ran there
    assert not (tmp_path / "swimlane.json").exists()


def test_a_prefix_too_long_for_the_task_directories_is_refused_before_anything_runs(
        tmp_path, add_scalar_callable):
    prefix = str(tmp_path / ("p" * (250 - len(str(tmp_path)))))   # valid alone (<= 255 bytes)
    x = np.ones(64, np.float32)
    y = np.zeros_like(x)
    with Worker(level=3, device_ids=[0, 1]) as w:
        add = w.register(add_scalar_callable)
        w.init()
        config = CallConfig(enable_swimlane=True, output_prefix=prefix)
        with pytest.raises(SimplerValueError, match="shorten output_prefix"):
            w.run(lambda o, a: o.submit(add, x, y, 1.0), config=config)
        assert w.last_run_stats["tasks"] == 0 and not y.any()
