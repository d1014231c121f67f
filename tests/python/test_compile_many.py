"""simpler.compile_many: a thread pool over KernelCompiler with per-job results (in job
order), a progress callback per finished job, and input checked before compiling."""
from __future__ import annotations

import pathlib

import pytest

from simpler import CompileJob, KernelCompiler, KernelCompileError, compile_many

PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"


def test_results_in_job_order_with_progress(tmp_path):
    kernel = (PROGRAMS / "add_scalar_kernel.cpp").read_text()
    orch = (PROGRAMS / "add_scalar_orch.cpp").read_text()
    jobs = [CompileJob(kernel, "aiv", name="k1"), CompileJob("not c++", "aic", name="broken"),
            CompileJob(orch, "orchestration", entry="add_scalar_entry", name="o")]
    seen = []
    results = compile_many(KernelCompiler(tmp_path), jobs, max_workers=3,
                           progress=lambda r, done, total: seen.append((r.job.name, done, total)))
    assert [r.job.name for r in results] == ["k1", "broken", "o"]
    assert [r.index for r in results] == [0, 1, 2]
    assert results[0].ok and results[0].image.startswith(b"\x7fELF")
    assert not results[1].ok and isinstance(results[1].error, KernelCompileError)
    assert results[2].ok
    assert sorted(done for _, done, _ in seen) == [1, 2, 3] and {t for _, _, t in seen} == {3}


def test_bad_kind_is_refused_before_anything_compiles(tmp_path):
    compiler = KernelCompiler(tmp_path)
    with pytest.raises(ValueError, match="kind must be"):
        compile_many(compiler, [CompileJob("x", "aiv"), CompileJob("x", "gpu", name="g")])
    assert compiler.stats["compiler_runs"] == 0
    with pytest.raises(ValueError, match="max_workers"):
        compile_many(compiler, [], max_workers=0)


def test_arguments_of_the_wrong_type_are_typed_before_anything_compiles(tmp_path):
    from simpler.errors import SimplerTypeError, SimplerValueError
    compiler = KernelCompiler(tmp_path / "cache")
    job = CompileJob("int x;", "aiv")
    for call, words in (
            (lambda: compile_many(compiler, 5), "jobs must be a sequence of CompileJob, got int"),
            (lambda: compile_many(compiler, "aiv"), "jobs must be a sequence of CompileJob, got str"),
            (lambda: compile_many(compiler, [job, 5]), r"jobs\[1\] must be a CompileJob, got int"),
            (lambda: compile_many(compiler, [job], max_workers=True),
             "max_workers must be an int or None, got bool"),
            (lambda: compile_many(compiler, [job], max_workers=2.0),
             "max_workers must be an int or None, got float"),
            (lambda: compile_many(compiler, [job], progress="print"),
             "progress must be callable or None, got str")):
        with pytest.raises(SimplerTypeError, match=words):
            call()
    with pytest.raises(SimplerValueError, match="max_workers must be >= 1, got 0"):
        compile_many(compiler, [job], max_workers=0)
    import numpy as np
    assert compile_many(compiler, (), max_workers=np.int64(2)) == []
