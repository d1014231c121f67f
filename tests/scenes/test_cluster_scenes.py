"""Cluster (MIX) tasks in scenes: the fused attention gives the unfused tasks' numbers bit for
bit (every runtime and mode), and the scheduler neither starves a cluster task behind a
stream of single-core tasks nor leaves the rest of the chip idle while one runs, judged
from the core-time accounting of the run's swimlane trace."""
from __future__ import annotations

import pathlib
import sys
from typing import Dict, List, Tuple

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from mixed_stream import CLUSTER, mixed_scene  # noqa: E402
from scene import MODES, RUNTIMES, _host_args, compare, run_scene, supports  # noqa: E402
from scenes import FUSED_PAIRS, SCENES  # noqa: E402

from simpler import Worker, sim, trace  # noqa: E402
from simpler.task_interface import CallConfig  # noqa: E402

BY_NAME = {scene.name: scene for scene in SCENES}
EQUAL_CASES = [(fused, plain, runtime, mode, dtype) for fused, plain in FUSED_PAIRS
               for runtime, mode in MODES
               if supports(BY_NAME[fused], mode) and supports(BY_NAME[plain], mode)
               for dtype in BY_NAME[fused].dtypes]


@pytest.mark.parametrize("fused,plain,runtime,mode,dtype", EQUAL_CASES,
                         ids=[f"{f}-{r}-{m}-{d}" for f, _, r, m, d in EQUAL_CASES])
def test_fused_attention_gives_the_unfused_numbers(fused: str, plain: str, runtime: str,
                                                   mode: str, dtype: str) -> None:
    _, got, _ = run_scene(BY_NAME[fused], runtime, mode, dtype)
    _, want, _ = run_scene(BY_NAME[plain], runtime, mode, dtype)
    for name in BY_NAME[plain].checked:
        assert np.array_equal(got[name], want[name]), (
            compare(name, BY_NAME[fused].load(got[name], dtype),
                    BY_NAME[plain].load(want[name], dtype), dtype) or f"{name}: bits differ")


def test_the_fused_layer_submits_fewer_tasks() -> None:
    assert BY_NAME["decoder_prefill_fused"].tasks < BY_NAME["decoder_prefill_cached"].tasks


# ---- fairness, from the core-time accounting of the trace -----------------------------

def traced_run(scene, runtime: str, out_dir: pathlib.Path) -> Dict:
    """Runs the scene once in program mode with a swimlane trace; checks it; the trace."""
    inputs = scene.make_inputs("float32")
    arrays = {name: a.copy() for name, a in inputs.items()}
    with Worker(level=2, device_id=0, platform="a2a3sim", runtime=RUNTIMES[runtime]) as worker:
        handle = worker.register(scene.program())
        worker.init()
        config = CallConfig(enable_swimlane=True, output_prefix=str(out_dir))
        worker.run(handle, _host_args(scene, arrays, "float32"), config=config)
    want = scene.golden(inputs, "float32")
    for name in scene.checked:
        assert not compare(name, arrays[name], want[name], "float32")
    return trace.load(out_dir / "swimlane.json")


def blocks_of(t: Dict) -> List[Tuple[int, int, int, int]]:
    """(start_ns, end_ns, task, func_id) of every kernel block."""
    return [(e["args"]["start_ns"], e["args"]["end_ns"], e["args"]["task"], e["args"]["func_id"])
            for e in t["traceEvents"] if e.get("ph") == "X"]


def cluster_ready_times(t: Dict) -> List[int]:
    """When each cluster task became ready: the rises of the trace's MIX ready counter."""
    origin_us = min(e["ts"] for e in t["traceEvents"] if e.get("ph") == "X")
    rises, depth = [], 0
    for e in sorted((e for e in t["traceEvents"]
                     if e.get("ph") == "C" and e.get("name") == "ready tasks"),
                    key=lambda e: e["ts"]):
        mix = e["args"].get("MIX", 0)
        rises += [round((e["ts"] - origin_us) * 1000)] * max(0, mix - depth)
        depth = mix
    return rises


def busy_union(blocks, start: int, end: int) -> int:
    """Nanoseconds of [start, end) in which at least one core ran a block."""
    total, cursor = 0, start
    for b_start, b_end, _, _ in sorted(blocks):
        b_start, b_end = max(b_start, cursor), min(b_end, end)
        if b_end > b_start:
            total += b_end - b_start
            cursor = b_end
    return total


def test_a_whole_chip_cluster_task_does_not_starve_behind_single_core_tasks(tmp_path) -> None:
    # Each cluster task needs every core of the chip at once; a stream of single-core tasks
    # keeps some core busy at every instant, so without reservation it would wait for the
    # end of the stream.
    clusters = sim.device_topology(0).clusters
    single_us = 2000
    scene = mixed_scene("mixed_whole_chip", singles=60, every=20, clusters=clusters,
                        single_us=single_us, cluster_us=1000)
    t = traced_run(scene, "tmr", tmp_path)
    blocks = blocks_of(t)
    singles = [b for b in blocks if b[3] != CLUSTER]
    cluster_tasks = sorted({b[2] for b in blocks if b[3] == CLUSTER})
    ready = cluster_ready_times(t)
    assert len(cluster_tasks) == 3 and len(ready) == 3, (cluster_tasks, ready)
    for task, ready_ns in zip(cluster_tasks, ready):
        start = min(b[0] for b in blocks if b[2] == task)
        end = max(b[1] for b in blocks if b[2] == task)
        assert sum(1 for b in blocks if b[2] == task) == 3 * clusters  # every core, at once:
        assert max(b[0] for b in blocks if b[2] == task) < end
        # Only the blocks already running when it was queued delay it: at most one per
        # dispatching thread starts in between (not the rest of the stream) ...
        overtaking = [b for b in singles if ready_ns < b[0] < start]
        assert len(overtaking) <= 4, (task, len(overtaking))
        # ... and while it waits (for those blocks, or for the cluster task queued before
        # it), the chip is not left idle: it starts as the last block before it ends.
        idle = (start - ready_ns) - busy_union(blocks, ready_ns, start)
        assert idle < 25_000_000, (task, idle, start - ready_ns)


def test_single_core_tasks_keep_the_other_clusters_busy_while_a_cluster_task_runs(
        tmp_path) -> None:
    # One-cluster tasks that run long: the dispatchers do not wait for them (their parts
    # run on helper threads), so single-core tasks keep running on the other clusters.
    scene = mixed_scene("mixed_one_cluster", singles=60, every=20, clusters=1, single_us=1000,
                        cluster_us=20000)
    t = traced_run(scene, "tmr", tmp_path)
    blocks = blocks_of(t)
    singles = [b for b in blocks if b[3] != CLUSTER]
    for task in sorted({b[2] for b in blocks if b[3] == CLUSTER}):
        start = min(b[0] for b in blocks if b[2] == task)
        end = max(b[1] for b in blocks if b[2] == task)
        remaining = [b for b in singles if b[1] > start]
        if not remaining:
            continue
        # Runnable work existed during the cluster task: some of it ran alongside.
        alongside = [b for b in singles if start < b[0] < end]
        assert alongside, f"task {task}: no single-core block ran during its {end - start} ns"
        # Core time of single-core blocks inside the cluster task's span: at least half of
        # what was left to run or of the span (the dispatchers were never held up by it).
        busy = sum(min(b[1], end) - max(b[0], start) for b in singles
                   if b[0] < end and b[1] > start)
        left = sum(b[1] - max(b[0], start) for b in remaining)
        assert busy >= min(left, end - start) / 2, (task, busy, left, end - start)
