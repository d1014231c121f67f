"""Shared by the examples: build a chip program from its sources, time steps, report.

Every example folder holds its kernels (kernels/*.cpp), its orchestration
(orchestration.cpp) and a short main.py that imports this module.
"""
from __future__ import annotations

import pathlib
import time
from typing import Dict, NamedTuple, Optional, Sequence

from simpler import KernelCompiler
from simpler.task_interface import ArgDirection, ChipCallable, CoreCallable


class Kernel(NamedTuple):
    """One child kernel of a chip program."""
    func_id: int                       # the id the orchestration submits it under
    source: str                        # path relative to the example folder
    core_type: str                     # "aic" (cube) or "aiv" (vector)
    signature: Sequence[ArgDirection]  # tensors first, then scalars


def build_chip_program(folder: pathlib.Path, *, orchestration: str, entry: str,
                       signature: Sequence[ArgDirection], kernels: Sequence[Kernel],
                       compiler: Optional[KernelCompiler] = None) -> ChipCallable:
    """Compiles the orchestration and its kernels (cached) into one ChipCallable."""
    compiler = compiler or KernelCompiler()
    children = []
    for kernel in kernels:
        binary = compiler.compile_kernel((folder / kernel.source).read_text(), kernel.core_type)
        children.append((kernel.func_id, CoreCallable.build(list(kernel.signature), binary)))
    binary = compiler.compile_orchestration((folder / orchestration).read_text(), entry=entry)
    return ChipCallable.build(list(signature), entry, binary, children=children)


class Stopwatch:
    """``with Stopwatch() as t: ...`` then ``t.seconds``."""

    def __enter__(self) -> "Stopwatch":
        self._start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self._start


def format_seconds(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1.0 else f"{seconds:.2f} s"


def report(example: str, what: str, ok: bool, timings: Dict[str, float], detail: str = "") -> int:
    """Prints the one line the example is judged by; returns the process exit code."""
    took = ", ".join(f"{name} {format_seconds(s)}" for name, s in timings.items())
    verdict = "OK" if ok else "MISMATCH"
    print(f"{example}: checked {what}: {verdict} ({took}){': ' + detail if detail else ''}")
    return 0 if ok else 1
