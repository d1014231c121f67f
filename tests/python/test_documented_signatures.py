"""inspect.signature of the public names matches the signatures the docs print: the same
parameters, of the same kind (positional / keyword-only / *args), with the documented
defaults. The docs' signatures are read from the pages themselves, so an edit on either
side that makes them disagree fails here."""
from __future__ import annotations

import ast
import inspect
import pathlib
import re

import pytest

from simpler import KernelCompiler, RunHandle, Worker, find_build, sim
from simpler.chip_worker import ChipWorker
from simpler.host import HostOrchestrator, HostWorker
from simpler.host.mpi import MpiWorker

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
_KIND = {"args": inspect.Parameter.POSITIONAL_OR_KEYWORD, "kwonlyargs": inspect.Parameter.KEYWORD_ONLY}


def _documented(text: str) -> list:
    """``name(a, b=1, *, c)`` as printed -> [(name, kind, default or empty)]; a ``...``
    stands for parameters the page does not list and is dropped."""
    params = text[text.index("(") + 1:text.rindex(")")]
    params = ", ".join(p for p in (s.strip() for s in params.split(",")) if p and p != "...")
    args = ast.parse(f"def _({params}): pass").body[0].args
    out = []
    for field in ("args", "kwonlyargs"):
        items = getattr(args, field)
        defaults = (args.defaults if field == "args" else args.kw_defaults)
        defaults = [None] * (len(items) - len(defaults)) + list(defaults)
        for arg, default in zip(items, defaults):
            value = inspect.Parameter.empty if default is None else ast.literal_eval(default)
            out.append((arg.arg, _KIND[field], value))
        if field == "args" and args.vararg is not None:
            out.append((args.vararg.arg, inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.empty))
    return out


def _check(obj, text: str) -> None:
    actual = {n: p for n, p in inspect.signature(obj).parameters.items() if n != "self"}
    positional = [n for n, p in actual.items() if p.kind == p.POSITIONAL_OR_KEYWORD]
    documented = _documented(text)
    doc_positional = [n for n, kind, _ in documented if kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional[:len(doc_positional)] == doc_positional, (text, inspect.signature(obj))
    for name, kind, default in documented:
        assert name in actual, f"{text}: {name!r} not in {inspect.signature(obj)}"
        assert actual[name].kind == kind, f"{text}: {name!r} is {actual[name].kind}"
        if default is not inspect.Parameter.empty:
            assert actual[name].default == default, f"{text}: {name}={actual[name].default!r}"


def _signature_blocks(page: str) -> dict:
    """The ``Worker(level=N, ...)`` signature blocks of a page, by level."""
    blocks = re.findall(r"```python no-run\n(Worker\(level=(\d).*?\))\n```",
                        (DOCS / page).read_text(), re.S)
    return {int(level): text for text, level in blocks}


def test_the_worker_constructors_take_what_api_md_prints():
    blocks = _signature_blocks("api.md")
    assert sorted(blocks) == [2, 3, 4]
    # Worker(...) is one name for three classes: inspect shows the level-2 call, the
    # subclasses Worker(level=3/4) returns show theirs.
    for level, cls in ((2, Worker), (3, HostWorker), (4, MpiWorker)):
        _check(cls, blocks[level])


# (page, the signature as the page prints it, the object it describes)
INLINE = [
    ("api.md", "init(prewarm_config=None)", HostWorker.init),
    ("api.md", "run(fn, args=None, config=None)", HostWorker.run),
    ("api.md", "submit(fn, args=None, config=None)", HostWorker.submit),
    ("api.md", "copy_to(dst, src, nbytes=None, *, device_id)", HostWorker.copy_to),
    ("api.md", "copy_from(dst, src, nbytes=None, *, device_id)", HostWorker.copy_from),
    ("api.md", "committed_device_memory(device_id=None)", HostWorker.committed_device_memory),
    ("api.md", "orch.submit(handle, *args, chip=None)", HostOrchestrator.submit),
    ("api.md", 'all_reduce(tensors, op="sum", *, chips, dtype)', HostOrchestrator.all_reduce),
    ("api.md", 'reduce_scatter(inputs, outputs, op="sum", ...)', HostOrchestrator.reduce_scatter),
    ("api.md", "broadcast(tensors, root=0, ...)", HostOrchestrator.broadcast),
    ("api.md", "w.init(prewarm_config=None)", Worker.init),
    ("api.md", "run.wait(timeout=None)", RunHandle.wait),
    ("api.md", "run.result(timeout=None)", RunHandle.result),
    ("api.md", "make_tensor_arg(buf_or_array, shape=None, dtype=None)", Worker.make_tensor_arg),
    ("api.md", "cw.init(device_id, bins, prewarm_config=None)", ChipWorker.init),
    ("kernel-mode.md", "kernel_launch(callable_id, *args, caller_stream)", Worker.kernel_launch),
    ("kernel-mode.md", "kernel_bind(callable_id, *args)", Worker.kernel_bind),
    ("kernel-mode.md", "init(*, config)", Worker.init),
    ("kernels.md", "simpler.find_build(platform, runtime, lib_dir=None)", find_build),
    ("sim-driver.md", "memcpy_htod(dst_ptr, src, nbytes=None)", sim.memcpy_htod),
    ("sim-driver.md", "memcpy_dtoh(dst, src_ptr, nbytes=None)", sim.memcpy_dtoh),
    ("sim-driver.md", "inject_fault(op, count=1, status=0)", sim.inject_fault),
    ("sim-driver.md", 'sim.DeviceArray(shape, dtype="float32", *, stream=None)', sim.DeviceArray),
]


@pytest.mark.parametrize("page, text, obj", INLINE, ids=[t.split("(")[0] + "@" + p for p, t, _ in INLINE])
def test_inline_signatures_match(page, text, obj):
    printed = " ".join((DOCS / page).read_text().split())   # as wrapped on the page
    assert text in printed, f"{page} no longer prints {text!r}"
    if text.startswith("make_tensor_arg"):
        text = text.replace("buf_or_array", "array")   # the page names what it takes
    _check(obj, text)


def test_the_kernel_compiler_shows_its_constructor():
    # Its __init__ only forwards (*args, **kwargs) to the native one: inspect showed that.
    params = inspect.signature(KernelCompiler).parameters
    assert list(params) == ["cache_dir", "compiler", "include_dirs", "extra_flags", "use_cache",
                            "timeout_seconds"]
    assert params["cache_dir"].kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert params["use_cache"].default is True and params["cache_dir"].default is None
    native = KernelCompiler.__mro__[1].__init__.__doc__
    for name in params:
        assert f"{name}:" in native, name                 # the native constructor's names
