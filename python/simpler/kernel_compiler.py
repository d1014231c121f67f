"""Compiling kernel and orchestration sources into simulator images.

``KernelCompiler`` is the C++ ``simpler::KernelCompiler`` (thin binding)::

    compiler = KernelCompiler()                      # cache: $SIMPLER_CACHE_DIR or ~/.cache/simpler/kernels
    kernel = compiler.compile_kernel(src, "aiv")     # KernelBinary (bytes), must export kernel_entry
    orch = compiler.compile_orchestration(src, entry="my_orch")

``compile_kernel`` returns a :class:`KernelBinary`: ``bytes`` that remember the core type
they were compiled for, so ``CoreCallable.build(signature, kernel)`` records it.
Keyword options: ``compiler`` (default: the C++ compiler that built simpler),
``include_dirs``, ``extra_flags``, ``use_cache``, ``timeout_seconds`` (0: the
``$SIMPLER_KERNEL_COMPILE_TIMEOUT`` seconds, else 120; the compiler's process group is
killed when it expires). ``compiler.stats`` counts compiler runs and cache hits. See
docs/kernels.md for what the sources see and how the cache is kept safe.
"""
from __future__ import annotations

from simpler import _native
from simpler.errors import SimplerError

__all__ = ["KernelCompiler", "KernelCompileError", "KernelCacheError", "KernelBinary",
           "kernel_include_dir"]


class KernelCompileError(SimplerError, RuntimeError):
    """A kernel/orchestration did not compile, or its image lacks the required entry.

    ``str(err)`` says what failed (with the start of the compiler's output);
    ``err.stderr`` is the compiler's full output ('' when the compiler never ran).
    """

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.stderr: str = stderr


class KernelCacheError(KernelCompileError):
    """The cache directory or an entry is owned by another user or writable by group/others,
    so nothing is read from it; the message says what to do (chmod 700 it, delete the
    entry, or choose another cache directory)."""


class KernelBinary(bytes):
    """A kernel image (``bytes``) plus ``core_type``: ``"aic"`` or ``"aiv"``."""

    core_type: str

    def __new__(cls, image: bytes, core_type: str) -> "KernelBinary":
        obj = super().__new__(cls, image)
        obj.core_type = core_type
        return obj

    def __reduce__(self):  # pickles as itself, core type included
        return (KernelBinary, (bytes(self), self.core_type))


class KernelCompiler(_native.KernelCompiler):
    """Compiles kernel and orchestration sources (see docs/kernels.md); cached by content."""

    def compile_kernel(self, source: str, core_type: str = "aiv") -> KernelBinary:
        """Kernel image bytes for ``core_type`` ('aic' or 'aiv'), tagged with that core type.

        The source must export ``extern "C" void kernel_entry(int64_t*)``.
        """
        image = super().compile_kernel(source, core_type)
        return KernelBinary(image, str(core_type).lower())


kernel_include_dir = _native.kernel_include_dir
