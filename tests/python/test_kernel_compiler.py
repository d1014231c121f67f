"""simpler.KernelCompiler: images, core types, typed compile errors, the content cache."""
from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest

import simpler
from simpler.kernel_compiler import KernelCompileError, KernelCompiler

ADD_ONE = r"""
#include "simpler/kernel/kernel_abi.h"
extern "C" void kernel_entry(int64_t* args) {
  float* x = (float*)simpler_tensor_data(simpler_tensor_arg(args, 0), sizeof(float));
  x[0] += 1.0f;
}
"""

CORE_MARKER = r"""
#include "simpler/kernel/kernel_abi.h"
#if defined(SIMPLER_KERNEL_AIC)
extern "C" int core_marker() { return 100; }
#elif defined(SIMPLER_KERNEL_AIV)
extern "C" int core_marker() { return 200; }
#endif
extern "C" void kernel_entry(int64_t* args) { (void)args; }
"""

ORCHESTRATION = r"""
#include "simpler/orch/orchestration_api.h"
extern "C" int my_orchestration(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult result;
  return simpler::orch::Task(api, 0, SIMPLER_CORE_AIV).inout(args->tensors[0]).submit(&result);
}
"""


def load(image: bytes, tmp_path, name: str) -> ctypes.CDLL:
    path = tmp_path / f"{name}.so"
    path.write_bytes(image)
    return ctypes.CDLL(str(path), mode=os.RTLD_LOCAL)


def test_public_names():
    assert simpler.KernelCompiler is KernelCompiler
    assert simpler.KernelCompileError is KernelCompileError
    assert issubclass(KernelCompileError, RuntimeError)


def test_kernel_image_is_built_for_its_core_type(tmp_path):
    compiler = KernelCompiler(tmp_path / "cache")
    aiv = compiler.compile_kernel(CORE_MARKER)  # default core type: aiv
    aic = compiler.compile_kernel(CORE_MARKER, "AIC")
    assert isinstance(aiv, bytes) and aiv.startswith(b"\x7fELF")
    assert load(aiv, tmp_path, "aiv").core_marker() == 200
    assert load(aic, tmp_path, "aic").core_marker() == 100


def test_unknown_core_type_is_a_value_error(tmp_path):
    compiler = KernelCompiler(tmp_path / "cache")
    with pytest.raises(ValueError, match="'aic'.*'aiv'.*'cube'"):
        compiler.compile_kernel(ADD_ONE, "cube")
    assert compiler.stats["compiler_runs"] == 0


def test_compile_error_carries_the_compiler_output(tmp_path):
    compiler = KernelCompiler(tmp_path / "cache")
    with pytest.raises(KernelCompileError) as err:
        compiler.compile_kernel('extern "C" void kernel_entry(long* a) { undeclared_name(a); }')
    assert "undeclared_name" in err.value.stderr
    assert "compilation failed" in str(err.value)
    assert "undeclared_name" in str(err.value)
    cache = tmp_path / "cache"
    assert not cache.exists() or not any(cache.iterdir())  # failures are never cached


def test_kernel_without_entry_is_refused_naming_it(tmp_path):
    compiler = KernelCompiler(tmp_path / "cache")
    with pytest.raises(KernelCompileError, match="kernel_entry"):
        compiler.compile_kernel('extern "C" void kernel_main(long* a) { (void)a; }')


def test_orchestration_entry_is_checked(tmp_path):
    compiler = KernelCompiler(tmp_path / "cache")
    image = compiler.compile_orchestration(ORCHESTRATION, entry="my_orchestration")
    assert hasattr(load(image, tmp_path, "orch"), "my_orchestration")
    with pytest.raises(KernelCompileError, match="'orchestrate'"):
        compiler.compile_orchestration(ORCHESTRATION, entry="orchestrate")


