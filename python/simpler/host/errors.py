"""Typed errors of the levels above the chip (all derive from simpler.errors.SimplerError)."""
from __future__ import annotations

from typing import Dict, Optional

from simpler.errors import PTO_RUNTIME_ERR_INTERNAL, ChipWorkerError, SimplerError


def _code_of(error: Optional[BaseException]) -> int:
    # Every SimplerError carries an int status; another exception (a bug, OSError) is INTERNAL.
    code = getattr(error, "code", None)
    return PTO_RUNTIME_ERR_INTERNAL if code is None else int(code)


class ChipGroupError(ChipWorkerError):
    """Bringing up or tearing down several chips failed.

    ``.failures`` maps every device (level 3) or ``(rank, device)`` (level 4) that failed
    to its exception; ``.code`` is the status of the first failure."""

    def __init__(self, message: str, failures: Dict[object, BaseException]) -> None:
        first = next(iter(failures.values()), None)
        super().__init__(message, _code_of(first))
        self.failures: Dict[object, BaseException] = dict(failures)


class ChipTaskError(ChipWorkerError):
    """A task of a host-level orchestration failed on a chip (or was skipped because a
    task it depends on failed). ``.device`` names the chip, ``.task`` the task number,
    ``.code`` is the chip's status."""

    def __init__(self, message: str, device: str, task: int,
                 cause: Optional[BaseException] = None) -> None:
        super().__init__(message, _code_of(cause))
        self.device = device
        self.task = task


class RankError(SimplerError):
    """Level 4: a rank died, stopped answering within the configured time, or reported a
    failure. ``.rank`` names it."""

    def __init__(self, message: str, rank: int, code: int = PTO_RUNTIME_ERR_INTERNAL) -> None:
        super().__init__(message, code)
        self.rank = rank
