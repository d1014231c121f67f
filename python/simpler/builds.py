"""Locating the installed runtime build for (platform, runtime).

Thin layer over the C++ locator (include/simpler/worker/runtime_build.h). The layout is
``<lib_dir>/libsimpler_sim.so`` and ``<lib_dir>/runtimes/<platform>/<runtime>/libhost_runtime.so``;
``lib_dir`` defaults to ``$SIMPLER_LIB_DIR`` or the lib/ directory of the build.
"""
from __future__ import annotations

import os
from typing import List, Optional, Union

from simpler import _log  # noqa: F401 - native log lines -> logging "simpler"
from simpler import _native
from simpler._typed_call import typed_functions as _typed_functions
from simpler.errors import SimplerTypeError

RuntimeBins = _native.RuntimeBins

__all__ = ["RuntimeBins", "find_build", "known_platforms", "known_runtimes", "default_lib_dir"]


def known_platforms() -> List[str]:
    """``["a2a3sim", "a2a3"]``; only the simulator is built here."""
    return list(_native.known_platforms())


def known_runtimes() -> List[str]:
    """``["tensormap_and_ringbuffer", "host_build_graph"]``."""
    return list(_native.known_runtimes())


def default_lib_dir() -> str:
    """``$SIMPLER_LIB_DIR`` if set, else the lib/ directory of the build."""
    return _native.default_lib_dir()


def find_build(platform: str, runtime: str,
               lib_dir: Optional[Union[str, "os.PathLike[str]"]] = None) -> RuntimeBins:
    """The files of the runtime build for ``platform`` and ``runtime``.

    Raises ValueError for an unknown platform or runtime (listing the valid ones) and for
    ``platform="a2a3"`` (real hardware needs a CANN build; this one has only ``a2a3sim``),
    FileNotFoundError naming the path of a missing file.
    """
    for name, value in (("platform", platform), ("runtime", runtime)):
        if not isinstance(value, str):
            raise SimplerTypeError(f"simpler.find_build: {name} must be a str, "
                                   f"got {type(value).__name__}")
    if lib_dir is not None and not isinstance(lib_dir, (str, os.PathLike)):
        raise SimplerTypeError(f"simpler.find_build: lib_dir must be a path (str or "
                               f"os.PathLike) or None, got {type(lib_dir).__name__}")
    return _native.find_runtime_build(platform, runtime, lib_dir)


_typed_functions(globals(), "simpler", ["find_build", "known_platforms", "known_runtimes",
                                        "default_lib_dir"])
