"""The package's public surface: __version__, __all__, __dir__, py.typed, and the .pyi
stubs in step with the bindings (every public name/member in the module appears in the
stub and vice versa)."""
from __future__ import annotations

import ast
import enum
import importlib
import pathlib
import re

import pytest

import simpler

PACKAGE = pathlib.Path(simpler.__file__).resolve().parent
STUBS = sorted(PACKAGE.glob("*.pyi"))


def test_version_is_a_release_string():
    assert re.fullmatch(r"\d+\.\d+\.\d+", simpler.__version__), simpler.__version__


def test_all_names_resolve_and_include_the_compile_error():
    assert "KernelCompileError" in simpler.__all__
    for name in simpler.__all__:
        assert getattr(simpler, name) is not None, name
    assert issubclass(simpler.KernelCompileError, Exception)


def test_dir_lists_the_lazy_names_before_they_load():
    listed = dir(simpler)
    for name in simpler.__all__:
        assert name in listed
    assert "__version__" in listed


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        simpler.no_such_name  # noqa: B018


def test_package_is_marked_typed():
    assert (PACKAGE / "py.typed").is_file()


def _stub_members(node: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
        elif isinstance(item, ast.Assign):
            names.update(t.id for t in item.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def _stub_top_level(tree: ast.Module) -> dict[str, ast.AST]:
    names: dict[str, ast.AST] = {}
    for item in tree.body:
        if isinstance(item, (ast.ClassDef, ast.FunctionDef)):
            names[item.name] = item
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names[item.target.id] = item
        elif isinstance(item, ast.ImportFrom):
            for alias in item.names:
                if alias.asname is not None and alias.asname == alias.name:  # re-export
                    names[alias.asname] = item
    return {n: v for n, v in names.items() if not n.startswith("_")}


def _runtime_members(cls: type) -> set[str]:
    own = {n for n in dir(cls) if not n.startswith("_")}
    if issubclass(cls, enum.Enum):
        return own - set(dir(enum.IntEnum))
    # pybind11 enums: members plus name/value, which the stub's IntEnum base provides.
    if hasattr(cls, "__members__"):
        return own - {"name", "value"}
    return own


@pytest.mark.parametrize("stub", STUBS, ids=[s.stem for s in STUBS])
def test_stub_matches_the_module(stub):
    module = importlib.import_module(f"simpler.{stub.stem}")
    tree = ast.parse(stub.read_text())
    stubbed = _stub_top_level(tree)
    public = set(module.__all__)
    assert sorted(public - set(stubbed)) == [], f"public names missing from {stub.name}"
    assert sorted(set(stubbed) - public) == [], f"{stub.name} names what the module lacks"
    for name, node in stubbed.items():
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(module, name)
        runtime, declared = _runtime_members(cls), _stub_members(node)
        assert sorted(runtime - declared) == [], f"{name}: members missing from {stub.name}"
        assert sorted(declared - runtime) == [], f"{name}: {stub.name} declares what it lacks"


def _native_parameter_lists(obj) -> list[list[str]]:
    """The parameter names of each overload in a pybind11 docstring signature line."""
    out = []
    for line in (getattr(obj, "__doc__", None) or "").splitlines():
        m = re.match(r"^(?:\d+\. )?\w+\((.*)\) ->", line.strip())
        if m:
            out.append([p for p in re.findall(r"(\w+):", m.group(1)) if p != "self"])
    return out


@pytest.mark.parametrize("stub", STUBS, ids=[s.stem for s in STUBS])
def test_stub_parameter_names_match_the_bindings(stub):
    """Keyword callers follow the stub: its parameter names are the bindings' own."""
    module = importlib.import_module(f"simpler.{stub.stem}")
    checked = 0
    for node in ast.parse(stub.read_text()).body:
        if not isinstance(node, ast.ClassDef) or not hasattr(module, node.name):
            continue
        for item in node.body:
            if not isinstance(item, ast.FunctionDef) or item.name.startswith("_"):
                continue
            native = _native_parameter_lists(getattr(getattr(module, node.name), item.name))
            if not native:
                continue  # a Python-level member: its signature is the stub's by construction
            declared = [a.arg for a in item.args.args + item.args.kwonlyargs
                        if a.arg not in ("self", "cls")]
            assert declared in native, f"{node.name}.{item.name}: stub {declared}, bound {native}"
            checked += 1
    assert checked >= 10
