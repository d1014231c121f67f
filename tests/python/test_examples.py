"""Every example runs as a user would run it and reports a successful check."""
from __future__ import annotations

import os
import pathlib
import shutil
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


def _targets_example_sh_builds(name: str, tmp_path: pathlib.Path) -> list:
    """scripts/example.sh NAME run for real over stub setup/build scripts that record the
    targets, and a stub example that only prints."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "examples" / name).mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "example.sh", repo / "scripts" / "example.sh")
    record = tmp_path / "targets"
    (repo / "scripts" / "setup.sh").write_text("#!/bin/sh\nexit 0\n")
    (repo / "scripts" / "build.sh").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    for script in ("setup.sh", "build.sh"):
        (repo / "scripts" / script).chmod(0o755)
    (repo / "examples" / name / "main.py").write_text("print('stub')\n")
    result = subprocess.run(["bash", str(repo / "scripts" / "example.sh"), name],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout == "stub\n", result.stderr
    return [a.split("=", 1)[1] for a in record.read_text().split() if a.startswith("--target=")]


def test_example_sh_builds_what_the_multi_host_example_imports(tmp_path):
    # README: 'bash scripts/example.sh multi_host' runs it; it built only simpler_native,
    # so on a fresh clone Worker(level=4) had no simpler._mpi_native.
    build = pathlib.Path(os.environ.get("SIMPLER_BUILD_DIR", ROOT / "build"))
    if shutil.which("ninja") is None or not (build / "build.ninja").exists():
        pytest.skip("needs a CMake/Ninja build directory to resolve targets")
    if subprocess.run(["ninja", "-C", str(build), "-t", "query", "simpler_mpi_native"],
                      capture_output=True).returncode != 0:
        pytest.skip("this configuration found no MPI (no simpler_mpi_native target)")

    def sources(targets):
        listed = subprocess.run(["ninja", "-C", str(build), "-t", "inputs", *targets],
                                capture_output=True, text=True, check=True).stdout
        return {line for line in listed.splitlines() if "/src/python/mpi/" in line}

    assert sources(_targets_example_sh_builds("multi_host", tmp_path))
    assert not sources(_targets_example_sh_builds("vector_add", tmp_path / "2"))  # only there


def test_example_sh_refuses_an_unknown_example_before_setup_and_build(tmp_path):
    # It set up and built (minutes on a fresh clone) before saying the name was wrong.
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "examples").mkdir()
    shutil.copy(ROOT / "scripts" / "example.sh", repo / "scripts" / "example.sh")
    ran = tmp_path / "ran"
    for script in ("setup.sh", "build.sh"):
        (repo / "scripts" / script).write_text(f"#!/bin/sh\necho {script} >> {ran}\n")
        (repo / "scripts" / script).chmod(0o755)
    result = subprocess.run(["bash", str(repo / "scripts" / "example.sh"), "vector_ad"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "no example 'vector_ad'" in result.stderr
    assert "the examples: " in result.stderr and "driver_demo" in result.stderr
    assert not ran.exists(), ran.read_text()


def test_driver_demo_runs_and_checks(tmp_path):
    # README lists it among example.sh's examples; it is a file, not a folder.
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "driver_demo.py")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert any(line.startswith("driver_demo: checked ") and line.endswith(": OK")
               for line in result.stdout.splitlines()), result.stdout


@pytest.mark.parametrize("argv", [["--sanitize=adress"], ["--lint", "--sanitize=thread"]])
def test_test_sh_refuses_bad_arguments_before_setup(tmp_path, argv):
    # It ran scripts/setup.sh (apt-get on a fresh machine) before looking at its argument,
    # and ignored a second one.
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "test.sh", repo / "scripts" / "test.sh")
    ran = tmp_path / "ran"
    for script in ("setup.sh", "build.sh", "lint.sh"):
        (repo / "scripts" / script).write_text(f"#!/bin/sh\necho {script} >> {ran}\n")
        (repo / "scripts" / script).chmod(0o755)
    result = subprocess.run(["bash", str(repo / "scripts" / "test.sh"), *argv],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "test.sh: " in result.stderr, result.stderr
    assert not ran.exists(), ran.read_text()


def test_example_sh_runs_against_the_build_it_made(tmp_path):
    # It built build/ but ran with whatever SIMPLER_BUILD_DIR the shell had exported.
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "examples" / "vector_add").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "example.sh", repo / "scripts" / "example.sh")
    for script in ("setup.sh", "build.sh"):
        (repo / "scripts" / script).write_text("#!/bin/sh\nexit 0\n")
        (repo / "scripts" / script).chmod(0o755)
    (repo / "examples" / "vector_add" / "main.py").write_text(
        "import os\nprint(os.environ.get('SIMPLER_BUILD_DIR'))\n")
    env = dict(os.environ, SIMPLER_BUILD_DIR=str(tmp_path / "some-other-build"))
    result = subprocess.run(["bash", str(repo / "scripts" / "example.sh"), "vector_add"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(repo / "build")
