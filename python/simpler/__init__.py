"""simpler: a task runtime for AI accelerator chips, on a simulated chip (platform a2a3sim).

Public entry points:
    simpler.Worker                      program mode (simpler owns the device) or kernel mode;
                                        Worker(level=3, device_ids=[...]): several chips
    simpler.host                        the levels above the chip (host orchestration)
    simpler.task_interface              ChipCallable, ChipStorageTaskArgs, CallConfig, ...
    simpler.sim                         the simulated device driver (devices, streams, memory)
    simpler.KernelCompiler              compile kernel/orchestration sources to images
    simpler.find_build(platform, runtime) -> RuntimeBins
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Worker", "RunHandle", "KernelLaunch", "KernelCompiler", "RuntimeBins", "find_build",
           "task_interface", "sim", "errors", "host"]

# Lazy so that `import simpler` stays cheap and each submodule loads only when used.
_LAZY = {
    "Worker": ("simpler.worker", "Worker"),
    "RunHandle": ("simpler.worker", "RunHandle"),
    "KernelLaunch": ("simpler.worker", "KernelLaunch"),
    "KernelCompiler": ("simpler.kernel_compiler", "KernelCompiler"),
    "KernelCompileError": ("simpler.kernel_compiler", "KernelCompileError"),
    "RuntimeBins": ("simpler.builds", "RuntimeBins"),
    "find_build": ("simpler.builds", "find_build"),
    "task_interface": ("simpler.task_interface", None),
    "sim": ("simpler.sim", None),
    "errors": ("simpler.errors", None),
    "host": ("simpler.host", None),
}


def __getattr__(name: str) -> Any:
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'simpler' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value
