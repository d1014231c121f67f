"""``typed_call``: a call that does not fit a public function's signature (an unknown
keyword, too many positional arguments, a missing required one) raises SimplerTypeError
naming the function, instead of Python's bare TypeError. Still a TypeError."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

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
                    # Imported here: simpler.errors itself uses this module.
                    from simpler.errors import SimplerTypeError
                    raise SimplerTypeError(f"{api}: {bad}; the signature is {name or api}"
                                           f"{_public(signature)}") from None
                raise  # the call fitted: the TypeError came from inside

        call._typed_call = True  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return wrap


def _public(signature: inspect.Signature) -> str:
    """The signature as a user writes the call: no ``self``, no annotations."""
    params = [p.replace(annotation=inspect.Parameter.empty)
              for name, p in signature.parameters.items() if name not in ("self", "cls")]
    return str(signature.replace(parameters=params, return_annotation=inspect.Signature.empty))


def typed_methods(prefix: str, *, exclude: "tuple[str, ...]" = ()) -> Callable[[type], type]:
    """Applies :func:`typed_call` to the public methods a class defines (``__init__``
    included, reported as ``prefix``; the others as ``prefix.name``), static and class
    methods too. ``exclude``: methods that check their own call (a hot path that cannot
    pay for the wrapper's extra frame)."""
    def wrap(cls: type) -> type:
        for name, attr in list(vars(cls).items()):
            if (name.startswith("_") and name != "__init__") or name in exclude:
                continue
            api = prefix if name == "__init__" else f"{prefix}.{name}"
            kind = type(attr) if isinstance(attr, (staticmethod, classmethod)) else None
            fn = attr.__func__ if kind else attr
            if not inspect.isfunction(fn) or getattr(fn, "_typed_call", False):
                continue
            setattr(cls, name, kind(typed_call(api)(fn)) if kind else typed_call(api)(fn))
        return cls
    return wrap


def typed_functions(namespace: "dict[str, Any]", prefix: str, names: "list[str]") -> None:
    """Applies :func:`typed_call` to the module functions ``names`` of ``namespace`` (a
    module's globals()), each reported as ``prefix.name``."""
    for name in names:
        fn = namespace.get(name)
        if inspect.isfunction(fn) and not getattr(fn, "_typed_call", False):
            namespace[name] = typed_call(f"{prefix}.{name}")(fn)
