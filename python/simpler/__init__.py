"""simpler: a task runtime for AI accelerator chips, on a simulated chip (platform a2a3sim).

Public entry points:
    simpler.Worker                      program mode (simpler owns the device) or kernel mode;
                                        Worker(level=3, device_ids=[...]): several chips
    simpler.host                        the levels above the chip (host orchestration)
    simpler.task_interface              ChipCallable, ChipStorageTaskArgs, CallConfig, ...
    simpler.sim                         the simulated device driver (devices, streams, memory)
    simpler.KernelCompiler              compile kernel/orchestration sources to images
    simpler.find_build(platform, runtime) -> RuntimeBins
    simpler.trace                       reading swimlane traces
    simpler.set_log_level(level)        native log lines go to logging.getLogger("simpler")
    simpler.__version__                 the version; `python -m simpler info` for the rest
"""
from __future__ import annotations

import importlib
from typing import Any, List

from simpler import _dev_build
from simpler._version import __version__  # noqa: F401 - re-exported

# A source checkout finds its native module in the CMake build (see _dev_build.py); an
# installed package has its own and ignores every build directory.
_native_dir = _dev_build.native_dir()
if _native_dir is not None:
    __path__.append(str(_native_dir))  # noqa: F821 - __path__ is set for packages

# Lazy so that `import simpler` stays cheap and each submodule loads only when used.
_LAZY = {
    "Worker": ("simpler.worker", "Worker"),
    "RunHandle": ("simpler.worker", "RunHandle"),
    "KernelLaunch": ("simpler.worker", "KernelLaunch"),
    "KernelCompiler": ("simpler.kernel_compiler", "KernelCompiler"),
    "KernelCompileError": ("simpler.kernel_compiler", "KernelCompileError"),
    "CompileJob": ("simpler.kernel_compiler", "CompileJob"),
    "compile_many": ("simpler.kernel_compiler", "compile_many"),
    "RuntimeBins": ("simpler.builds", "RuntimeBins"),
    "find_build": ("simpler.builds", "find_build"),
    "SimplerError": ("simpler.errors", "SimplerError"),
    "task_interface": ("simpler.task_interface", None),
    "sim": ("simpler.sim", None),
    "errors": ("simpler.errors", None),
    "host": ("simpler.host", None),
    "builds": ("simpler.builds", None),
    "trace": ("simpler.trace", None),
    "set_log_level": ("simpler._log", "set_level"),
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'simpler' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    """The public names (lazy ones included, before they are loaded) and __version__."""
    return sorted([*__all__, "__version__"])
