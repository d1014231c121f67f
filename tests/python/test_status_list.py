"""Every native status is listed once (abi/status.h) and Python derives its names from it."""
from __future__ import annotations

import pathlib
import re

import simpler
from simpler import errors, task_interface

_ROOT = pathlib.Path(simpler.__file__).resolve().parents[2]


def test_every_status_is_a_named_constant_with_a_meaning():
    codes = errors.STATUS_CODES
    assert len(codes) == len(set(codes.values())), "two statuses share a value"
    for name, code in codes.items():
        assert getattr(errors, name) == code
        assert errors.status_name(code) == name
        assert errors.status_meaning(code), name
    assert errors.PTO_RUNTIME_ERR_INVALID_ARGUMENT == -1004
    assert errors.SIM_ERR_BUSY == -2012
    assert errors.SIMPLER_CHIP_ERR_KERNEL_FAULT == -6
    assert errors.status_name(-1099) == "PTO_RUNTIME_ERR_UNKNOWN"
    assert errors.status_meaning(-1099) == ""


def test_task_interface_reexports_every_runtime_status():
    runtime = {n for n in errors.STATUS_CODES if n.startswith("PTO_RUNTIME_ERR_")}
    assert runtime <= set(task_interface.__all__)
    for name in runtime:
        assert getattr(task_interface, name) == errors.STATUS_CODES[name]


def test_no_status_value_is_written_outside_the_one_list():
    """A status name bound to a value anywhere but SIMPLER_STATUS_LIST is a second list."""
    sources = [p for d in ("include", "src", "python") for p in (_ROOT / d).rglob("*")
               if p.suffix in (".h", ".cpp", ".inc", ".py", ".pyi")]
    if not sources:  # an installed package without the source tree: nothing to scan
        return
    names = "|".join(errors.STATUS_CODES)
    definition = re.compile(rf"(#define\s+({names})\b|\b({names})\s*(:\s*int)?\s*=[^=])")
    offenders = []
    for path in sources:
        if path.name == "status.h":
            continue
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if definition.search(line):
                offenders.append(f"{path.relative_to(_ROOT)}:{lineno}: {line.strip()}")
    assert offenders == []
