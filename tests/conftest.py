"""Options shared by the Python test folders.

``pytest tests/scenes --rounds N`` runs every scene N times and reports per-round times.

The default (1 round) is the plain correctness check the README's test command runs."""
from __future__ import annotations

import statistics
from typing import List, Tuple

import pytest

_TIMINGS: List[Tuple[str, List[float]]] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--rounds", type=int, default=1, metavar="N",
                     help="scenes: runs per scene/runtime/mode/dtype; per-round times are "
                          "reported at the end (a benchmark mode, not a timed test)")


@pytest.fixture
def rounds(request: pytest.FixtureRequest) -> int:
    count = request.config.getoption("--rounds")
    if count < 1:
        raise pytest.UsageError(f"--rounds must be at least 1, got {count}")
    return count


@pytest.fixture
def record_round_times(request: pytest.FixtureRequest):
    """Called with the seconds of each round; kept for the end-of-run report."""
    def record(seconds: List[float]) -> None:
        _TIMINGS.append((request.node.name, list(seconds)))
    return record


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if config.getoption("--rounds") <= 1 or not _TIMINGS:
        return
    terminalreporter.section("scene round times")
    terminalreporter.write_line(f"{'test':64} {'rounds':>6} {'median ms':>10} {'min ms':>8}")
    for name, seconds in _TIMINGS:
        terminalreporter.write_line(f"{name:64} {len(seconds):6} "
                                    f"{statistics.median(seconds) * 1e3:10.2f} "
                                    f"{min(seconds) * 1e3:8.2f}")
