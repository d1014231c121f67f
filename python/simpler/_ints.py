"""``as_int``: the one rule for an int argument of the Python layer. Python ints and numpy
integers are ints; ``bool`` and ``numpy.bool_`` are not (a flag passed as a count or a size
is a mistake), although both implement ``__index__``; nor are enum members (``DataType.INT32``
passed as a size), pybind11's or Python's."""
from __future__ import annotations

import operator
from typing import Any, Optional


def is_bool(value: Any) -> bool:
    """Python's bool or numpy's (checked by name: numpy is not imported for it)."""
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def require_bool(value: Any, what: str) -> bool:
    """True or False (numpy's too), or a SimplerTypeError naming ``what``: a string such as
    "no", or an int, would otherwise read as a flag."""
    if is_bool(value):
        return bool(value)
    from simpler.errors import SimplerTypeError  # the failure path only
    raise SimplerTypeError(f"{what} must be True or False, got {value!r}")


def is_enum(value: Any) -> bool:
    """A member of an enum: pybind11's and Python's enum classes have ``__members__``."""
    return hasattr(type(value), "__members__")


def as_int(value: Any) -> Optional[int]:
    """``value`` as an int, or None when it is not one."""
    if type(value) is int:  # the common case first: callers sit on enqueue paths
        return value
    if is_bool(value) or is_enum(value):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


_U64 = 2 ** 64


def require_int(value: Any, api: str, name: str, low: Optional[int] = None) -> int:
    """``value`` as an int (numpy integers too), or a SimplerTypeError naming ``api``
    (e.g. ``"Worker.malloc"``) and the parameter; with ``low``, a SimplerValueError when it
    is below ``low`` or does not fit 64 bits (the native calls take unsigned 64-bit sizes
    and addresses)."""
    number = as_int(value)
    if number is not None and (low is None or low <= number < _U64):
        return number
    from simpler.errors import SimplerTypeError, SimplerValueError  # the failure path only
    if number is None:
        raise SimplerTypeError(f"{api}: {name} must be an int, got {type(value).__name__}")
    if number < low:
        raise SimplerValueError(f"{api}: {name} must be >= {low}, got {number}")
    raise SimplerValueError(f"{api}: {name} {number} does not fit 64 bits")
