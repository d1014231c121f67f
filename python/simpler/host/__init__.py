"""Levels above the chip: several chips of one host (level 3), several hosts (level 4).

``simpler.Worker(level=3, device_ids=[...])`` returns a :class:`HostWorker`;
``simpler.Worker(level=4, ...)`` (under mpirun) an ``MpiWorker`` (simpler.host.mpi). Both
run host orchestrations (``fn(orch, args)`` calling ``orch.submit``) through one
:class:`ChipTransport`: in-process at level 3, MPI at level 4. See docs/concepts.md.
"""
from __future__ import annotations

from simpler.host.errors import ChipGroupError, ChipTaskError, RankError
from simpler.host.host_worker import CallableHandle, HostRunHandle, HostWorker
from simpler.host.orchestrator import HostOrchestrator
from simpler.host.transport import ChipTransport, LocalTransport

__all__ = ["HostWorker", "HostRunHandle", "HostOrchestrator", "CallableHandle", "ChipTransport",
           "LocalTransport", "ChipGroupError", "ChipTaskError", "RankError"]


def dispatch_level(level: int, kwargs: dict) -> HostWorker:
    """The uninitialized object ``Worker(level=3|4, ...)`` returns (Python then calls its
    ``__init__`` with the same arguments, which validates them)."""
    from simpler.host.host_worker import check_mode
    check_mode(level, kwargs.get("execution_mode", "program"))
    if level == 4:
        from simpler.host.mpi import MpiWorker
        return object.__new__(MpiWorker)
    return object.__new__(HostWorker)
