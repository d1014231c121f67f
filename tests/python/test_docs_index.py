"""README.md's "Documentation" list names every page of docs/ (docs/faults.md was missing:
a new user found the fault model only through links from other pages)."""
from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_readme_lists_every_docs_page():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Documentation"):]
    listed = set(re.findall(r"`docs/([\w-]+\.md)`", section))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages - listed == set(), sorted(pages - listed)
