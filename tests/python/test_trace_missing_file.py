"""simpler.trace.load / summarize on a file that does not exist: a SimplerError that is
also a FileNotFoundError (both ``except`` forms work), with ``.code`` and the path named.
It was Python's own FileNotFoundError, which ``except SimplerError`` missed."""
from __future__ import annotations

import errno
import pathlib

import pytest

from simpler import trace
from simpler.errors import (PTO_RUNTIME_ERR_INVALID_ARGUMENT, SimplerError, SimplerValueError,
                            SimplerFileNotFoundError)


@pytest.mark.parametrize("call", [trace.load, trace.summarize], ids=["load", "summarize"])
@pytest.mark.parametrize("kind", [str, pathlib.Path, lambda p: str(p).encode()],
                         ids=["str", "Path", "bytes"])
def test_a_missing_trace_is_a_simpler_file_not_found_error(tmp_path, call, kind):
    path = tmp_path / "no" / "swimlane.json"
    with pytest.raises(SimplerFileNotFoundError, match=r"no such file .*no/swimlane\.json") as err:
        call(kind(path))
    assert isinstance(err.value, FileNotFoundError) and isinstance(err.value, SimplerError)
    assert err.value.code == PTO_RUNTIME_ERR_INVALID_ARGUMENT
    assert err.value.filename == str(path) and err.value.errno == errno.ENOENT


def test_both_except_forms_catch_it(tmp_path):
    for base in (FileNotFoundError, SimplerError, OSError):
        try:
            trace.load(tmp_path / "missing.json")
        except base:
            pass


@pytest.mark.parametrize("path", ["a\0b", b"a\0b"], ids=["str", "bytes"])
def test_a_path_with_a_nul_byte_is_a_simpler_value_error(path):
    """open() raised Python's own ValueError ("embedded null byte")."""
    with pytest.raises(SimplerValueError, match=r"simpler\.trace\.load: path .*embedded null byte"):
        trace.load(path)
