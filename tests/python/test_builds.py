"""simpler.find_build: the runtime-build locator (a thin binding of the C++ one)."""
from __future__ import annotations

import os
import pathlib

import pytest

import simpler
from simpler import builds


def make_fake_build(lib_dir: pathlib.Path, runtime: str = "tensormap_and_ringbuffer") -> None:
    (lib_dir / "runtimes" / "a2a3sim" / runtime).mkdir(parents=True, exist_ok=True)
    (lib_dir / "runtimes" / "a2a3sim" / runtime / "libhost_runtime.so").write_bytes(b"")
    (lib_dir / "libsimpler_sim.so").write_bytes(b"")


def test_public_names_are_the_module_ones():
    assert simpler.find_build is builds.find_build
    assert simpler.RuntimeBins is builds.RuntimeBins
    assert builds.known_platforms() == ["a2a3sim", "a2a3"]
    assert builds.known_runtimes() == ["tensormap_and_ringbuffer", "host_build_graph"]


def test_unknown_platform_lists_the_valid_ones():
    with pytest.raises(ValueError) as err:
        simpler.find_build("a5sim", "tensormap_and_ringbuffer")
    message = str(err.value)
    assert "'a5sim'" in message and "'a2a3sim'" in message and "'a2a3'" in message


def test_hardware_platform_needs_a_cann_build(tmp_path):
    make_fake_build(tmp_path)
    with pytest.raises(ValueError) as err:
        simpler.find_build("a2a3", "tensormap_and_ringbuffer", lib_dir=tmp_path)
    message = str(err.value)
    assert "only the simulator" in message
    assert "'a2a3sim'" in message
    assert "CANN" in message


def test_unknown_runtime_lists_the_valid_ones():
    with pytest.raises(ValueError) as err:
        simpler.find_build("a2a3sim", "tensormap")
    message = str(err.value)
    assert "'tensormap'" in message
    assert "'tensormap_and_ringbuffer'" in message and "'host_build_graph'" in message


def test_missing_host_runtime_names_the_path(tmp_path):
    (tmp_path / "libsimpler_sim.so").write_bytes(b"")
    expected = tmp_path / "runtimes" / "a2a3sim" / "host_build_graph" / "libhost_runtime.so"
    with pytest.raises(FileNotFoundError) as err:
        simpler.find_build("a2a3sim", "host_build_graph", lib_dir=tmp_path)
    assert str(expected) in str(err.value)


def test_missing_sim_context_names_the_path(tmp_path):
    make_fake_build(tmp_path)
    (tmp_path / "libsimpler_sim.so").unlink()
    with pytest.raises(FileNotFoundError) as err:
        simpler.find_build("a2a3sim", "tensormap_and_ringbuffer", lib_dir=str(tmp_path))
    assert str(tmp_path / "libsimpler_sim.so") in str(err.value)


def test_fake_layout_is_found_with_every_field(tmp_path):
    make_fake_build(tmp_path, "host_build_graph")
    bins = simpler.find_build("a2a3sim", "host_build_graph", lib_dir=tmp_path)
    assert bins.platform == "a2a3sim"
    assert bins.runtime == "host_build_graph"
    assert bins.host_lib_path == str(
        tmp_path / "runtimes" / "a2a3sim" / "host_build_graph" / "libhost_runtime.so")
    assert bins.sim_context_path == str(tmp_path / "libsimpler_sim.so")
    assert bins.aicpu_image_path == "" and bins.aicore_image_path == ""


def test_environment_variable_overrides_the_lib_dir(tmp_path, monkeypatch):
    make_fake_build(tmp_path)
    monkeypatch.setenv("SIMPLER_LIB_DIR", str(tmp_path))
    assert builds.default_lib_dir() == str(tmp_path)
    bins = simpler.find_build("a2a3sim", "tensormap_and_ringbuffer")
    assert bins.sim_context_path == str(tmp_path / "libsimpler_sim.so")


def test_the_real_build_is_found(monkeypatch):
    monkeypatch.delenv("SIMPLER_LIB_DIR", raising=False)
    for runtime in builds.known_runtimes():
        bins = simpler.find_build("a2a3sim", runtime)
        assert os.path.isfile(bins.host_lib_path), bins
        assert os.path.isfile(bins.sim_context_path), bins
        assert bins.host_lib_path.startswith(builds.default_lib_dir())


def test_runtime_bins_is_a_value():
    a = simpler.RuntimeBins(platform="a2a3sim", runtime="host_build_graph",
                            host_lib_path="/x/libhost_runtime.so", sim_context_path="/x/libsimpler_sim.so")
    b = simpler.RuntimeBins(platform="a2a3sim", runtime="host_build_graph",
                            host_lib_path="/x/libhost_runtime.so", sim_context_path="/x/libsimpler_sim.so")
    assert a == b
    b.host_lib_path = "/y/libhost_runtime.so"
    assert a != b
    assert "host_build_graph" in repr(a) and "/x/libsimpler_sim.so" in repr(a)
    with pytest.raises(TypeError):
        hash(a)


def test_arguments_of_the_wrong_type_are_typed():
    """find_build and RuntimeBins(...) refuse what does not fit with SimplerTypeError naming
    it (pybind11's plain 'incompatible function arguments' before); == with anything else is
    False, not a TypeError."""
    from simpler import RuntimeBins
    from simpler.errors import SimplerTypeError
    cases = [
        (lambda: simpler.find_build(1, "tensormap_and_ringbuffer"), "platform must be a str, got int"),
        (lambda: simpler.find_build("a2a3sim", None), "runtime must be a str, got NoneType"),
        (lambda: simpler.find_build("a2a3sim", "tensormap_and_ringbuffer", 5),
         r"lib_dir must be a path \(str or os.PathLike\) or None, got int"),
        (lambda: RuntimeBins(), r"^RuntimeBins\(\): missing argument 'platform'; call it as "
                                r"RuntimeBins\(\*, platform: str, "),
        (lambda: RuntimeBins("a2a3sim"), r"takes 0 positional arguments, 1 given"),
        (lambda: RuntimeBins(platform=1, runtime="r", host_lib_path="h", sim_context_path="s"),
         "platform must be a str, got int"),
    ]
    for call, words in cases:
        with pytest.raises(SimplerTypeError, match=words):
            call()
    bins = simpler.find_build("a2a3sim", "tensormap_and_ringbuffer")
    assert (bins == 5) is False and bins == bins
