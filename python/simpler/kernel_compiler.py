"""Compiling kernel and orchestration sources into simulator images.

``KernelCompiler`` is the C++ ``simpler::KernelCompiler`` (thin binding)::

    compiler = KernelCompiler()                      # cache: $SIMPLER_CACHE_DIR or ~/.cache/simpler/kernels
    kernel = compiler.compile_kernel(src, "aiv")     # bytes, must export kernel_entry
    orch = compiler.compile_orchestration(src, entry="my_orch")

Keyword options: ``compiler`` (default: the C++ compiler that built simpler),
``include_dirs``, ``extra_flags``, ``use_cache``. ``compiler.stats`` counts compiler runs
and cache hits. See docs/kernels.md for what the sources see.
"""
from __future__ import annotations

from simpler import _native

__all__ = ["KernelCompiler", "KernelCompileError", "kernel_include_dir"]


class KernelCompileError(RuntimeError):
    """A kernel/orchestration did not compile, or its image lacks the required entry.

    ``str(err)`` says what failed (with the start of the compiler's output);
    ``err.stderr`` is the compiler's full output ('' when the compiler never ran).
    """

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.stderr: str = stderr


KernelCompiler = _native.KernelCompiler
kernel_include_dir = _native.kernel_include_dir
