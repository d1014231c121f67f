"""README.md (and scripts/example.sh's comment) say how much of the build example.sh runs:
"N of the project's M build steps". The figures went stale (86 of 228 while ninja ran 124
of 323); they must stay within 10 % of what ninja counts for the default configuration."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIGURES = re.compile(r"\((\d+) of the project's (\d+) build\s+steps")


def _build() -> pathlib.Path:
    build = pathlib.Path(os.environ.get("SIMPLER_BUILD_DIR", ROOT / "build"))
    cache = build / "CMakeCache.txt"
    if shutil.which("ninja") is None or not (build / "build.ninja").exists():
        pytest.skip("needs a CMake/Ninja build directory")
    text = cache.read_text()
    if ("SIMPLER_BUILD_TESTS:BOOL=ON" not in text or "SIMPLER_BUILD_BENCH:BOOL=ON" not in text
            or re.search(r"^SIMPLER_SANITIZE:\w+=\w", text, re.M)):
        pytest.skip("not scripts/build.sh's default configuration")
    return build


def _steps(build: pathlib.Path, *targets: str) -> int:
    out = subprocess.run(["ninja", "-C", str(build), "-t", "commands", *targets],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    return len(out.splitlines())


@pytest.mark.parametrize("page", ["README.md", "scripts/example.sh"])
def test_the_build_step_counts_are_current(page):
    build = _build()
    found = FIGURES.search(" ".join((ROOT / page).read_text().split()))
    assert found, f"{page} no longer gives example.sh's build steps"
    example, total = int(found.group(1)), int(found.group(2))
    script = (ROOT / "scripts" / "example.sh").read_text()
    targets = ["simpler_native", *re.findall(r"--target=(simpler_rt_\w+)", script)]
    assert len(targets) == 3, targets
    for said, counted in ((example, _steps(build, *targets)), (total, _steps(build))):
        assert abs(said - counted) <= 0.1 * counted, f"{page} says {said}, ninja counts {counted}"
