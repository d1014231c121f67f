"""Every relative link of the user-facing pages resolves inside the repository, and its
#anchor names a heading of the target (GitHub's rule). docs/runtime-abi.md linked
../../shared/spec/kernel-mode.md, a file outside the checkout: dead in any clone."""
from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "examples" / "README.md",
         *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "src").glob("*/README.md"))]
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _anchors(text: str) -> set:
    headings = re.findall(r"^#+ (.*)$", FENCE.sub("", text), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    text = FENCE.sub("", page.read_text())
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        assert target.is_relative_to(ROOT) and target.exists(), f"{page.name}: {link}"
        if anchor and target.suffix == ".md":
            assert anchor in _anchors(target.read_text()), f"{page.name}: {link}"
