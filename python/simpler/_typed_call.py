"""``typed_call``: a call that does not fit a public function's signature (an unknown
keyword, too many positional arguments, a missing required one) raises SimplerTypeError
naming the function, instead of Python's bare TypeError. Still a TypeError."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

from simpler.errors import SimplerTypeError

F = TypeVar("F", bound=Callable[..., Any])


def typed_call(api: str, name: str = "") -> Callable[[F], F]:
    """Decorates ``fn``, reported as ``api`` (e.g. ``"sim.configure"``) with its signature
    shown as ``name(...)`` (default: ``api``). The signature is checked only after a
    TypeError, so a call that fits costs one try block."""
    def wrap(fn: F) -> F:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except TypeError:
                try:
                    signature.bind(*args, **kwargs)
                except TypeError as bad:
                    raise SimplerTypeError(f"{api}: {bad}; the signature is {name or api}"
                                           f"{_public(signature)}") from None
                raise  # the call fitted: the TypeError came from inside

        return call  # type: ignore[return-value]
    return wrap


def _public(signature: inspect.Signature) -> str:
    """The signature as a user writes the call: no ``self``, no annotations."""
    params = [p.replace(annotation=inspect.Parameter.empty)
              for name, p in signature.parameters.items() if name != "self"]
    return str(signature.replace(parameters=params, return_annotation=inspect.Signature.empty))
