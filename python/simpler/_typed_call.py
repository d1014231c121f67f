"""A call that does not fit a public function's signature (an unknown keyword, too many
positional arguments, a missing required one, a wrong ``self``) raises SimplerTypeError
naming the function, what did not fit and how to call it, instead of Python's or
pybind11's bare TypeError. Still a TypeError.

One analysis, :func:`mismatch`, for both kinds of function: the Python ones wrapped by
:func:`typed_call`, and the native ones (``src/python/call_mismatch.cpp`` calls
:func:`native_refusal` when pybind11 refused a call). Both run only after a call failed."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Iterable, Optional, TypeVar

from simpler._counted import counted

F = TypeVar("F", bound=Callable[..., Any])
_P = inspect.Parameter
_BY_POSITION = (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)


def mismatch(signature: inspect.Signature, args: "tuple[Any, ...]", kwargs: "dict[str, Any]",
             str_params: Iterable[str] = ()) -> "str | None":
    """What about ``args``/``kwargs`` does not fit ``signature``, in the order a reader would
    fix it; None when they fit. ``str_params``: parameters that take only a str."""
    params = list(signature.parameters.values())
    by_position = [p for p in params if p.kind in _BY_POSITION]
    takes_any = {p.kind for p in params} & {_P.VAR_POSITIONAL, _P.VAR_KEYWORD}
    if _P.VAR_POSITIONAL not in takes_any and len(args) > len(by_position):
        return (f"takes {counted(len(by_position), 'positional argument')}, "
                f"{len(args)} given")
    given = {p.name: v for p, v in zip(by_position, args)}
    named = {p.name: p for p in params if p.kind not in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)}
    for key, value in kwargs.items():
        p = named.get(key)
        if p is None or p.kind is _P.POSITIONAL_ONLY:
            if _P.VAR_KEYWORD in takes_any:
                continue
            return (f"unknown keyword '{key}'{_config_field_hint(key, named)}" if p is None
                    else f"'{key}' is given by position only")
        if key in given:
            return f"'{key}' given twice (by position and by keyword)"
        given[key] = value
    for p in named.values():
        if p.name not in given and p.default is _P.empty:
            return f"missing argument '{p.name}'"
    for name in str_params:
        if name in given and not isinstance(given[name], (str, bytes)):
            return f"{name} must be a str, got {type(given[name]).__name__}"
    try:  # what the checks above do not model (e.g. a positional-only parameter's order)
        signature.bind(*args, **kwargs)
    except TypeError as bad:
        return str(bad)
    return None


def _config_field_hint(key: str, named: "dict[str, Any]") -> str:
    """For a function taking a CallConfig, given one of its fields as a keyword (as in
    ``w.init(pipeline_depth=2)``): where that field goes."""
    takes = [name for name in ("config", "prewarm_config") if name in named]
    if not takes:
        return ""
    try:
        from simpler.task_interface import CallConfig
        fields = CallConfig().to_dict()
    except Exception:  # noqa: BLE001 - only a hint: the refusal stands without it
        return ""
    if key not in fields:
        return ""
    where = " or ".join(f"{name}=CallConfig({key}=...)" for name in reversed(takes))
    return f" ({key} is a CallConfig field: pass {where})"


def refusal(api: str, shown: str, why: str) -> Exception:
    """The SimplerTypeError for a call to ``api`` that did not fit: ``why``, and the call's
    form ``shown``."""
    from simpler.errors import SimplerTypeError  # here: simpler.errors imports this module
    return SimplerTypeError(f"{api}: {why}; call it as {shown}")


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
                why = mismatch(signature, args, kwargs)
                if why is None:
                    raise  # the call fitted: the TypeError came from inside
                raise refusal(api, call_form(name or api, signature), why) from None

        call._typed_call = True  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return wrap


def call_form(name: str, signature: inspect.Signature) -> str:
    """``name(a, b=0, *, c)``: a Python function's signature as a user writes the call (no
    ``self``, no annotations)."""
    params = [p.replace(annotation=_P.empty)
              for pname, p in signature.parameters.items() if pname not in ("self", "cls")]
    return name + str(signature.replace(parameters=params,
                                        return_annotation=inspect.Signature.empty))


def typed_methods(prefix: str, *, exclude: "tuple[str, ...]" = ()) -> Callable[[type], type]:
    """Applies :func:`typed_call` to the public methods a class defines (``__init__``
    included, reported as ``prefix``; the others as ``prefix.name``), static and class
    methods too. ``exclude``: methods that check their own call (a hot path that cannot
    pay for the wrapper's extra frame). Assigning a read-only property raises
    SimplerAttributeError saying so (Python's plain AttributeError before)."""
    def wrap(cls: type) -> type:
        for name, attr in list(vars(cls).items()):
            if isinstance(attr, property) and attr.fset is None and not name.startswith("_"):
                setattr(cls, name, property(attr.fget, _read_only(f"{prefix}.{name}"),
                                            attr.fdel, attr.__doc__))
                continue
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


def _read_only(api: str) -> Callable[[Any, Any], None]:
    def refuse(self: Any, value: Any) -> None:
        from simpler.errors import SimplerAttributeError
        raise SimplerAttributeError(f"{api} is read-only; it cannot be set")
    return refuse


def typed_functions(namespace: "dict[str, Any]", prefix: str, names: "list[str]") -> None:
    """Applies :func:`typed_call` to the module functions ``names`` of ``namespace`` (a
    module's globals()), each reported as ``prefix.name``."""
    for name in names:
        fn = namespace.get(name)
        if inspect.isfunction(fn) and not getattr(fn, "_typed_call", False):
            namespace[name] = typed_call(f"{prefix}.{name}")(fn)


# --- native functions (pybind11) -------------------------------------------------------


class _Text:
    """A default value or type as pybind11 wrote it, shown as written."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _split_top_level(text: str) -> "list[str]":
    """``text`` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "([{" and 1 or (c in ")]}" and -1 or 0)
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _native_signature(line: str, name: str) -> "tuple[inspect.Signature, list[str]] | None":
    """The signature in pybind11's docstring line ``name(self: T, a: handle, b: int = 0) ->
    R`` without ``self``, and its str-only parameters; None for a line that is not one
    (overloads, ``*args``)."""
    if not line.startswith(name + "(") or ") -> " not in line:
        return None
    inner = line[len(name) + 1:line.rindex(") -> ")]
    params: "list[inspect.Parameter]" = []
    kind = _P.POSITIONAL_OR_KEYWORD
    for part in _split_top_level(inner):
        if part == "*":
            kind = _P.KEYWORD_ONLY
            continue
        if part == "/":
            params = [p.replace(kind=_P.POSITIONAL_ONLY) for p in params]
            continue
        pname, colon, rest = part.partition(":")
        if part.startswith("*") or not colon or not pname.strip().isidentifier():
            return None
        ptype, eq, default = rest.partition(" = ")
        ptype = ptype.strip()
        params.append(_P(pname.strip(), kind,
                         default=_Text(default.strip()) if eq else _P.empty,
                         annotation=_P.empty if ptype in ("handle", "object") else _Text(ptype)))
    if params and params[0].name == "self":
        params = params[1:]
    try:
        signature = inspect.Signature(params)
    except ValueError:  # e.g. a required parameter after one with a default
        return None
    return signature, [p.name for p in params if repr(p.annotation) == "str"]


def _find(owner: type, record: Any) -> "tuple[str, Any, str] | None":
    """(name, function, kind) of the member of ``owner`` whose pybind11 record is
    ``record``; kind is "method", "static" or "setter" (a property's)."""
    for name, attr in vars(owner).items():
        if isinstance(attr, property):
            candidates = [(attr.fset, "setter")]
        elif isinstance(attr, staticmethod):
            candidates = [(attr.__func__, "static")]
        else:
            candidates = [(getattr(attr, "__func__", attr), "method")]
        for fn, kind in candidates:
            if fn is not None and getattr(fn, "__self__", None) is record:
                return name, fn, kind
    return None


def native_refusal(owner: type, record: Any, error: BaseException, args: "tuple[Any, ...]",
                   kwargs: "dict[str, Any] | None") -> "Exception | None":
    """The SimplerTypeError for pybind11's refusal ``error`` of a call to the member of
    ``owner`` whose function record is ``record``; None when ``error`` is not such a
    refusal (then it stands)."""
    found = _find(owner, record)
    if found is None:
        return None
    name, fn, kind = found
    cls = owner.__name__
    doc = (fn.__doc__ or "").split("\n", 1)[0]
    if kind == "setter":
        if not str(error).startswith("(): incompatible"):
            return None
        parsed = _native_signature(name + doc, name)
        if parsed is None or len(args) != 2:
            return None
        expected = next(iter(parsed[0].parameters.values())).annotation
        from simpler.errors import SimplerTypeError
        return SimplerTypeError(f"{cls}.{name}: expected {_a(repr(expected))}, got "
                                f"{type(args[1]).__name__}")
    if not str(error).startswith(name + "(): incompatible "):
        return None
    parsed = _native_signature(doc, name)
    if parsed is None:
        return None
    signature, str_params = parsed
    api = cls + "()" if name == "__init__" else f"{cls}.{name}()"
    shown = (cls if name == "__init__" else name) + str(signature)
    if kind != "static":
        if not args or not isinstance(args[0], owner):
            got = type(args[0]).__name__ if args else "nothing"
            return refusal(api, shown, f"self must be a {cls}, got {got}")
        args = args[1:]
    why = mismatch(signature, args, kwargs or {}, str_params)
    return refusal(api, shown, why or "an argument has the wrong type")


def _a(noun: str) -> str:
    """"a str", "an int"."""
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


class ClassSignature:
    """A class's ``__signature__`` for ``inspect.signature(cls)`` when its ``__new__`` or
    ``__init__`` takes ``*args, **kwargs``; ``None`` (inspect reads ``__init__``) for
    subclasses and instances, which it would otherwise mislabel."""

    def __init__(self, cls: type, signature: inspect.Signature) -> None:
        self._cls, self._signature = cls, signature

    def __get__(self, obj: Any, cls: Any) -> Optional[inspect.Signature]:
        return self._signature if obj is None and cls is self._cls else None
