"""Finding the native module of a source checkout's build (development use only).

An installed simpler carries ``_native*.so`` next to its ``__init__.py`` and never looks
elsewhere. A source checkout (``PYTHONPATH=python``) has no native module in
``python/simpler``: CMake builds it into ``<build>/python/simpler``. This module finds
that directory, ``$SIMPLER_BUILD_DIR`` if set, else the checkout's ``build/`` (relative to
this file), so that ``simpler._native`` can be imported from it. Nothing is written.
"""
from __future__ import annotations

import os
import pathlib
from typing import Optional

_PACKAGE_DIR = pathlib.Path(__file__).resolve().parent


def _has_native(directory: pathlib.Path) -> bool:
    return any(directory.glob("_native*.so"))


def native_dir() -> Optional[pathlib.Path]:
    """The directory to add to ``simpler.__path__``, or None when none is needed/found."""
    if _has_native(_PACKAGE_DIR):
        return None  # an installed package (or an in-place build): self-contained
    candidates = []
    configured = os.environ.get("SIMPLER_BUILD_DIR")
    if configured:
        candidates.append(pathlib.Path(configured))
    candidates.append(_PACKAGE_DIR.parent.parent / "build")  # <checkout>/python/simpler
    for build in candidates:
        directory = build / "python" / "simpler"
        if _has_native(directory):
            return directory
    return None
