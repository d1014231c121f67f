"""Docs are code (issue 17, item 1): every fenced block of README.md and docs/*.md runs.

* A ```python block runs as written in a fresh temporary directory (not the repository
  root), with ``simpler`` importable, each block on its own. A block that must not run is
  fenced ```python no-run and says why: in the prose just before it, in a comment on its
  first lines, or in a note on its page about the page's no-run blocks.
* A ```cpp block is a translation unit: it compiles against simpler's headers (include
  what you use). A deliberate fragment is fenced ```cpp fragment. A ```c block compiles as
  C11 the same way.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
REASON_WORDS = ("not run", "no-run", "cannot run", "can't run", "not runnable", "sketch",
                "needs ", "requires ", "placeholder", "fragment", "illustrat", "pseudo")


def _blocks(kind: str):
    """(doc, line, info, body) of every fenced block whose language is `kind`."""
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for m in FENCE.finditer(text):
            info = m.group(1).strip()
            if (info.split()[0] if info else "") != kind:
                continue
            line = text.count("\n", 0, m.start()) + 1
            out.append((doc, line, info, m.group(2), text[:m.start()]))
    return out


def _prose(text: str) -> str:
    """The page without its fenced blocks."""
    return FENCE.sub("", text)


def _id(block) -> str:
    doc, line, info, _, _ = block
    return f"{doc.relative_to(ROOT)}:{line}"


PYTHON = _blocks("python")
CPP = _blocks("cpp")
C = _blocks("c")


def test_the_docs_have_blocks_to_check():
    assert len(PYTHON) >= 5 and len(CPP) >= 3


@pytest.mark.parametrize("block", PYTHON, ids=_id)
def test_python_block_runs_as_written(block, tmp_path):
    doc, line, info, body, before = block
    if "no-run" in info.split():
        prose = before.rstrip().rsplit("```", 1)[-1][-600:].lower()
        comments = " ".join(ln for ln in body.splitlines()[:3] if ln.lstrip().startswith("#"))
        doc_note = re.search(r"no-run[^`]{0,300}", _prose(doc.read_text()))
        reasons = prose + " " + comments.lower() + " " + (doc_note.group(0).lower() if doc_note else "")
        assert any(w in reasons for w in REASON_WORDS), (
            f"{_id(block)}: a ```python no-run block must say why it does not run (in the "
            "prose just before it, a comment on its first lines, or a note on the page about "
            "its no-run blocks)")
        pytest.skip("fenced no-run")
    env = dict(os.environ, TMPDIR=str(tmp_path))   # a block's mkdtemp() is cleaned up too
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (
        f"{_id(block)} failed (exit {result.returncode}):\n{result.stdout[-2000:]}\n"
        f"{result.stderr[-4000:]}")


def _compile(block, tmp_path, compiler, std, suffix):
    doc, line, info, body, _ = block
    if "fragment" in info.split():
        pytest.skip("fenced fragment")
    src = tmp_path / f"block{suffix}"
    src.write_text(body)
    cmd = [compiler, f"-std={std}", "-fsyntax-only", "-Wall", "-Werror",
           "-I", str(ROOT / "include"), str(src)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{_id(block)} does not compile:\n{result.stderr[-4000:]}"


@pytest.mark.parametrize("block", CPP, ids=_id)
def test_cpp_block_compiles_against_the_headers(block, tmp_path):
    _compile(block, tmp_path, shutil.which("c++") or "g++", "c++20", ".cpp")


@pytest.mark.parametrize("block", C, ids=_id)
def test_c_block_compiles_against_the_headers(block, tmp_path):
    _compile(block, tmp_path, shutil.which("cc") or "gcc", "c11", ".c")


def _app_block() -> str:
    text = (ROOT / "docs" / "api.md").read_text()
    blocks = [m.group(2) for m in FENCE.finditer(text) if m.group(1).strip() == "cpp"
              and m.group(2).startswith("// app.cpp")]
    assert blocks, "docs/api.md lost its 'Using simpler from C++' example"
    return blocks[0]


def _build_dir() -> pathlib.Path:
    # The build the Python module comes from: its lib/ is the directory of the loaded
    # libsimpler_worker.so (SIMPLER_LIB_DIR unset).
    from simpler import builds
    lib = os.environ.get("SIMPLER_LIB_DIR") or builds.default_lib_dir()
    return pathlib.Path(lib).parent


def _run_app(app: pathlib.Path) -> None:
    result = subprocess.run([str(app)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "kernel mode supported: 1" in result.stdout and "tensors: 1" in result.stdout


def test_cpp_example_links_through_pkg_config(tmp_path):
    # The documented commands, as written (the build tree for <simpler>/build), from a shell
    # without PKG_CONFIG_PATH. They said `PKG_CONFIG_PATH=... c++ ... $(pkg-config ...)`,
    # which the shell expands before the assignment applies: pkg-config found nothing.
    text = (ROOT / "docs" / "api.md").read_text()
    blocks = [m.group(2) for m in FENCE.finditer(text) if m.group(1).strip() == "sh"
              and "pkg-config --cflags" in m.group(2)]
    assert blocks, "docs/api.md lost its pkg-config commands"
    (tmp_path / "app.cpp").write_text(_app_block())
    script = blocks[0].replace("<simpler>/build", str(_build_dir()))
    env = {k: v for k, v in os.environ.items() if k != "PKG_CONFIG_PATH"}
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "kernel mode supported: 1" in result.stdout and "tensors: 1" in result.stdout
    _run_app(tmp_path / "app")


def test_cpp_example_builds_with_find_package(tmp_path):
    text = (ROOT / "docs" / "api.md").read_text()
    cmake_blocks = [m.group(2) for m in FENCE.finditer(text) if m.group(1).strip() == "cmake"]
    assert any("find_package(simpler" in b for b in cmake_blocks)
    (tmp_path / "CMakeLists.txt").write_text(next(b for b in cmake_blocks if "find_package" in b))
    (tmp_path / "app.cpp").write_text(_app_block())
    out = tmp_path / "out"
    subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(out), f"-Dsimpler_DIR={_build_dir()}"],
                   check=True, capture_output=True, timeout=300)
    subprocess.run(["cmake", "--build", str(out)], check=True, capture_output=True, timeout=300)
    _run_app(out / "app")


def test_the_tutorials_run_command_works_from_a_fresh_shell(tmp_path):
    # docs/tutorial.md says how to run a step; it said a plain `/usr/bin/python3`, which
    # does not find simpler (nothing is installed into site-packages).
    text = (ROOT / "docs" / "tutorial.md").read_text()
    command = re.search(r"run it[^`]*`([^`]*/usr/bin/python3[^`]*)`", " ".join(text.split()))
    assert command, "docs/tutorial.md no longer says how to run a step"
    line = command.group(1) if "step.py" in command.group(1) else command.group(1) + " step.py"
    step = tmp_path / "step.py"
    step.write_text(next(body for doc, _, info, body, _ in PYTHON
                         if doc.name == "tutorial.md" and info == "python"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}   # a fresh shell
    result = subprocess.run(line.replace("step.py", str(step)), shell=True, cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{line!r} from the checkout:\n{result.stderr[-3000:]}"


def test_every_fenced_block_is_of_a_known_kind():
    # A block fenced ```py or ```python3 would escape the runs above; name it ```python.
    known = {"python", "cpp", "c", "cmake", "sh", "text", ""}
    opened = 0
    for doc in DOCS:
        text = doc.read_text()
        opened += len(re.findall(r"^```python\b", text, re.M))
        for m in FENCE.finditer(text):
            kind = (m.group(1).split() or [""])[0]
            assert kind in known, f"{doc.name}: a ```{m.group(1)} block ({kind!r} is not checked)"
    assert opened == len(PYTHON)