def test_rerun_is_served_from_the_cache(tmp_path):
    cache = tmp_path / "cache"
    compiler = KernelCompiler(cache)
    first = compiler.compile_kernel(ADD_ONE, "aiv")
    second = compiler.compile_kernel(ADD_ONE, "aiv")
    assert first == second
    assert compiler.stats == {"compiler_runs": 1, "cache_hits": 1, "cache_write_failures": 0}
    # A new compiler over the same directory (a rerun of the program) never compiles.
    rerun = KernelCompiler(str(cache))
    assert rerun.compile_kernel(ADD_ONE, "aiv") == first
    assert rerun.stats["compiler_runs"] == 0 and rerun.stats["cache_hits"] == 1
    entries = sorted(p.name for p in cache.iterdir())
    assert len(entries) == 1 and entries[0].endswith(".kentry")  # no temp files left


def test_cache_dir_defaults_to_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMPLER_CACHE_DIR", str(tmp_path / "from-env"))
    assert KernelCompiler().cache_dir == str(tmp_path / "from-env")
    monkeypatch.delenv("SIMPLER_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert KernelCompiler().cache_dir == str(tmp_path / "home" / ".cache" / "simpler" / "kernels")


def test_disabled_cache_compiles_every_time(tmp_path):
    compiler = KernelCompiler(tmp_path / "cache", use_cache=False)
    compiler.compile_kernel(ADD_ONE)
    compiler.compile_kernel(ADD_ONE)
    assert compiler.stats["compiler_runs"] == 2
    assert not (tmp_path / "cache").exists()


def test_include_dirs_and_extra_flags(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "answer.h").write_text("#define ANSWER_BASE 40\n")
    compiler = KernelCompiler(tmp_path / "cache", include_dirs=[tmp_path / "inc"],
                              extra_flags=["-DANSWER_DELTA=2"])
    source = '#include "answer.h"\n' + CORE_MARKER.replace(
        "return 200;", "return ANSWER_BASE + ANSWER_DELTA;")
    assert load(compiler.compile_kernel(source), tmp_path, "answer").core_marker() == 42


def test_unrunnable_compiler(tmp_path):
    compiler = KernelCompiler(tmp_path / "cache", compiler="/nonexistent/c++")
    with pytest.raises(KernelCompileError, match="/nonexistent/c\\+\\+") as err:
        compiler.compile_kernel(ADD_ONE)
    assert err.value.stderr == ""


def test_cache_trust_and_header_edits(tmp_path):
    """Issue 13/16: an edited include is never served stale; a cache directory others can
    write is refused with a KernelCacheError saying what to do; new directories are 0700."""
    import os
    import stat

    from simpler.kernel_compiler import KernelCacheError

    include = tmp_path / "inc"
    include.mkdir()
    (include / "value.h").write_text("#define VALUE 1\n")
    source = ('#include "simpler/kernel/kernel_abi.h"\n#include "value.h"\n'
              'extern "C" void kernel_entry(int64_t* args) { (void)args; (void)VALUE; }\n')
    cache = tmp_path / "a" / "cache"
    compiler = KernelCompiler(cache, include_dirs=[include])
    first = compiler.compile_kernel(source, "aiv")
    (include / "value.h").write_text("#define VALUE 2 /* edited */\n")
    compiler.compile_kernel(source, "aiv")
    assert compiler.stats["compiler_runs"] == 2 and compiler.stats["cache_hits"] == 0
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / "a").st_mode) == 0o700
    os.chmod(cache, 0o777)
    with pytest.raises(KernelCacheError, match="chmod 700"):
        compiler.compile_kernel(source, "aiv")
    os.chmod(cache, 0o700)
    assert compiler.compile_kernel(source, "aiv") != b"" and first != b""


def test_compile_timeout_kills_the_compiler(tmp_path):
    hung = tmp_path / "hung-cc"
    hung.write_text("#!/bin/sh\nsleep 300 &\nwait\n")
    hung.chmod(0o755)
    compiler = KernelCompiler(tmp_path / "cache", compiler=hung, timeout_seconds=0.3)
    assert compiler.timeout_seconds == 0.3
    with pytest.raises(KernelCompileError, match="timed out"):
        compiler.compile_kernel(ADD_ONE, "aiv")
    with pytest.raises(ValueError, match="timeout_seconds"):
        KernelCompiler(tmp_path / "cache", timeout_seconds=-1)


