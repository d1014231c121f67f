"""Every example runs as a user would run it and reports a successful check."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ["vector_add", "dag", "matmul", "kernel_mode", "decoder_layer", "multi_chip",
            "multi_host"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs_and_checks(name, tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    env["SIMPLER_CACHE_DIR"] = str(tmp_path / "kernel-cache")  # a cold cache: really compiles
    result = subprocess.run([sys.executable, str(ROOT / "examples" / name / "main.py")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    checked = [line for line in result.stdout.splitlines() if line.startswith(f"{name}: checked ")]
    assert len(checked) == 1, result.stdout
    assert ": OK (" in checked[0], checked[0]


def test_examples_list_is_complete():
    folders = sorted(p.name for p in (ROOT / "examples").iterdir()
                     if p.is_dir() and (p / "main.py").exists())
    assert folders == sorted(EXAMPLES)
