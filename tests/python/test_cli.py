"""The command line (python -m simpler / simpler.cli.main): info, probe, compile, trace;
--help for each; errors on stderr with a non-zero exit status."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

import simpler
from simpler import cli

PYTHON_DIR = str(pathlib.Path(simpler.__file__).resolve().parent.parent)
PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"


def run_module(*argv, cwd=None):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-m", "simpler", *argv], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", [[], ["info"], ["probe"], ["compile"], ["trace"]])
def test_help(command):
    result = run_module(*command, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: simpler")


def test_no_command_prints_usage_to_stderr():
    result = run_module()
    assert result.returncode == 2 and "usage: simpler" in result.stderr


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"simpler {simpler.__version__}"


def test_info_text_and_json(capsys):
    assert cli.main(["info"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"simpler {simpler.__version__}")
    assert "a2a3sim/tensormap_and_ringbuffer" in text and "ABI 2." in text
    assert "device 0:" in text
    assert cli.main(["info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    runtimes = {r["runtime"]: r for r in info["runtimes"]}
    assert runtimes["tensormap_and_ringbuffer"]["kernel_mode"] is True
    assert runtimes["host_build_graph"]["kernel_mode"] is False
    assert all(r["abi_version"].startswith("2.") for r in info["runtimes"])
    assert {p["name"]: p["available"] for p in info["platforms"]} == {"a2a3sim": True,
                                                                      "a2a3": False}
    assert len(info["sim"]["devices"]) >= 1 and info["version"] == simpler.__version__
    import importlib.util
    level4 = all(importlib.util.find_spec(m) is not None for m in ("simpler._mpi_native", "mpi4py"))
    assert info["level4"]["available"] is level4, info["level4"]
    assert "level 4 (several hosts, Open MPI)\n  " + ("yes" if level4 else "not available") in text


def test_probe_exit_codes(capsys):
    assert cli.main(["probe", "--platform", "a2a3sim", "--runtime", "tensormap_and_ringbuffer"]) == 0
    assert "kernel mode supported" in capsys.readouterr().out
    assert cli.main(["probe", "--platform", "a2a3sim", "--runtime", "host_build_graph"]) == 1
    assert "not supported" in capsys.readouterr().out
    assert cli.main(["probe", "-q", "--platform", "a2a3sim", "--runtime", "no_such"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "unknown runtime 'no_such'" in out.err
    assert cli.main(["probe", "--platform", "a2a3sim", "--runtime", "host_build_graph",
                     "--lib-dir", "/nonexistent"]) == 2
    assert "/nonexistent" in capsys.readouterr().err


def test_probe_requires_both_names():
    result = run_module("probe", "--platform", "a2a3sim")
    assert result.returncode == 2 and "--runtime" in result.stderr


def test_compile_writes_images_with_a_progress_line_each(tmp_path, capsys):
    out = tmp_path / "images"
    rc = cli.main(["compile", "-k", f"aiv:{PROGRAMS / 'add_scalar_kernel.cpp'}",
                   "-k", f"aic:{PROGRAMS / 'wait_flag_kernel.cpp'}",
                   "-O", f"{PROGRAMS / 'add_scalar_orch.cpp'}:add_scalar_entry",
                   "-o", str(out), "-j", "2", "--cache-dir", str(tmp_path / "cache")])
    text = capsys.readouterr().out
    assert rc == 0, text
    progress = [line for line in text.splitlines() if line.startswith("[")]
    assert len(progress) == 3 and {line[:5] for line in progress} == {"[1/3]", "[2/3]", "[3/3]"}
    for name in ("add_scalar_kernel.aiv.so", "wait_flag_kernel.aic.so",
                 "add_scalar_orch.orchestration.so"):
        assert (out / name).read_bytes().startswith(b"\x7fELF"), name
    assert "3/3 compiled" in text


def test_compile_failure_is_reported_and_the_others_still_compile(tmp_path, capsys):
    bad = tmp_path / "bad.cpp"
    bad.write_text("this is not C++\n")
    rc = cli.main(["compile", "-k", f"aiv:{bad}", "-k", f"aiv:{PROGRAMS / 'add_scalar_kernel.cpp'}",
                   "-o", str(tmp_path), "--no-cache"])
    out = capsys.readouterr()
    assert rc == 1
    assert "FAILED" in out.out and "1/2 compiled" in out.out
    assert f"simpler compile: {bad}:" in out.err and "compilation failed" in out.err
    assert (tmp_path / "add_scalar_kernel.aiv.so").exists()
    assert not (tmp_path / "bad.aiv.so").exists()


@pytest.mark.parametrize("argv, message", [
    (["compile"], "nothing to compile"),
    (["compile", "-k", "gpu:x.cpp"], "CORE:FILE"),
    (["compile", "-k", "aiv:/no/such/file.cpp"], "cannot read /no/such/file.cpp"),
    (["compile", "-k", "aiv:{k}", "-j", "0"], "--jobs must be >= 1"),
])
def test_compile_refuses_bad_input_before_compiling(argv, message, capsys):
    argv = [a.format(k=PROGRAMS / "add_scalar_kernel.cpp") for a in argv]
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_trace_summary(tmp_path, capsys):
    events = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 3, "args": {"name": "AIC 3"}},
              {"ph": "X", "name": "f0", "pid": 1, "tid": 3, "ts": 0, "dur": 1.0,
               "args": {"task": 0, "start_ns": 0, "end_ns": 1000}},
              {"ph": "X", "name": "f0", "pid": 1, "tid": 3, "ts": 3.0, "dur": 1.0,
               "args": {"task": 1, "start_ns": 3000, "end_ns": 4000}}]
    path = tmp_path / "swimlane.json"
    path.write_text(json.dumps({"traceEvents": events}))
    assert cli.main(["trace", str(path)]) == 0
    text = capsys.readouterr().out
    assert "2 tasks, 2 kernel blocks" in text and "AIC 3" in text and "50.0" in text
    assert cli.main(["trace", "--json", str(path)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["gaps"][0]["length_ns"] == 2000


def test_trace_of_a_missing_or_bad_file_is_an_error(tmp_path, capsys):
    assert cli.main(["trace", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    assert cli.main(["trace", str(bad)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_a_negative_gap_count_is_bad_usage(tmp_path, capsys):
    # docs/cli.md: a bad option exits 2; --gaps -1 listed no gaps and exited 0.
    path = tmp_path / "swimlane.json"
    path.write_text('{"traceEvents": []}')
    assert cli.main(["trace", "--gaps", "-1", str(path)]) == 2
    assert "gaps must be >= 0" in capsys.readouterr().err
    assert cli.main(["trace", "--gaps", "0", str(path)]) == 0
