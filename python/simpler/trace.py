"""Reading swimlane traces (``<output_prefix>/swimlane.json``, format in docs/traces.md).

``summarize(path)`` -> :class:`TraceSummary`: per core the kernel blocks it ran, the tasks
they belong to, its busy time and busy share of the run's span, and the longest idle gaps
(``python -m simpler trace FILE`` prints it). ``load(path)`` returns the parsed JSON;
``flows(trace)`` the dependency arrows as ``(producer_task, consumer_task)`` pairs.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Tuple, Union

from simpler._ints import as_int
from simpler.errors import SimplerFileNotFoundError, SimplerTypeError, SimplerValueError
from simpler._typed_call import typed_functions as _typed_functions

__all__ = ["CoreSummary", "Gap", "TraceSummary", "load", "flows", "summarize"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class Gap:
    """An idle stretch of one core between two kernel blocks (nanoseconds)."""

    core: str
    start_ns: int
    end_ns: int

    @property
    def length_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass
class CoreSummary:
    """One core of the trace."""

    core: str
    blocks: int = 0
    tasks: int = 0
    busy_ns: int = 0
    busy_percent: float = 0.0
    longest_gap_ns: int = 0


@dataclass
class TraceSummary:
    """What ``simpler trace`` prints."""

    span_ns: int
    blocks: int
    tasks: int
    dependencies: int
    cores: List[CoreSummary] = field(default_factory=list)
    gaps: List[Gap] = field(default_factory=list)

    def as_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        for g, gap in zip(d["gaps"], self.gaps):
            g["length_ns"] = gap.length_ns
        return d

    def format(self) -> str:
        lines = [f"span {self.span_ns / 1e3:.3f} us, {self.tasks} tasks, {self.blocks} kernel "
                 f"blocks, {self.dependencies} dependency arrows, {len(self.cores)} cores used",
                 f"{'core':<10} {'blocks':>7} {'tasks':>7} {'busy us':>12} {'busy %':>7} "
                 f"{'longest gap us':>15}"]
        for c in self.cores:
            lines.append(f"{c.core:<10} {c.blocks:>7} {c.tasks:>7} {c.busy_ns / 1e3:>12.3f} "
                         f"{c.busy_percent:>7.1f} {c.longest_gap_ns / 1e3:>15.3f}")
        if self.gaps:
            lines.append("longest gaps:")
            for g in self.gaps:
                lines.append(f"  {g.core:<10} {g.length_ns / 1e3:>12.3f} us  "
                             f"from {g.start_ns / 1e3:.3f} to {g.end_ns / 1e3:.3f} us")
        return "\n".join(lines)


def load(path: PathLike) -> Dict[str, Any]:
    """The trace as parsed JSON; ValueError when it is not a Chrome trace object."""
    # Not an int: open() would read, then close, that file descriptor of the host process.
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise SimplerTypeError(f"simpler.trace.load: path must be a str or os.PathLike, "
                               f"got {type(path).__name__}")
    try:
        f = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise SimplerFileNotFoundError(f"simpler.trace.load: no such file {os.fsdecode(path)!r} "
                                       f"(a run writes <output_prefix>/swimlane.json)",
                                       os.fsdecode(path)) from None
    except ValueError as e:  # "embedded null byte"
        raise SimplerValueError(f"simpler.trace.load: path {path!r}: {e}") from None
    with f:
        try:
            data = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:  # a binary file: not UTF-8
            raise SimplerValueError(f"not valid JSON: {e}") from None
    if isinstance(data, list):  # the JSON-array form of the Chrome trace format
        data = {"traceEvents": data}
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise SimplerValueError("not a Chrome trace (expected an object with a 'traceEvents' list)")
    return data


def _ns(event: Dict[str, Any], key: str) -> int:
    args = event.get("args") or {}
    exact = {"ts": "start_ns", "end": "end_ns"}[key]
    if exact in args:
        return int(args[exact])
    ts = float(event.get("ts", 0))
    if key == "end":
        ts += float(event.get("dur", 0))
    return round(ts * 1000)


def flows(trace: Dict[str, Any]) -> List[Tuple[int, int]]:
    """The dependency arrows of a trace as (producer task, consumer task) pairs."""
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise SimplerTypeError(f"simpler.trace.flows: trace must be a dict with a 'traceEvents' "
                               f"list (what simpler.trace.load returns), got {type(trace).__name__}")
    starts: Dict[Any, int] = {}
    ends: Dict[Any, int] = {}
    for e in trace["traceEvents"]:
        if not isinstance(e, dict):
            raise SimplerValueError("a trace event is not an object")
        if e.get("cat") != "dependency":
            continue
        task = (e.get("args") or {}).get("task")
        if e.get("ph") == "s":
            starts[e.get("id")] = task
        elif e.get("ph") == "f":
            ends[e.get("id")] = task
    return sorted((starts[i], ends[i]) for i in starts if i in ends)


def summarize(path: PathLike, gaps: int = 5) -> TraceSummary:
    """Per-core summary of the kernel blocks ("X" events) of a swimlane trace; ValueError
    when it is not one (also for an event field of the wrong type)."""
    count = as_int(gaps)
    if count is None:
        raise SimplerTypeError(f"simpler.trace.summarize: gaps must be an int, "
                               f"got {type(gaps).__name__}")
    if count < 0:   # a typo, not "none": 0 lists none
        raise SimplerValueError(f"simpler.trace.summarize: gaps must be >= 0 (how many of the "
                                f"longest gaps to list), got {count}")
    trace = load(path)
    try:
        return _summarize(trace, count)
    except SimplerValueError:
        raise
    except (TypeError, ValueError, KeyError, OverflowError) as e:
        raise SimplerValueError(f"not a swimlane trace: an event field has the wrong type or "
                                f"value ({type(e).__name__}: {e})") from None


def _track_order(key: Tuple[Any, Any]) -> Tuple[Tuple[int, int, str], ...]:
    """(pid, tid) in numeric order where they are ints: AIV 8, AIV 9, AIV 10 (not 10, 8, 9)."""
    return tuple((0, v, "") if isinstance(v, int) else (1, 0, str(v)) for v in key)


def _summarize(trace: Dict[str, Any], gaps: int) -> TraceSummary:
    names: Dict[Tuple[Any, Any], str] = {}
    blocks: Dict[Tuple[Any, Any], List[Tuple[int, int, Any]]] = {}
    for e in trace["traceEvents"]:
        if not isinstance(e, dict):
            raise SimplerValueError("a trace event is not an object")
        key = (e.get("pid"), e.get("tid"))
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[key] = str((e.get("args") or {}).get("name", key))
        elif e.get("ph") == "X":
            task = (e.get("args") or {}).get("task", e.get("name"))
            start, end = _ns(e, "ts"), _ns(e, "end")
            if "ts" not in e or end < start:  # a negative busy time otherwise
                raise SimplerValueError(f"not a swimlane trace: kernel block {task!r} has "
                                        + ("no 'ts'" if "ts" not in e else "a negative 'dur'"))
            blocks.setdefault(key, []).append((start, end, task))
    all_blocks = [b for bs in blocks.values() for b in bs]
    if not all_blocks:
        return TraceSummary(0, 0, 0, len(flows(trace)))
    origin = min(b[0] for b in all_blocks)
    span = max(b[1] for b in all_blocks) - origin
    cores: List[CoreSummary] = []
    all_gaps: List[Gap] = []
    for key in sorted(blocks, key=_track_order):
        label = names.get(key, f"{key[0]}/{key[1]}")
        runs = sorted(blocks[key])
        busy, longest, cursor = 0, 0, None
        for start, end, _ in runs:
            if cursor is None or start >= cursor:
                busy += end - start
                if cursor is not None and start > cursor:
                    all_gaps.append(Gap(label, cursor - origin, start - origin))
                    longest = max(longest, start - cursor)
                cursor = end
            elif end > cursor:  # overlapping blocks on one core: count the union
                busy += end - cursor
                cursor = end
        cores.append(CoreSummary(label, len(runs), len({r[2] for r in runs}), busy,
                                 100.0 * busy / span if span > 0 else 100.0, longest))
    all_gaps.sort(key=lambda g: g.length_ns, reverse=True)
    return TraceSummary(span, len(all_blocks), len({b[2] for b in all_blocks}),
                        len(flows(trace)), cores, all_gaps[:gaps])


_typed_functions(globals(), "simpler.trace", ["load", "flows", "summarize"])
