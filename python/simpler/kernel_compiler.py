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

``compile_many(compiler, jobs, max_workers=, progress=)`` (also ``compiler.compile_many``)
compiles many sources on a thread pool, reporting each as it finishes (``python -m simpler
compile`` uses it).
"""
from __future__ import annotations

import collections.abc
import concurrent.futures
import inspect
import math
import numbers
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, List, NoReturn, Optional, Sequence

from simpler import _log  # noqa: F401 - native log lines -> logging "simpler"
from simpler import _native
from simpler.errors import STATUS_CODES, SimplerError, SimplerTypeError, SimplerValueError
from simpler._ints import as_int, is_bool, require_bool
from simpler._typed_call import ClassSignature, typed_call, typed_methods

__all__ = ["KernelCompiler", "KernelCompileError", "KernelCacheError", "KernelBinary",
           "kernel_include_dir", "CompileJob", "CompileResult", "compile_many"]


class KernelCompileError(SimplerError, RuntimeError):
    """A kernel/orchestration did not compile, or its image lacks the required entry.

    ``str(err)`` says what failed (with the start of the compiler's output);
    ``err.stderr`` is the compiler's full output ('' when the compiler never ran).
    ``.code``: PTO_RUNTIME_ERR_INVALID_ARGUMENT (the source or image given was refused).
    """

    default_code = STATUS_CODES["PTO_RUNTIME_ERR_INVALID_ARGUMENT"]

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.stderr: str = stderr


class KernelCacheError(KernelCompileError):
    """The cache directory or an entry is owned by another user or writable by group/others,
    so nothing is read from it; the message says what to do (chmod 700 it, delete the
    entry, or choose another cache directory)."""


class KernelBinary(bytes):
    """A kernel image (``bytes``) plus ``core_type``: ``"aic"``, ``"aiv"`` or ``"mix"`` (a
    cluster task kernel, run on the AIC and AIV cores of whole clusters together)."""

    core_type: str

    def __new__(cls, image: bytes, core_type: str) -> "KernelBinary":
        obj = super().__new__(cls, image)
        obj.core_type = core_type
        return obj

    def __reduce__(self):  # pickles as itself, core type included
        return (KernelBinary, (bytes(self), self.core_type))


def _require_str(api: str, name: str, value: object) -> None:
    """A SimplerTypeError naming the parameter, not pybind11's "incompatible arguments"."""
    if not isinstance(value, str):
        raise SimplerTypeError(f"KernelCompiler.{api}: {name} must be a str, got "
                               f"{type(value).__name__}")


def _timeout_seconds(value: Any) -> float:
    """``timeout_seconds`` as a float: a Python or numpy number (an int too large for a
    float is inf: no limit, as any value above 10^9 s); a bool or a str is a
    SimplerTypeError (True would be a 1 s limit). The range is the native check's."""
    if not is_bool(value) and isinstance(value, numbers.Real):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    raise SimplerTypeError(f"KernelCompiler: timeout_seconds must be a number of seconds, "
                           f"got {type(value).__name__}")


def _check_options(given: "dict[str, Any]") -> None:
    """The options a caller gets wrong in ways pybind11 reports only as "incompatible
    constructor arguments": named, with what to pass. (Unknown keywords: pybind11's.)"""
    for name in ("cache_dir", "compiler"):
        value = given.get(name)
        if value is not None and not isinstance(value, (str, bytes, os.PathLike)):
            raise SimplerTypeError(f"KernelCompiler: {name} must be a path (str or os.PathLike) "
                                   f"or None, got {type(value).__name__}")
    for name, kinds, example in (("include_dirs", (str, bytes, os.PathLike), "['/path/to/headers']"),
                                 ("extra_flags", (str,), "['-DN=4']")):
        value = given.get(name, [])
        if (isinstance(value, (str, bytes)) or not isinstance(value, collections.abc.Sequence)
                or not all(isinstance(item, kinds) for item in value)):
            raise SimplerTypeError(f"KernelCompiler: {name} must be a list of "
                                   f"{'paths' if name == 'include_dirs' else 'str'} "
                                   f"(e.g. {name}={example}), got {value!r}")
    if "use_cache" in given:
        require_bool(given["use_cache"], "KernelCompiler: use_cache")


@typed_methods("KernelCompiler", exclude=("__init__",))  # __init__ checks its own call
class KernelCompiler(_native.KernelCompiler):
    """Compiles kernel and orchestration sources (see docs/kernels.md); cached by content.

    ``KernelCompiler(cache_dir=None, *, compiler=None, include_dirs=[], extra_flags=[],
    use_cache=True, timeout_seconds=0)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "timeout_seconds" in kwargs:
            kwargs["timeout_seconds"] = _timeout_seconds(kwargs["timeout_seconds"])
        _check_options({**dict(zip(("cache_dir",), args)), **kwargs})
        try:
            super().__init__(*args, **kwargs)
        except TypeError as error:
            if isinstance(error, SimplerError):
                raise
            # pybind11's "incompatible constructor arguments" (an unknown keyword, a
            # non-path cache_dir): its text lists the accepted signature.
            raise SimplerTypeError(f"KernelCompiler: {error}") from None

    def compile_kernel(self, source: str, core_type: str = "aiv") -> KernelBinary:
        """Kernel image bytes for ``core_type`` ('aic', 'aiv' or 'mix'), tagged with that core type.

        The source must export ``extern "C" void kernel_entry(int64_t*)``.
        """
        _require_str("compile_kernel", "source", source)
        _require_str("compile_kernel", "core_type", core_type)
        image = super().compile_kernel(source, core_type)
        return KernelBinary(image, str(core_type).lower())

    def compile_orchestration(self, source: str, entry: Optional[str] = None) -> bytes:
        """Orchestration image bytes; when ``entry`` is given the image must export it."""
        _require_str("compile_orchestration", "source", source)
        if entry is not None:
            _require_str("compile_orchestration", "entry", entry)
            if not entry:  # it would check nothing: the image was accepted without an entry
                raise SimplerValueError("KernelCompiler.compile_orchestration: entry must name "
                                        "the exported function (or be None to check none), "
                                        "got ''")
        return super().compile_orchestration(source, entry)

    def __reduce_ex__(self, protocol: Any) -> NoReturn:  # pickle, copy.copy, copy.deepcopy
        raise SimplerTypeError("KernelCompiler cannot be pickled or copied (its include_dirs and "
                               "extra_flags are not kept where Python can read them back); make "
                               "one with the same arguments where you need it: the content "
                               "cache on disk is shared")

    def __repr__(self) -> str:
        return (f"<simpler.KernelCompiler compiler={self.compiler!r} cache_dir="
                f"{self.cache_dir if self.use_cache else None!r}>")

    def compile_many(self, jobs: "Sequence[CompileJob]", *, max_workers: Optional[int] = None,
                     progress: "Optional[ProgressCallback]" = None) -> "List[CompileResult]":
        """Compiles many sources on a thread pool; see :func:`compile_many`."""
        return compile_many(self, jobs, max_workers=max_workers, progress=progress)


# inspect.signature(KernelCompiler): the native constructor's (docs/kernels.md), not the
# (*args, **kwargs) of the __init__ above, which only forwards them.
_P = inspect.Parameter
KernelCompiler.__signature__ = ClassSignature(KernelCompiler, inspect.Signature(  # type: ignore[attr-defined]
    [_P("cache_dir", _P.POSITIONAL_OR_KEYWORD, default=None)]
    + [_P(name, _P.KEYWORD_ONLY, default=default) for name, default in (
        ("compiler", None), ("include_dirs", []), ("extra_flags", []), ("use_cache", True),
        ("timeout_seconds", 0.0))]))


kernel_include_dir = _native.kernel_include_dir


@typed_methods("CompileJob")
@dataclass(frozen=True)
class CompileJob:
    """One source to compile: ``kind`` is ``"aic"``/``"aiv"`` (a kernel) or
    ``"orchestration"`` (then ``entry``, when given, must be exported). ``name`` labels
    the job in progress lines and results (default: ``"<kind> #<index>"``)."""

    source: str
    kind: str = "aiv"
    entry: Optional[str] = None
    name: Optional[str] = None


@dataclass(frozen=True)
class CompileResult:
    """The outcome of one :class:`CompileJob`: ``image`` (bytes) or ``error``."""

    job: CompileJob
    index: int
    image: Optional[bytes]
    error: Optional[BaseException]
    seconds: float

    @property
    def ok(self) -> bool:
        return self.error is None


ProgressCallback = Callable[[CompileResult, int, int], None]


def _kind_of(job: CompileJob) -> str:
    kind = job.kind.lower()
    if kind not in ("aic", "aiv", "mix", "orchestration"):
        raise SimplerValueError(f"compile job {job.name or job.source[:40]!r}: kind must be 'aic', "
                                f"'aiv', 'mix' or 'orchestration', got {job.kind!r}")
    return kind


@typed_call("compile_many")
def compile_many(compiler: "KernelCompiler", jobs: Sequence[CompileJob], *,
                 max_workers: Optional[int] = None,
                 progress: Optional[ProgressCallback] = None) -> List[CompileResult]:
    """Compiles ``jobs`` on a thread pool (the compiler runs without the GIL).

    Returns one :class:`CompileResult` per job, in the order of ``jobs``; a failed job
    carries its :class:`KernelCompileError` in ``.error`` and the others still compile.
    ``progress(result, done, total)`` is called as each job finishes (on the calling
    thread). ``max_workers`` defaults to the number of CPUs. Every job's kind is checked
    before anything compiles (ValueError naming the job).
    """
    if not isinstance(jobs, collections.abc.Iterable) or isinstance(jobs, (str, bytes)):
        raise SimplerTypeError(f"compile_many: jobs must be a sequence of CompileJob, "
                               f"got {type(jobs).__name__}")
    jobs = list(jobs)
    for i, job in enumerate(jobs):
        if not isinstance(job, CompileJob):
            raise SimplerTypeError(f"compile_many: jobs[{i}] must be a CompileJob, "
                                   f"got {type(job).__name__}")
    kinds = [_kind_of(job) for job in jobs]
    if max_workers is not None:
        count = as_int(max_workers)  # numpy integers too; not a bool
        if count is None:
            raise SimplerTypeError(f"compile_many: max_workers must be an int or None, "
                                   f"got {type(max_workers).__name__}")
        if count < 1:
            raise SimplerValueError(f"max_workers must be >= 1, got {count}")
        max_workers = count
    if progress is not None and not callable(progress):
        raise SimplerTypeError(f"compile_many: progress must be callable or None, "
                               f"got {type(progress).__name__}")
    workers = max_workers or os.cpu_count() or 1

    def run(index: int) -> CompileResult:
        job, kind = jobs[index], kinds[index]
        start = time.perf_counter()
        try:
            if kind == "orchestration":
                image = compiler.compile_orchestration(job.source, entry=job.entry)
            else:
                image = compiler.compile_kernel(job.source, kind)
            return CompileResult(job, index, image, None, time.perf_counter() - start)
        except Exception as e:  # noqa: BLE001 - reported per job, the others go on
            return CompileResult(job, index, None, e, time.perf_counter() - start)

    results: List[Optional[CompileResult]] = [None] * len(jobs)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run, i) for i in range(len(jobs))]
        for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
            result = future.result()
            results[result.index] = result
            if progress is not None:
                progress(result, done, len(jobs))
    return [r for r in results if r is not None]
