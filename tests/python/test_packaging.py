"""The wheel: built from a copy of the source tree (python -m build --no-isolation --wheel,
offline, setup.py driving CMake), installed into a fresh venv, then the copy is deleted and
the kernel-mode example runs from a directory outside any source tree, with no PYTHONPATH
and no SIMPLER_* paths: the installed package finds its runtime builds, headers and sim
library inside itself. The package is then moved and still works (relocatable).

The README's other install path, `pip install --no-build-isolation .` into a venv, runs on
the same source copy (pip builds in the tree, so CMake reuses the wheel's build) and is
checked the same way.

The one slow test of the suite (about 1-2 minutes: a CMake build of the libraries; ccache
makes repeats faster).
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON = "/usr/bin/python3"

pytestmark = pytest.mark.skipif(not (ROOT / "pyproject.toml").exists() or shutil.which("cmake") is None,
                                reason="needs pyproject.toml and cmake")

_IGNORE = shutil.ignore_patterns(".git", "build", "build-*", "__pycache__", "*.so", "*.egg-info",
                                 ".pytest_cache")


def _run(argv, **kw):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=900, **kw)
    assert result.returncode == 0, (f"{argv} failed ({result.returncode})\nstdout:\n"
                                    f"{result.stdout[-4000:]}\nstderr:\n{result.stderr[-4000:]}")
    return result


def _clean_env(tmp: pathlib.Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SIMPLER_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["SIMPLER_CACHE_DIR"] = str(tmp / "kernel-cache")
    return env


LEVEL3_ALL_REDUCE = """
import numpy as np
from simpler import Worker
with Worker(level=3, device_ids=[0, 1]) as w:
    w.init()
    a = [np.ones(5, np.float32), np.full(5, 2, np.float32)]
    w.run(lambda o, _: o.all_reduce(a))   # compiles the reduction program shipped in the package
assert all((x == 3).all() for x in a)
print("level 3: all_reduce checked")
"""


def test_the_wheel_holds_every_file_of_the_python_package(tmp_path):
    """setuptools copies only the packages and data files pyproject.toml lists: a subpackage
    (simpler.host: levels 3 and 4) or a data file left out is missing from every install."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "python", source / "python", ignore=_IGNORE)
    _run([PYTHON, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path / "lib")],
         env=_clean_env(tmp_path), cwd=source)
    package = source / "python" / "simpler"
    wanted = {f.relative_to(package) for f in package.rglob("*")
              if f.is_file() and f.name != "_build_info.py"}
    built = {f.relative_to(tmp_path / "lib" / "simpler")
             for f in (tmp_path / "lib" / "simpler").rglob("*") if f.is_file()}
    assert wanted - built == set(), sorted(wanted - built)


def test_wheel_installs_into_a_venv_and_runs_the_kernel_mode_example(tmp_path):
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=_IGNORE)
    env = _clean_env(tmp_path)
    env["CCACHE_BASEDIR"] = str(tmp_path)  # cache hits across temp dirs
    _run([PYTHON, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(tmp_path / "dist"),
          str(source)], env=env, cwd=tmp_path)
    wheels = list((tmp_path / "dist").glob("simpler-*.whl"))
    assert len(wheels) == 1, wheels

    venv = tmp_path / "venv"
    _run([PYTHON, "-m", "venv", "--system-site-packages", str(venv)], env=env)
    py = venv / "bin" / "python"
    _run([str(py), "-m", "pip", "install", "--no-index", "--no-deps", str(wheels[0])], env=env)

    # The README's command, as written, from the source directory (PIP_NO_INDEX: offline,
    # numpy comes from Debian through --system-site-packages).
    pip_venv = tmp_path / "pip-venv"
    _run([PYTHON, "-m", "venv", "--system-site-packages", str(pip_venv)], env=env)
    _run([str(pip_venv / "bin" / "python"), "-m", "pip", "install", "--no-build-isolation", "."],
         env=dict(env, PIP_NO_INDEX="1"), cwd=source)

    # Nothing of the source tree or its build is needed any more.
    examples = tmp_path / "elsewhere" / "examples"
    shutil.copytree(source / "examples", examples)
    shutil.rmtree(source)
    run_dir = tmp_path / "elsewhere"
    where = _run([str(py), "-c", "import simpler; print(simpler.__file__)"], env=env, cwd=run_dir)
    package = pathlib.Path(where.stdout.strip()).parent
    assert package.is_relative_to(venv), package
    for part in ("lib/libsimpler_sim.so", "lib/libsimpler_worker.so", "py.typed",
                 "lib/runtimes/a2a3sim/tensormap_and_ringbuffer/libhost_runtime.so",
                 "include/simpler/kernel/kernel_abi.h"):
        assert (package / part).exists(), part
    # No absolute path of the source tree or its build leaks into the installed files
    # (RPATHs are $ORIGIN; bytecode, compiled by pip at install, names the install itself).
    for f in package.rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts:
            assert str(source).encode() not in f.read_bytes(), f

    result = _run([str(py), str(examples / "kernel_mode" / "main.py")], env=env, cwd=run_dir)
    assert "kernel_mode: checked " in result.stdout, result.stdout
    result = _run([str(py), "-c", LEVEL3_ALL_REDUCE], env=env, cwd=run_dir)   # simpler.host
    assert "level 3: all_reduce checked" in result.stdout, result.stdout
    info = _run([str(venv / "bin" / "simpler"), "info"], env=env, cwd=run_dir)
    assert "tensormap_and_ringbuffer" in info.stdout and str(package) in info.stdout

    pip_py = pip_venv / "bin" / "python"
    where = _run([str(pip_py), "-c", "import simpler; print(simpler.__file__)"], env=env,
                 cwd=run_dir)
    assert pathlib.Path(where.stdout.strip()).is_relative_to(pip_venv), where.stdout
    result = _run([str(pip_py), str(examples / "kernel_mode" / "main.py")], env=env, cwd=run_dir)
    assert "kernel_mode: checked " in result.stdout, result.stdout
    info = _run([str(pip_venv / "bin" / "simpler"), "info"], env=env, cwd=run_dir)
    assert "tensormap_and_ringbuffer" in info.stdout, info.stdout

    # Relocatable: the package moved elsewhere still finds everything inside itself.
    moved = tmp_path / "moved"
    shutil.copytree(package, moved / "simpler", symlinks=True)
    env_moved = dict(env, PYTHONPATH=str(moved))
    result = _run([PYTHON, str(examples / "kernel_mode" / "main.py")], env=env_moved, cwd=run_dir)
    assert "kernel_mode: checked " in result.stdout, result.stdout
    lib_dir = _run([PYTHON, "-c", "from simpler import builds; print(builds.default_lib_dir())"],
                   env=env_moved, cwd=run_dir)
    assert pathlib.Path(lib_dir.stdout.strip()) == (moved / "simpler" / "lib").resolve()