def test_an_infinite_compile_timeout_means_no_limit(tmp_path, monkeypatch):
    """timeout_seconds=inf (or a huge value, also from the environment) overflowed the
    deadline and timed out at once; it now means no limit."""
    for value in (float("inf"), 1e300):
        compiler = KernelCompiler(tmp_path / "cache", use_cache=False, timeout_seconds=value)
        assert compiler.timeout_seconds >= 1e9
        assert compiler.compile_kernel(ADD_ONE, "aiv") != b""
    monkeypatch.setenv("SIMPLER_KERNEL_COMPILE_TIMEOUT", "inf")
    assert KernelCompiler(tmp_path / "cache").timeout_seconds >= 1e9
    with pytest.raises(ValueError, match="timeout_seconds"):
        KernelCompiler(tmp_path / "cache", timeout_seconds=float("nan"))


@pytest.mark.parametrize("kwargs, words", [
    ({"bogus": 1}, "incompatible constructor"),
    ({"cache_dir": 3}, "cache_dir must be a path"),
    ({"include_dirs": 5}, "include_dirs must be a list of paths")])
def test_constructor_arguments_that_do_not_fit_are_simpler_type_errors(kwargs, words):
    from simpler.errors import SimplerTypeError
    with pytest.raises(SimplerTypeError, match=f"KernelCompiler: .*{words}"):
        KernelCompiler(**kwargs)


@pytest.mark.parametrize("flag", [True, False, np.bool_(True)])
def test_timeout_seconds_is_a_number_not_a_bool(tmp_path, flag):
    """True was taken as a 1-second compile limit (docs/api.md: bools are not numbers)."""
    from simpler.errors import SimplerTypeError
    with pytest.raises(SimplerTypeError, match="timeout_seconds must be a number of seconds, got bool"):
        KernelCompiler(tmp_path / "cache", timeout_seconds=flag)
    assert KernelCompiler(tmp_path / "cache", timeout_seconds=np.float32(30)).timeout_seconds == 30


def test_timeout_seconds_past_a_floats_range_means_no_limit_and_a_str_is_named():
    # docs/kernels.md: "any value above 10^9 s means no limit"; 10**400 was pybind11's
    # "incompatible constructor arguments".
    from simpler.errors import SimplerTypeError
    assert KernelCompiler(timeout_seconds=10 ** 400).timeout_seconds == 1e9
    with pytest.raises(SimplerTypeError, match="timeout_seconds must be a number of seconds"):
        KernelCompiler(timeout_seconds="5")


def test_an_empty_orchestration_entry_is_refused_not_unchecked():
    from simpler.errors import SimplerValueError
    source = '#include "simpler/orch/orchestration_api.h"\nextern "C" int f() { return 0; }\n'
    with pytest.raises(SimplerValueError, match="entry must name"):
        KernelCompiler().compile_orchestration(source, entry="")


def test_options_of_the_wrong_type_are_named_with_what_to_pass():
    # Were pybind11's "incompatible constructor arguments" dump; use_cache="no" or 1 ran.
    from simpler.errors import SimplerTypeError
    for options, words in ((dict(include_dirs="/usr/include"), "include_dirs must be a list of paths"),
                           (dict(extra_flags="-O3"), r"extra_flags must be a list of str \(e.g."),
                           (dict(extra_flags=["-O2", 3]), "extra_flags must be a list of str"),
                           (dict(use_cache="no"), "use_cache must be True or False, got 'no'"),
                           (dict(use_cache=1), "use_cache must be True or False, got 1"),
                           (dict(cache_dir=5), "cache_dir must be a path"),
                           (dict(compiler=5), "compiler must be a path")):
        with pytest.raises(SimplerTypeError, match=words):
            KernelCompiler(**options)
    assert KernelCompiler(include_dirs=("/usr/include",), extra_flags=["-O2"],
                          use_cache=np.bool_(False)).use_cache is False
