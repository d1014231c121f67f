"""docs/tutorial.md step 5 describes the trace step 4 writes: what a user looks for in
Perfetto (row names, slice names, slice arguments, the units) must be what the file holds.
It said rows `AIV15` and slices `f<func id> t<task id>`; the trace has `AIV 15` and `f0`."""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
TUTORIAL = (ROOT / "docs" / "tutorial.md").read_text()
FENCE = re.compile(r"^```python\n(.*?)^```[ \t]*$", re.S | re.M)


def _step(title: str) -> str:
    start = TUTORIAL.index(title)
    end = TUTORIAL.find("\n## ", start + 1)
    return TUTORIAL[start:end if end >= 0 else len(TUTORIAL)]


def _run_step_4(tmp_path: pathlib.Path) -> pathlib.Path:
    block = FENCE.search(_step("## 4.")).group(1)
    env = dict(os.environ, TMPDIR=str(tmp_path))   # its mkdtemp lands in tmp_path
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    printed = re.search(r"^trace: (\S+)", result.stdout, re.M)
    assert printed, "step 4 no longer prints where its trace is"
    return pathlib.Path(printed.group(1))


def test_step_5_describes_the_trace_step_4_writes(tmp_path):
    trace_path = _run_step_4(tmp_path)
    events = json.loads(trace_path.read_text())["traceEvents"]
    prose = " ".join(_step("## 5.").split())

    rows = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    row = re.search(r"row is one simulated core \(`([^`]+)`", prose).group(1)
    kind = row.rstrip("0123456789")
    assert any(r.startswith(kind) and r[len(kind):].isdigit() for r in rows), (row, rows)

    slices = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    assert slices
    template = re.search(r"slice one block of one task, named `([^`]+)`", prose).group(1)
    for s in slices:
        name = template.replace("<func id>", str(s["args"]["func_id"]))
        name = name.replace("<task id>", str(s["args"]["task"]))
        assert s["name"] == name, (template, s)
        for key in re.findall(r"\(`(task|block|start_ns|end_ns)`\)", prose):
            assert key in s["args"], (key, s)
        assert abs(s["ts"] - s["args"]["start_ns"] / 1000) < 1e-6   # microseconds
    assert (trace_path.parent / "deps.dot").exists()   # deps.svg: test_traces (dot is bounded)
