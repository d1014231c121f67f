"""Host-level dependency inference and data residency, keyed by host byte ranges.

Dependencies (:class:`HostTensorMap`) follow the chip's rules: a reader waits for the last
overlapping writer (RAW); a writer waits for the last overlapping writer (WAW) and for the
readers of that range since (WAR); ranges that do not overlap do not serialize.

Residency (:class:`Residency`) records, for every byte range written during a run, which
chip buffer holds its latest value (the host holds everything else), and what every chip
buffer currently holds, so a task's inputs are copied only when its chip does not already
have them: from the host (H2D) or from the writer's chip (device to device).
"""
from __future__ import annotations

import itertools
from typing import Any, Dict, List, Optional, Set, Tuple

Range = Tuple[int, int]


def _cut(entries: List[Tuple[int, int, Any]], lo: int, hi: int) -> List[Tuple[int, int, Any]]:
    """``entries`` with [lo, hi) removed (partially covered entries are split)."""
    out = []
    for elo, ehi, value in entries:
        if ehi <= lo or elo >= hi:
            out.append((elo, ehi, value))
            continue
        if elo < lo:
            out.append((elo, lo, value))
        if ehi > hi:
            out.append((hi, ehi, value))
    return out


class HostTensorMap:
    """Last writer and readers-since per byte range (linear scan: host runs hold tens to
    thousands of tasks, not millions)."""

    def __init__(self) -> None:
        self._writers: List[Tuple[int, int, Any]] = []
        self._readers: List[Tuple[int, int, Any]] = []

    def dependencies(self, lo: int, hi: int, write: bool) -> List[Any]:
        found: List[Any] = []
        seen: Set[int] = set()
        pools = (self._writers, self._readers) if write else (self._writers,)
        for pool in pools:
            for elo, ehi, task in pool:
                if elo < hi and lo < ehi and id(task) not in seen:
                    seen.add(id(task))
                    found.append(task)
        return found

    def record(self, lo: int, hi: int, write: bool, task: Any) -> None:
        if write:
            self._writers = _cut(self._writers, lo, hi)
            self._readers = _cut(self._readers, lo, hi)
            self._writers.append((lo, hi, task))
        else:
            self._readers.append((lo, hi, task))


class DeviceBuffer:
    """Device memory on one chip for the host byte range [lo, hi); ``ptr`` is set by the
    chip's executor when the first task that uses it runs."""

    _ids = itertools.count(1)

    def __init__(self, slot: int, lo: int, hi: int) -> None:
        self.id = next(DeviceBuffer._ids)
        self.slot = slot
        self.lo = lo
        self.hi = hi
        self.ptr: Optional[int] = None
        # What the buffer holds, as of the submissions so far: (lo, hi, source) pieces.
        self.holds: List[Tuple[int, int, Any]] = []

    @property
    def nbytes(self) -> int:
        return self.hi - self.lo

    def addr(self, lo: int) -> int:
        assert self.ptr is not None, "buffer used before its chip allocated it"
        return self.ptr + (lo - self.lo)


HOST = ("host",)


class Residency:
    """Where the latest bytes of each host range live during one host run."""

    def __init__(self) -> None:
        # (lo, hi, (buffer, version)): the latest value of [lo, hi) is in that buffer.
        self._latest: List[Tuple[int, int, Any]] = []
        self._buffers: Dict[Tuple[int, int, int], DeviceBuffer] = {}
        self._versions = itertools.count(1)

    def buffer(self, slot: int, lo: int, hi: int) -> DeviceBuffer:
        key = (slot, lo, hi)
        buf = self._buffers.get(key)
        if buf is None:
            buf = self._buffers[key] = DeviceBuffer(slot, lo, hi)
        return buf

    def buffers(self) -> List[DeviceBuffer]:
        return list(self._buffers.values())

    def pieces(self, lo: int, hi: int) -> List[Tuple[int, int, Any]]:
        """[lo, hi) split by where its latest bytes live: HOST or (buffer, version)."""
        found = sorted((max(elo, lo), min(ehi, hi), src) for elo, ehi, src in self._latest
                       if elo < hi and lo < ehi)
        out: List[Tuple[int, int, Any]] = []
        at = lo
        for plo, phi, src in found:
            if plo > at:
                out.append((at, plo, HOST))
            out.append((plo, phi, src))
            at = phi
        if at < hi:
            out.append((at, hi, HOST))
        return out

    def plan_read(self, buf: DeviceBuffer) -> List[Tuple[int, int, Any]]:
        """The copies that bring ``buf`` up to date, as (lo, hi, source) with source HOST
        or a source DeviceBuffer; records that ``buf`` then holds the latest bytes."""
        copies = []
        current = self.pieces(buf.lo, buf.hi)
        for plo, phi, src in current:
            if any(src == hsrc and hlo <= plo and phi <= hhi for hlo, hhi, hsrc in buf.holds):
                continue
            if src != HOST and src[0] is buf:
                continue  # written into this very buffer and not overwritten since
            copies.append((plo, phi, HOST if src == HOST else src[0]))
        buf.holds = current
        return copies

    def record_write(self, buf: DeviceBuffer) -> None:
        """``buf`` now holds the only latest copy of its range."""
        src = (buf, next(self._versions))
        self._latest = _cut(self._latest, buf.lo, buf.hi)
        self._latest.append((buf.lo, buf.hi, src))
        buf.holds = [(buf.lo, buf.hi, src)]

    def latest_on_device(self) -> List[Tuple[int, int, DeviceBuffer]]:
        """Every range whose latest bytes are on a chip (to copy back to the host)."""
        return [(lo, hi, src[0]) for lo, hi, src in self._latest]
