"""tests/python/mpi/collective_copies_cases.py (the native MPI collective's host copies and
count checks, in a one-rank MPI world), in a process of its own, bounded."""
from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

pytest.importorskip("mpi4py")

HERE = pathlib.Path(__file__).resolve().parent


def test_native_collective_copies_and_count_checks():
    try:
        import simpler._mpi_native  # noqa: F401
    except ImportError:
        pytest.skip("simpler._mpi_native not built (libopenmpi-dev missing)")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE.parents[1] / "python") + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(HERE / "mpi" / "collective_copies_cases.py")],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    assert "12 passed" in result.stdout, result.stdout[-2000:]
