"""Task-interface types: the data that crosses every simpler boundary.

Thin Python names over the C++ types of ``include/simpler/task/task_interface.h``
(bound in ``simpler._native.task_interface``); every rule is enforced once, in C++.

    DataType            element type; ``.element_size``, ``.name``, ``from_numpy`` / ``to_numpy``
    ArgDirection        SCALAR=0, IN=1, OUT=2, INOUT=3
    AddressSpace        HOST (staged by the runtime) / DEVICE (caller-owned device memory)
    ChipTensor          ``ChipTensor.make(ptr, shape, dtype)`` -> DEVICE tensor,
                        ``ChipTensor.from_array(array)`` -> HOST tensor (zero-copy);
                        ``.slice`` / ``.reshape`` / ``.transpose`` views
    ChipStorageTaskArgs tensors then scalars (64-bit patterns); keeps host memory alive
    CallConfig          diagnostics switches, output_prefix, thread count, ring sizes;
                        ``validate()`` raises ValueError
    ArgSpec             one signature entry: direction, optional dtype and rank
    CoreCallable        ``CoreCallable.build(signature, binary)``: one kernel image
                        (signature entries: ``D.IN``, ``(D.IN, DataType.FLOAT32)``,
                        ``(D.IN, DataType.FLOAT32, 2)`` or ``ArgSpec``)
    ChipCallable        ``ChipCallable.build(signature, func_name, binary, children)``;
                        ``ChipCallable.from_kernel(core_callable, block_num=1)``: one kernel,
                        its one-task orchestration generated

Bad input raises ValueError or TypeError whose message names the field.

Example::

    import numpy as np
    from simpler.task_interface import (ArgDirection, ChipCallable, ChipStorageTaskArgs,
                                        ChipTensor, CoreCallable)

    x = np.arange(16, dtype=np.float32)
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.from_array(x))
    args.add_scalar_f32(0.5)
    kernel = CoreCallable.build([ArgDirection.IN, ArgDirection.SCALAR], kernel_so_bytes)
    chip = ChipCallable.build([ArgDirection.IN, ArgDirection.SCALAR], "orch_entry",
                              orch_so_bytes, children=[(0, kernel)])
"""
from __future__ import annotations

import importlib
from typing import Any

from simpler import _native
from simpler import errors as _errors
from simpler.errors import ChipWorkerError, UnsupportedRuntimeOperation

# The host-runtime statuses, re-exported by name from the one list (simpler.errors).
_RUNTIME_STATUSES = {n: c for n, c in _errors.STATUS_CODES.items() if n.startswith("PTO_RUNTIME_ERR_")}
globals().update(_RUNTIME_STATUSES)
PTO_RUNTIME_ERR_BASE: int = _errors.PTO_RUNTIME_ERR_BASE

_ti = _native.task_interface

DataType = _ti.DataType
ArgDirection = _ti.ArgDirection
AddressSpace = _ti.AddressSpace
ChipTensor = _ti.ChipTensor
ChipStorageTaskArgs = _ti.ChipStorageTaskArgs
CallConfig = _ti.CallConfig
ArgSpec = _ti.ArgSpec
CoreCallable = _ti.CoreCallable
ChipCallable = _ti.ChipCallable

# ChipCallable.from_kernel(core_callable, block_num=1): a one-task program, no C++.
if not hasattr(ChipCallable, "from_kernel"):
    from simpler.single_kernel import from_kernel as _from_kernel
    ChipCallable.from_kernel = staticmethod(_from_kernel)

CHIP_TENSOR_MAX_DIMS: int = _ti.CHIP_TENSOR_MAX_DIMS
CHIP_MAX_TENSOR_ARGS: int = _ti.CHIP_MAX_TENSOR_ARGS
CHIP_MAX_SCALAR_ARGS: int = _ti.CHIP_MAX_SCALAR_ARGS
CHIP_MAX_SIGNATURE: int = _ti.CHIP_MAX_SIGNATURE
CHIP_MAX_FUNC_ID: int = _ti.CHIP_MAX_FUNC_ID
CHIP_MAX_FUNC_NAME: int = _ti.CHIP_MAX_FUNC_NAME
SIMPLER_OUTPUT_PREFIX_MAX: int = _ti.SIMPLER_OUTPUT_PREFIX_MAX

__all__ = [  # noqa: F822 (ChipWorker is loaded lazily, below)
    "DataType", "ArgDirection", "AddressSpace", "ChipTensor", "ChipStorageTaskArgs",
    "CallConfig", "ArgSpec", "CoreCallable", "ChipCallable", "ChipWorker", "ChipWorkerError",
    "UnsupportedRuntimeOperation",
    "CHIP_TENSOR_MAX_DIMS", "CHIP_MAX_TENSOR_ARGS", "CHIP_MAX_SCALAR_ARGS",
    "CHIP_MAX_SIGNATURE", "CHIP_MAX_FUNC_ID", "CHIP_MAX_FUNC_NAME", "SIMPLER_OUTPUT_PREFIX_MAX",
    "PTO_RUNTIME_ERR_BASE",
    *_RUNTIME_STATUSES,
]

# Loaded on first use: ChipWorker pulls in the worker layer, which plain type users don't need.
_LAZY = {"ChipWorker": ("simpler.chip_worker", "ChipWorker")}


def __getattr__(name: str) -> Any:
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'simpler.task_interface' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module_name), attr)
    globals()[name] = value
    return value
