"""`simpler info` after `bash scripts/example.sh` (which builds only simpler_native) said
level 4 was unavailable because "CMake found no MPI: install libopenmpi-dev", with MPI
installed. A missing simpler._mpi_native must say how to build it, not guess why."""
from __future__ import annotations

import sys

import pytest

import simpler
from simpler import cli


@pytest.fixture
def no_mpi_native(monkeypatch):
    monkeypatch.setitem(sys.modules, "simpler._mpi_native", None)   # import -> ImportError
    monkeypatch.delattr(simpler, "_mpi_native", raising=False)      # an earlier import's


def _says_what_to_do(reason: str) -> None:
    assert "found no MPI" not in reason, reason
    assert "scripts/build.sh" in reason and "libopenmpi-dev" in reason, reason


def test_info_names_the_build_step_when_the_mpi_module_is_missing(no_mpi_native):
    level4 = cli._level4()
    assert level4["available"] is False
    _says_what_to_do(level4["reason"])


def test_level4_import_error_names_the_build_step(no_mpi_native):
    from simpler.host import mpi
    with pytest.raises(ImportError) as raised:
        mpi._native()
    _says_what_to_do(str(raised.value))
