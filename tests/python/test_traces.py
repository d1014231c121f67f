"""The diagnostics files of a run, from Python: the swimlane trace is valid Chrome/Perfetto
JSON (parsed by json), a 2-task dependency shows as one flow, cores have named tracks,
the dependency graph is written as DOT (and SVG when Graphviz is installed), and
simpler.trace summarizes the trace."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from simpler import Worker, trace
from simpler.task_interface import CallConfig, ChipStorageTaskArgs, ChipTensor


@pytest.fixture(scope="module")
def two_step_run(two_step_callable, tmp_path_factory):
    out = tmp_path_factory.mktemp("trace")
    x = np.arange(256, dtype=np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    args = ChipStorageTaskArgs()
    for t in (x, y, z):
        args.add_tensor(ChipTensor.from_array(t))
    args.add_scalar_f32(1.0)
    config = CallConfig(enable_swimlane=True, dump_dep_graph=True, enable_profiling=True,
                        output_prefix=str(out))
    with Worker(level=2, device_id=0) as w:
        handle = w.register(two_step_callable)
        w.init()
        w.run(handle, args, config=config)
    assert (z == x + 2).all()
    return out


def test_swimlane_is_valid_json_with_named_tracks(two_step_run):
    data = json.loads((two_step_run / "swimlane.json").read_text())
    events = data["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == 2
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["ph"] == "M" and e["name"] == "thread_name"}
    processes = {e["pid"]: e["args"]["name"] for e in events
                 if e["ph"] == "M" and e["name"] == "process_name"}
    for s in slices:
        assert threads[(s["pid"], s["tid"])] == f"AIV {s['args']['core']}"
        assert processes[s["pid"]] == "AIV cores"
        # full precision: ts/dur are exactly the integer nanoseconds / 1000
        assert s["ts"] == s["args"]["start_ns"] / 1000
        assert s["dur"] == (s["args"]["end_ns"] - s["args"]["start_ns"]) / 1000
    assert data["otherData"]["program"] == "two_step_entry"
    assert any(e["ph"] == "C" and e["name"] == "ready tasks" for e in events)


def test_two_task_dependency_is_one_flow(two_step_run):
    data = trace.load(two_step_run / "swimlane.json")
    tasks = sorted({e["args"]["task"] for e in data["traceEvents"] if e["ph"] == "X"})
    assert trace.flows(data) == [(tasks[0], tasks[1])]
    s = next(e for e in data["traceEvents"] if e["ph"] == "s")
    f = next(e for e in data["traceEvents"] if e["ph"] == "f")
    assert s["id"] == f["id"] and f["bp"] == "e" and s["ts"] <= f["ts"]


def test_dependency_graph_dot_and_svg(two_step_run):
    dot = (two_step_run / "deps.dot").read_text()
    assert dot.startswith("digraph deps {") and dot.count(" -> ") == 1
    if shutil.which("dot"):
        assert "<svg" in (two_step_run / "deps.svg").read_text()


def test_summary_counts_blocks_per_core(two_step_run):
    summary = trace.summarize(two_step_run / "swimlane.json")
    assert summary.tasks == 2 and summary.blocks == 2 and summary.dependencies == 1
    assert sum(c.blocks for c in summary.cores) == 2
    assert all(0 < c.busy_percent <= 100 for c in summary.cores)
    assert "busy %" in summary.format()


def test_summary_of_a_handmade_trace(tmp_path):
    events = [{"ph": "M", "name": "thread_name", "pid": 2, "tid": 0, "args": {"name": "AIV 0"}}]
    for task, (start, end) in enumerate([(0, 100), (300, 400), (450, 1000)]):
        events.append({"ph": "X", "name": "f0", "pid": 2, "tid": 0, "ts": start / 1000,
                       "dur": (end - start) / 1000,
                       "args": {"task": task, "start_ns": start, "end_ns": end}})
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    summary = trace.summarize(path, gaps=1)
    (core,) = summary.cores
    assert (core.core, core.blocks, core.tasks, core.busy_ns) == ("AIV 0", 3, 3, 750)
    assert core.busy_percent == pytest.approx(75.0)
    assert core.longest_gap_ns == 200
    assert [(g.start_ns, g.end_ns) for g in summary.gaps] == [(100, 300)]


def test_summary_lists_cores_in_numeric_order(tmp_path):
    # `simpler trace` on the tutorial's trace listed AIV 10, AIV 11, AIV 8, AIV 9.
    events = []
    for core in (10, 8, 9, 11):
        events.append({"ph": "M", "name": "thread_name", "pid": 2, "tid": core,
                       "args": {"name": f"AIV {core}"}})
        events.append({"ph": "X", "name": "f0", "pid": 2, "tid": core, "ts": core, "dur": 1,
                       "args": {"task": core, "start_ns": core * 1000,
                                "end_ns": core * 1000 + 1000}})
    events.append({"ph": "X", "name": "f0", "pid": 1, "tid": 0, "ts": 0, "dur": 1,
                   "args": {"task": 0, "start_ns": 0, "end_ns": 1000}})
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    cores = [c.core for c in trace.summarize(path).cores]
    assert cores == ["1/0", "AIV 8", "AIV 9", "AIV 10", "AIV 11"]


def test_summary_refuses_what_is_not_a_trace(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        trace.summarize(bad)
    bad.write_text('{"events": []}')
    with pytest.raises(ValueError, match="traceEvents"):
        trace.summarize(bad)
    from simpler.errors import SimplerValueError
    bad.write_bytes(b"\xff\xfe binary")  # not UTF-8: was a bare UnicodeDecodeError
    with pytest.raises(SimplerValueError, match="not valid JSON"):
        trace.summarize(bad)


def test_trace_arguments_of_the_wrong_type_are_typed_and_no_descriptor_is_touched(tmp_path):
    """An int path is not a file descriptor to read and close (open(5) would close the host
    process's fd 5); flows() and gaps= of the wrong type say so."""
    import os

    from simpler.errors import SimplerTypeError, SimplerValueError
    good = tmp_path / "t.json"
    good.write_text('{"traceEvents": []}')
    fd = os.open(good, os.O_RDONLY)
    try:
        for call in (trace.load, trace.summarize):
            with pytest.raises(SimplerTypeError, match="path must be a str or os.PathLike, got int"):
                call(fd)
        os.fstat(fd)  # still open
    finally:
        os.close(fd)
    for bad in (None, [], {"events": []}):
        with pytest.raises(SimplerTypeError, match="trace must be a dict with a 'traceEvents'"):
            trace.flows(bad)
    with pytest.raises(SimplerValueError, match="a trace event is not an object"):
        trace.flows({"traceEvents": [5]})
    assert trace.summarize(good, gaps=np.int64(2)).blocks == 0
    with pytest.raises(SimplerTypeError, match="gaps must be an int, got str"):
        trace.summarize(good, gaps="3")
    with pytest.raises(SimplerValueError, match="gaps must be >= 0"):
        trace.summarize(good, gaps=-1)                 # it listed none, silently
