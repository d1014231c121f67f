"""``as_int``: the one rule for an int argument of the Python layer. Python ints and numpy
integers are ints; ``bool`` and ``numpy.bool_`` are not (a flag passed as a count or a size
is a mistake), although both implement ``__index__``."""
from __future__ import annotations

import operator
from typing import Any, Optional


def is_bool(value: Any) -> bool:
    """Python's bool or numpy's (checked by name: numpy is not imported for it)."""
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def as_int(value: Any) -> Optional[int]:
    """``value`` as an int, or None when it is not one."""
    if type(value) is int:  # the common case first: callers sit on enqueue paths
        return value
    if is_bool(value):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None
