"""docs/diagnostics.md: an orchestration's api->log line is a line of simpler's log,
`orch: <func_name>: <message>` on logger "simpler"; below WARNING only when asked. It said
`[simpler orch <func_name>] LEVEL: message` on stderr with INFO always written."""
from __future__ import annotations

import logging
import pathlib
import re

import simpler
from simpler import KernelCompiler, Worker, _log
from simpler.task_interface import ChipCallable, ChipStorageTaskArgs

ROOT = pathlib.Path(__file__).resolve().parents[2]
ORCH = r"""
#include "simpler/orch/orchestration_api.h"
extern "C" int chatty(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  (void)args;
  api->log(api->rt, SIMPLER_LOG_INFO, "an info line");
  api->log(api->rt, SIMPLER_LOG_WARN, "a warn line");
  return 0;
}
"""


def _run_and_collect(caplog) -> list:
    program = ChipCallable.build([], "chatty", KernelCompiler().compile_orchestration(
        ORCH, entry="chatty"), children=[])
    with Worker(level=2, device_id=0) as worker:
        worker.init()
        worker.run(worker.register(program), ChipStorageTaskArgs())
    _log.flush()
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "simpler"]


def test_an_orchestration_log_line_is_what_diagnostics_md_says(caplog, monkeypatch):
    monkeypatch.delenv("SIMPLER_LOG_LEVEL", raising=False)
    monkeypatch.delenv("SIMPLER_LOG", raising=False)
    text = " ".join((ROOT / "docs" / "diagnostics.md").read_text().split())
    documented = re.search(r"record message `([^`]+)`", text).group(1)
    want = (documented.replace("<func_name>", "chatty").replace("<message>", "a warn line"))
    caplog.set_level(logging.DEBUG, logger="simpler")
    simpler.set_log_level(logging.WARNING)
    try:
        lines = _run_and_collect(caplog)
        assert (logging.WARNING, want) in lines, lines
        assert not any("an info line" in m for _, m in lines), lines   # below WARNING: asked
        caplog.clear()
        simpler.set_log_level(logging.INFO)
        lines = _run_and_collect(caplog)
        assert (logging.INFO, want.replace("a warn line", "an info line")) in lines, lines
    finally:
        simpler.set_log_level(logging.WARNING)
