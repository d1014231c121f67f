"""The tools of issue 14 refuse hostile input with typed errors and the documented exit
statuses: set_log_level (docs/logging.md), trace summaries (docs/cli.md, docs/traces.md)."""
from __future__ import annotations

import json
import logging

import pytest

import simpler
from simpler import cli, trace
from simpler.errors import SimplerTypeError, SimplerValueError


@pytest.mark.parametrize("level, exc", [(None, SimplerTypeError), (2.5, SimplerTypeError),
                                        (True, SimplerTypeError), (-5, SimplerValueError),
                                        ("loud", SimplerValueError)])
def test_set_log_level_refuses_what_is_not_a_level(level, exc):
    before = logging.getLogger("simpler").level
    with pytest.raises(exc, match="level"):
        simpler.set_log_level(level)
    assert logging.getLogger("simpler").level == before     # nothing changed


def test_set_log_level_above_off_is_off_not_an_overflow():
    from simpler import _log, _native
    before = logging.getLogger("simpler").level
    try:
        simpler.set_log_level(10 ** 20)     # a valid logging level: nothing is logged
        assert _native.log.threshold() == _native.log.OFF
        assert logging.getLogger("simpler").level == 10 ** 20
    finally:
        simpler.set_log_level(before or logging.WARNING)
        _log._pinned_by_set_level = False


@pytest.mark.parametrize("event", [
    {"ph": "X", "ts": 1, "dur": 1, "pid": 1, "tid": [1]},      # unhashable core id
    {"ph": "X", "ts": "soon", "dur": 1, "pid": 1, "tid": 1},   # not a number
    {"ph": "X", "ts": 1e400, "dur": 1, "pid": 1, "tid": 1},    # infinite
    # These two summarized as a core busy -5 us (100 %) / a block at time 0.
    {"ph": "X", "ts": 1, "dur": -5, "pid": 1, "tid": 1},       # a negative duration
    {"ph": "X", "dur": 1, "pid": 1, "tid": 1},                 # no start time
])
def test_a_malformed_trace_event_is_bad_input_not_a_crash(tmp_path, capsys, event):
    path = tmp_path / "swimlane.json"
    path.write_text(json.dumps({"traceEvents": [event]}).replace("Infinity", "1e400"))
    with pytest.raises(SimplerValueError, match="not a swimlane trace"):
        trace.summarize(path)
    assert cli.main(["trace", str(path)]) == 2                # bad input, not "failed"
    assert "not a swimlane trace" in capsys.readouterr().err


def test_trace_help_prints_a_single_percent_sign(capsys):
    with pytest.raises(SystemExit):
        cli.main(["trace", "--help"])
    out = capsys.readouterr().out
    assert "busy % of" in out and "%%" not in out
