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
def test_scene_matches_numpy(scene: Scene, runtime: str, mode: str, dtype: str, rounds: int,
                             record_round_times) -> None:
    inputs, outputs, seconds = run_scene(scene, runtime, mode, dtype, rounds)
    assert len(seconds) == rounds
    record_round_times(seconds)
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


def test_rounds_option_runs_each_scene_that_often_and_lists_the_times() -> None:
    # `pytest tests/scenes --rounds N`, as docs/model-layers.md says; 0 is a usage error.
    import os
    import subprocess
    here = pathlib.Path(__file__).resolve().parent
    command = [sys.executable, "-m", "pytest", str(here / "test_scenes.py"), "-q",
               "-p", "no:cacheprovider", "-k", "decode_loop-tmr-program-float32"]
    done = subprocess.run(command + ["--rounds", "2"], capture_output=True, text=True,
                          env=os.environ, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines()
               if line.startswith("test_scene_matches_numpy[decode_loop-tmr-program-float32]"))
    assert row.split()[1] == "2", row
    refused = subprocess.run(command + ["--rounds", "0"], capture_output=True, text=True,
                             env=os.environ, timeout=300)
    assert refused.returncode != 0 and "--rounds must be at least 1" in refused.stdout + refused.stderr


@pytest.mark.parametrize("argv, message", [
    (["--rounds", "0"], "--rounds must be at least 1"),
    (["--scene", "no_such_scene"], "unknown ['no_such_scene']; choose from"),
    (["--dtype", "float64"], "unknown ['float64']; choose from"),
    # Each known, but that scene has no float16 variant: it ran nothing and exited 0.
    (["--scene", "decoder_prefill_cached", "--dtype", "float16"], "nothing would run"),
])
def test_run_scenes_refuses_what_would_run_nothing(argv, message) -> None:
    # docs/model-layers.md: run_scenes.py --rounds N. --rounds 0 ended in a traceback (the
    # median of no rounds); a misspelt scene or dtype ran nothing and exited 0.
    import os
    import subprocess
    script = pathlib.Path(__file__).resolve().parent / "run_scenes.py"
    result = subprocess.run([sys.executable, str(script), *argv], capture_output=True, text=True,
                            timeout=120, env=dict(os.environ))
    assert result.returncode == 2, result.stdout + result.stderr[-2000:]
    assert message in result.stderr and "Traceback" not in result.stderr
