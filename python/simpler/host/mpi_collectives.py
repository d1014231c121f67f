"""Collectives of a level-4 orchestration carried by MPI's own collectives.

Which path a collective takes (docs/multi-host.md): one chip on every rank in rank order ->
one MPI collective (below); an all_reduce over a group with a chip on every rank and
several on some -> hierarchical_all_reduce; anything else -> simpler's ring / tree
(simpler.host.collectives).

When a collective's group is **one chip on every rank, in rank order** (``chips[i]`` on rank
i) and device memory is addressable (the simulator), the collective is one MPI nonblocking
collective over the ranks — ``MPI_Iallreduce``, ``MPI_Ireduce_scatter``,
``MPI_Iallgatherv``, ``MPI_Ibcast``, ``MPI_Ialltoallv`` — on copies of the chips' device
buffers (src/python/mpi/collective.h says why), instead of simpler's ring of point-to-point
copies and chip reductions. It is still one task of the orchestration: its dependencies
are inferred from its arrays like any task's, its inputs are staged on the chips first, and
its consumers wait for it.

Order: every member rank must post its collectives in the same order. Rank 0 launches each
one to all members at once, under one lock (the requests to a rank arrive in the order they
were sent, and each rank's progress thread posts them in arrival order), then waits for
every member's part. float16/bfloat16 reductions use MPI operators with the chip's numerics
(widen to float, combine, round to nearest even).
"""
from __future__ import annotations

from typing import Any, Callable, List, Sequence, Tuple

import numpy as np

from simpler.host.collectives import Step, chunks

ALLREDUCE, ALLGATHERV, REDUCE_SCATTER, BCAST, ALLTOALLV = 1, 2, 3, 4, 5
_KIND_COLLECTIVE = 6

# One participant's part: (header fields in wire order, int64 counts payload).
Part = Tuple[List[int], List[int]]


def _header(coll: int, local: int, addr: int, nbytes: int, addr2: int = 0, nbytes2: int = 0,
            dtype: int = 0, op: int = 0, count: int = 0, root: int = 0) -> List[int]:
    return [_KIND_COLLECTIVE, 0, local, addr, nbytes, 0, 0, 0, addr2, coll, dtype, op, count,
            root, nbytes2]


def _addr(buf: Any) -> int:
    return 0 if buf is None else buf.addr(buf.lo)


def mpi_body(locals_: Sequence[int], part: Callable[[Step, int, int], Part]) -> Callable[[Step, int], None]:
    """The body of a solo task (orchestrator._Task): the first chip's executor stages every
    chip's inputs, then launches the collective on every rank and waits for all of it (its
    own part, and the other ranks' replies); the other chips' executors take no part."""
    def body(s: Step, r: int) -> None:
        transport = s.run.transport
        transport.collective([part(s, i, locals_[i]) for i in range(s.g)], s.task.name)
        s.run.count_mpi_collective()
    body.solo = True  # type: ignore[attr-defined]
    return body


def all_reduce(locals_: Sequence[int], op: int, n: int) -> Callable[[Step, int], None]:
    def part(s: Step, i: int, local: int) -> Part:
        return _header(ALLREDUCE, local, _addr(s.inputs[i]), n * s.esize, dtype=s.dtype, op=op,
                       count=n), []
    return mpi_body(locals_, part)


def hierarchical_all_reduce(plan: Sequence[Sequence[int]], op: int,
                            n: int) -> Callable[[Step, int], None]:
    """all_reduce over a group with a chip on every rank, some rank holding several:
    plan[k] = the group indices on rank k, the first its leader. (1) each leader reduces
    its rank's chips into its own buffer (device-to-device copies within the rank and the
    chip reduction program), (2) the leaders all-reduce through MPI (rank 0's launches),
    (3) every other chip copies the result from its leader."""
    rank_of = {i: k for k, members in enumerate(plan) for i in members}
    root = plan[0][0]

    def body(s: Step, r: int) -> None:
        members = plan[rank_of[r]]
        leader = members[0]
        if r == leader and len(members) > 1:
            with s.scratch(r, n) as tmp:
                for m in members[1:]:
                    s.copy(r, tmp, m, _addr(s.inputs[m]), n)
                    s.reduce(r, _addr(s.inputs[r]), tmp, n, op)
        s.sync()
        if r == root:
            transport = s.run.transport
            parts = [(_header(ALLREDUCE, transport.local_index(s.slots[p[0]]),
                              _addr(s.inputs[p[0]]), n * s.esize, dtype=s.dtype, op=op,
                              count=n), []) for p in plan]
            transport.collective(parts, s.task.name)
            s.run.count_mpi_collective()
        s.sync()
        if r != leader:
            s.copy(r, _addr(s.inputs[r]), leader, _addr(s.inputs[leader]), n)
    return body


def reduce_scatter(locals_: Sequence[int], op: int, n: int) -> Callable[[Step, int], None]:
    def part(s: Step, i: int, local: int) -> Part:
        sizes = [size for _, size in chunks(n, s.g)]
        return _header(REDUCE_SCATTER, local, _addr(s.inputs[i]), n * s.esize,
                       _addr(s.outputs[i]), sizes[i] * s.esize, dtype=s.dtype, op=op), sizes
    return mpi_body(locals_, part)


def all_gather(locals_: Sequence[int], sizes: Sequence[int]) -> Callable[[Step, int], None]:
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()

    def part(s: Step, i: int, local: int) -> Part:
        e = s.esize
        return (_header(ALLGATHERV, local, _addr(s.inputs[i]), sizes[i] * e, _addr(s.outputs[i]),
                        offsets[-1] * e, count=sizes[i] * e),
                [size * e for size in sizes] + [off * e for off in offsets[:-1]])
    return mpi_body(locals_, part)


def broadcast(locals_: Sequence[int], root: int, n: int) -> Callable[[Step, int], None]:
    def part(s: Step, i: int, local: int) -> Part:
        return _header(BCAST, local, _addr(s.inputs[i]), n * s.esize, count=n * s.esize,
                       root=root), []
    return mpi_body(locals_, part)


def all_to_all(locals_: Sequence[int], n: int) -> Callable[[Step, int], None]:
    def part(s: Step, i: int, local: int) -> Part:
        e, parts = s.esize, chunks(n, s.g)
        mine = parts[i][1]
        return (_header(ALLTOALLV, local, _addr(s.inputs[i]), n * e, _addr(s.outputs[i]),
                        s.g * mine * e),
                [size * e for _, size in parts] + [off * e for off, _ in parts]
                + [mine * e] * s.g + [j * mine * e for j in range(s.g)])
    return mpi_body(locals_, part)
