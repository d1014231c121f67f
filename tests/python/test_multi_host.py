"""Worker(level=4) on Open MPI (issue 19): the scenarios of tests/python/mpi/l4_cases.py under
``mpirun --oversubscribe -np 2`` and ``-np 4`` on localhost, each rank with 2 simulated chips.

Every mpirun is bounded twice: Open MPI's own ``--timeout`` and the subprocess timeout.
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import time

import pytest

from simpler import Worker

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = ["basics", "collectives", "bad_input", "remote_failure", "not_addressable",
         "init_rollback", "mismatched_device_ids", "skipped_init", "stale_hello", "silent_rank", "abandoned_collective",
         "refused_collective", "silent_orchestrator"]
MPI_TIMEOUT = 240   # seconds, per mpirun


def mpirun_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    if os.geteuid() == 0:                     # CI runs as root; Open MPI refuses it otherwise
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


@pytest.mark.skipif(shutil.which("mpirun") is None,
                    reason="mpirun missing: scripts/setup.sh installs openmpi-bin")
@pytest.mark.parametrize("ranks", [2, 4])
def test_level4_scenarios_under_mpirun(ranks, tmp_path):
    command = ["mpirun", "--oversubscribe", "--timeout", str(MPI_TIMEOUT), "-np", str(ranks),
               "/usr/bin/python3", str(ROOT / "tests" / "python" / "mpi" / "l4_cases.py"), *CASES]
    result = subprocess.run(command, cwd=tmp_path, env=mpirun_env(), capture_output=True,
                            text=True, timeout=MPI_TIMEOUT + 30)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    for case in CASES:
        for rank in range(ranks):
            assert f"PASS {case} rank {rank}" in result.stdout, output[-6000:]


@pytest.mark.skipif(shutil.which("mpirun") is None,
                    reason="mpirun missing: scripts/setup.sh installs openmpi-bin")
def test_a_rank_that_dies_ends_the_job_in_bounded_time(tmp_path):
    """Open MPI's default: a rank exiting aborts the job; the others must not hang."""
    command = ["mpirun", "--oversubscribe", "--timeout", "120", "-np", "2", "/usr/bin/python3",
               str(ROOT / "tests" / "python" / "mpi" / "l4_cases.py"), "dead_rank"]
    start = time.monotonic()
    result = subprocess.run(command, cwd=tmp_path, env=mpirun_env(), capture_output=True,
                            text=True, timeout=150)
    assert result.returncode != 0, result.stdout + result.stderr
    assert time.monotonic() - start < 90
    assert "PASS dead_rank" not in result.stdout


@pytest.mark.skipif(shutil.which("mpirun") is None,
                    reason="mpirun missing: scripts/setup.sh installs openmpi-bin")
def test_a_script_that_never_closes_still_exits_cleanly(tmp_path):
    """The native progress threads are stopped at exit, before MPI_Finalize and before the
    interpreter finalizes (a thread left waiting in native code would abort the process)."""
    command = ["mpirun", "--oversubscribe", "--timeout", "120", "-np", "2", "/usr/bin/python3",
               str(ROOT / "tests" / "python" / "mpi" / "l4_cases.py"), "exit_without_close"]
    result = subprocess.run(command, cwd=tmp_path, env=mpirun_env(), capture_output=True,
                            text=True, timeout=150)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "PASS exit_without_close rank 1" in result.stdout, output[-4000:]
    assert "Aborted" not in output and "terminate called" not in output, output[-4000:]


def test_level4_construction_validates_before_touching_mpi():
    with pytest.raises(ValueError, match="level 2 only"):
        Worker(level=4, execution_mode="kernel", device_ids=[0])
    with pytest.raises(ValueError, match="empty"):
        Worker(level=4, device_ids=[])
    with pytest.raises(ValueError, match="rank_timeout"):
        Worker(level=4, device_ids=[0], rank_timeout=0)


def test_errors_wrapping_a_cause_carry_its_status_or_the_internal_code():
    """The task and group errors of the levels above the chip carry the status of the
    error they wrap (every SimplerError has one: a refusal in the wrong state is
    INVALID_STATE), and INTERNAL for an exception that is not simpler's."""
    from simpler.errors import (PTO_RUNTIME_ERR_INTERNAL, PTO_RUNTIME_ERR_INVALID_STATE,
                                SimplerRuntimeError)
    from simpler.host import ChipGroupError, ChipTaskError
    cause = SimplerRuntimeError("rank 1: refused")
    assert cause.code == PTO_RUNTIME_ERR_INVALID_STATE
    assert ChipTaskError("task failed", "rank 1 device 0", 1, cause).code == \
        PTO_RUNTIME_ERR_INVALID_STATE
    assert ChipGroupError("close failed", {(1, 0): cause}).code == PTO_RUNTIME_ERR_INVALID_STATE
    other = OSError("disk gone")
    assert ChipTaskError("task failed", "rank 1 device 0", 1, other).code == \
        PTO_RUNTIME_ERR_INTERNAL
    assert ChipGroupError("close failed", {(1, 0): other}).code == PTO_RUNTIME_ERR_INTERNAL
