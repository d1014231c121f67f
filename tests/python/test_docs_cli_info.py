"""docs/cli.md shows `simpler info`'s output; its platform, runtime and device lines must be
what the command prints (`...` elides). It showed ABI 2.0 (the builds are 2.1) and a
"kernel mode" column the output did not align."""
from __future__ import annotations

import pathlib
import re

from simpler import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _documented_info() -> list:
    text = (ROOT / "docs" / "cli.md").read_text()
    block = re.search(r"```text\n\$ simpler info\n(.*?)^```", text, re.S | re.M).group(1)
    lines = block.splitlines()
    start = lines.index("platforms")
    end = next(i for i, line in enumerate(lines) if line.startswith("level 4"))
    return [line for line in lines[start:end] if line.strip() != "..."]


def test_the_documented_info_lines_are_what_info_prints(capsys):
    assert cli.main(["info"]) == 0
    printed = capsys.readouterr().out.splitlines()
    for line in _documented_info():
        pattern = re.compile(re.escape(line).replace(re.escape("..."), ".*"))
        assert any(pattern.fullmatch(p) for p in printed), (line, printed)
