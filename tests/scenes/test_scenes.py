"""Every scene on every runtime and mode it supports, against its numpy golden."""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from scene import MODES, Scene, compare, check_outputs, run_scene, supports  # noqa: E402
from scenes import SCENES  # noqa: E402

CASES = [(scene, runtime, mode, dtype) for scene in SCENES for runtime, mode in MODES
         if supports(scene, mode) for dtype in scene.dtypes]


@pytest.mark.parametrize("scene,runtime,mode,dtype", CASES,
                         ids=[f"{s.name}-{r}-{m}-{d}" for s, r, m, d in CASES])
def test_scene_matches_numpy(scene: Scene, runtime: str, mode: str, dtype: str) -> None:
    inputs, outputs, _ = run_scene(scene, runtime, mode, dtype)
    reports = check_outputs(scene, inputs, outputs, dtype)
    assert not reports, "\n".join(reports)


def test_scenes_are_model_sized() -> None:
    # "Hundreds to a few thousand tasks" per layer call (a fused layer has fewer: each head's
    # attention is one cluster task instead of tens).
    unfused = [scene for scene in SCENES if not scene.name.endswith("_fused")]
    assert all(100 <= scene.tasks <= 5000 for scene in unfused), [s.tasks for s in unfused]


def test_a_mismatch_names_the_first_elements_and_the_errors() -> None:
    want = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = want.copy()
    got[1, 2] += 1.0
    report = compare("out", got, want, "float32")
    assert "out (float32): 1 of 6 elements differ" in report
    assert "(1, 2): got 6, expected 5" in report
    assert "max abs error 1" in report and "max rel error 0.2" in report
    assert compare("out", want, want, "float32") == ""


def test_a_wrong_result_fails_the_check() -> None:
    scene = SCENES[0]
    inputs, outputs, _ = run_scene(scene, "tmr", "program", "float32")
    outputs["out"] = outputs["out"].copy()
    outputs["out"][3, 5] += 0.5
    reports = check_outputs(scene, inputs, outputs, "float32")
    assert len(reports) == 1 and reports[0].startswith("out (float32)")


@pytest.mark.parametrize("name", ["decoder_prefill", "decode_loop", "decoder_prefill_fused"])
def test_layer_task_count_is_what_a_run_records(name: str, tmp_path) -> None:
    # layer.task_count mirrors orchestration.cpp; profile.json counts what a run submitted.
    import json
    from scene import RUNTIMES, _host_args
    from simpler import Worker
    from simpler.task_interface import CallConfig
    scene = next(s for s in SCENES if s.name == name)
    arrays = scene.make_inputs("float32")
    with Worker(level=2, device_id=0, platform="a2a3sim", runtime=RUNTIMES["tmr"]) as worker:
        handle = worker.register(scene.program())
        worker.init()
        worker.run(handle, _host_args(scene, arrays, "float32"),
                   config=CallConfig(enable_profiling=True, output_prefix=str(tmp_path)))
    assert json.loads((tmp_path / "profile.json").read_text())["tasks"] == scene.tasks
