"""Collectives between chips as host-orchestration steps (ring and tree algorithms).

Each collective is one task over a group of chips (one array per chip, ``arrays[i]`` lives
on ``chips[i]``): its dependencies are inferred from the arrays it reads and writes like any
task's, and every participating chip's executor runs its own part, step by step, with a
barrier between steps. Data moves device to device (``ChipTransport.copy_peer``); reductions
run on the chips (a level-2 program, ``programs/reduce_*.cpp``: acc = op(acc, x)).

Chunks: an n-element array is cut into g chunks like ``numpy.array_split`` (the first
``n % g`` chunks have one element more), so sizes need not divide by the group.

Elements each chip i *receives* from other chips (``peer_received`` in the run stats),
with N the elements per array and c_i the size of chunk i:

==============  =========================  ==========================================
collective      algorithm                  elements received by chip i
==============  =========================  ==========================================
all_reduce      ring reduce-scatter, then  2N - c_i - c_(i+1)   (= 2N(g-1)/g when g | N)
                ring all-gather
reduce_scatter  ring                       N - c_(i-1)          (= N(g-1)/g)
all_gather      ring                       sum of the other chips' inputs
broadcast       binomial tree              N on every chip but the root, 0 on the root
all_to_all      pairwise exchange          (g - 1) * c_i
==============  =========================  ==========================================

Indices are modulo g. A chip sends what its neighbours receive, so in the rings each chip
also sends the amount it receives.
"""
from __future__ import annotations

import collections.abc
import numbers
import pathlib
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from simpler._counted import counted
from simpler.errors import SimplerTypeError, SimplerValueError
from simpler.host.orchestrator import HostRun, _Task, host_range

REDUCE_KEY = 0   # the transport key of the reduction program (user callables start at 1)
OPS = {"sum": 0, "max": 1, "min": 2}
_REDUCIBLE = ("FLOAT32", "FLOAT16", "BFLOAT16", "INT32")
_PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"


def reduce_program_image() -> bytes:
    """The reduction ChipCallable (compiled on first use; cached by KernelCompiler)."""
    from simpler import KernelCompiler
    from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable
    compiler = KernelCompiler()
    sig = [D.INOUT, D.IN, D.SCALAR]
    kernel = CoreCallable.build(
        sig, compiler.compile_kernel((_PROGRAMS / "reduce_kernel.cpp").read_text(), "aiv"))
    orch = compiler.compile_orchestration((_PROGRAMS / "reduce_orch.cpp").read_text(),
                                          entry="simpler_host_reduce")
    return ChipCallable.build(sig, "simpler_host_reduce", orch, children=[(0, kernel)]).bytes()


def chunks(n: int, g: int) -> List[Tuple[int, int]]:
    """(offset, size) in elements of the g chunks of n elements (numpy.array_split order)."""
    out, at = [], 0
    for i in range(g):
        size = n // g + (1 if i < n % g else 0)
        out.append((at, size))
        at += size
    return out


# numpy dtype -> DataType, of the dtypes seen (the lookup was a tenth of a small collective's
# submission)
_DTYPES: Dict[Any, Any] = {}


def _own_dtype(np_dtype: Any) -> Any:
    """The DataType of a numpy float dtype (cached in _DTYPES)."""
    from simpler.task_interface import DataType
    own = _DTYPES.get(np_dtype)
    if own is None:
        own = _DTYPES[np_dtype] = DataType.from_numpy(np_dtype)
    return own


class _Array:
    """One array argument: its host range, element count and dtype."""

    def __init__(self, array: Any, what: str, dtype: Any, allow_empty: bool = False,
                 writes: bool = False) -> None:
        from simpler.task_interface import DataType
        if allow_empty and isinstance(array, np.ndarray) and array.size == 0:
            self.array, self.lo, self.hi = array, 0, 0   # an empty chunk: nothing to stage
        else:
            self.array, self.lo, self.hi = host_range(array, what, writes)
        if dtype is None:
            dtype = _DTYPES.get(self.array.dtype)
        if dtype is None:
            try:
                dtype = _DTYPES[self.array.dtype] = DataType.from_numpy(self.array.dtype)
            except (TypeError, ValueError) as error:
                raise SimplerValueError(f"{what}: {error}") from None
        elif not isinstance(dtype, DataType):
            raise SimplerTypeError(f"{what}: dtype must be a simpler.task_interface.DataType (e.g. "
                                   f"DataType.BFLOAT16) or None, got {dtype!r}")
        self.dtype = DataType(dtype)
        if self.dtype.element_size != self.array.itemsize:
            raise SimplerValueError(f"{what}: dtype {self.dtype.name} has {self.dtype.element_size}-byte "
                                    f"elements but the array's are {self.array.itemsize} bytes")
        if self.array.dtype.kind == "f" and self.dtype != _own_dtype(self.array.dtype):
            # dtype= names the type of raw bits; a float array's values would be reinterpreted.
            raise SimplerValueError(f"{what}: the array is {self.array.dtype} but dtype={self.dtype.name}; "
                                    "dtype= names the element type of an integer array of raw bits "
                                    "(numpy has no bfloat16: uint16 arrays with DataType.BFLOAT16)")
        self.n = self.array.size


class Collective:
    """Validates a collective's arguments and submits it as one multi-chip task."""

    def __init__(self, owner: Any, run: HostRun, kind: str, chips: Optional[Sequence[Any]]) -> None:
        self.owner = owner
        self.run = run
        self.kind = kind
        self.api = f"HostOrchestrator.{kind}"
        if chips is None:                 # every chip, in slot order: nothing to check
            self.slots = list(range(len(owner._chips)))
        else:
            if isinstance(chips, (str, bytes)) or not hasattr(chips, "__iter__"):
                raise SimplerTypeError(f"{self.api}: chips must be a list of the worker's chips (or "
                                       f"None for all of them), got {chips!r}")
            if isinstance(chips, (collections.abc.Set, collections.abc.Mapping)):
                # Order is meaning: arrays[i] and chunk i belong to chips[i].
                raise SimplerTypeError(f"{self.api}: chips must be an ordered list (arrays[i] "
                                       f"belongs to chips[i]), got a {type(chips).__name__}")
            chips = list(chips)
            if not chips:
                raise SimplerValueError(f"{self.api}: the group of chips is empty")
            self.slots = [owner._slot_of(c, kind) for c in chips]
            if len(set(self.slots)) != len(self.slots):
                raise SimplerValueError(f"{self.api}: a chip appears twice in the group {chips}")
        self.g = len(self.slots)
        # Level 4: the local chip index on each rank when the group maps onto the ranks
        # (one chip per rank, in rank order) and MPI's own collectives can carry it.
        # ... and per rank the group indices of its chips, when the group spans every rank
        # (all_reduce then reduces on each rank's chips, and between the ranks through MPI).
        plan = getattr(run.transport, "mpi_plan", None)
        self.plan: Optional[List[List[int]]] = plan(self.slots) if plan is not None else None
        self.mpi: Optional[List[int]] = None
        if self.plan is not None:
            self.mpi = run.transport.mpi_group(self.slots, self.plan)

    def choose(self, ring: Callable[[], Callable[["Step", int], None]],
               mpi: Callable[[List[int]], Callable[["Step", int], None]]) -> Callable[["Step", int], None]:
        """The algorithm: MPI's collective when the group maps onto the ranks, else ours."""
        return mpi(self.mpi) if self.mpi is not None else ring()

    def arrays(self, values: Sequence[Any], name: str, dtype: Any, allow_empty: bool = False,
               writes: Callable[[int], bool] = lambda i: False) -> List[_Array]:
        """The group's arrays (``values[i]`` on chip i); ``writes(i)``: chip i's is written."""
        if not isinstance(values, (list, tuple)) or len(values) != self.g:
            raise SimplerValueError(f"{self.api}: {name} must be a list of {self.g} arrays (one per chip "
                                    f"of the group), got {_count(values)}")
        out = [_Array(v, f"{self.api} {name}[{i}]", dtype, allow_empty, writes(i))
               for i, v in enumerate(values)]
        for i, a in enumerate(out):
            self.owner._check_fits(self.slots[i], a.hi - a.lo, f"{self.api} {name}[{i}]")
        if len({a.dtype for a in out}) != 1:
            raise SimplerValueError(f"{self.api}: {name} mix dtypes {[a.dtype.name for a in out]}")
        return out

    def same_size(self, arrays: Sequence[_Array], name: str) -> int:
        sizes = [a.n for a in arrays]
        if len(set(sizes)) != 1:
            raise SimplerValueError(f"{self.api}: {name} must all have the same size, got {sizes}")
        return sizes[0]

    def same_dtype(self, inputs: Sequence[_Array], outputs: Sequence[_Array]) -> None:
        """The outputs hold the inputs' elements: another dtype would be reinterpreted bytes
        (or a copy past the end of a narrower output)."""
        if outputs[0].dtype != inputs[0].dtype:
            raise SimplerValueError(f"{self.api}: outputs are {outputs[0].dtype.name} but inputs are "
                                    f"{inputs[0].dtype.name}; give outputs of the inputs' dtype")

    def expect_sizes(self, arrays: Sequence[_Array], sizes: Sequence[int], name: str) -> None:
        got = [a.n for a in arrays]
        if got != list(sizes):
            raise SimplerValueError(f"{self.api}: {name} must have sizes {list(sizes)} (elements), "
                                    f"got {got}")

    def reducible(self, arrays: Sequence[_Array], op: str) -> int:
        if op not in OPS:
            raise SimplerValueError(f"{self.api}: op must be one of {sorted(OPS)}, got {op!r}")
        if arrays[0].dtype.name not in _REDUCIBLE:
            raise SimplerValueError(f"{self.api}: reductions support {', '.join(_REDUCIBLE)}; got "
                                    f"{arrays[0].dtype.name}")
        if self.mpi is None:              # MPI's collectives reduce without it
            self.owner._ensure_reduce_program()
        return OPS[op]

    @staticmethod
    def disjoint(*groups: Sequence[_Array]) -> None:
        """Refuses overlapping arrays: of two chips always (the same array object given for
        two chips too), of one chip unless they are the same array object."""
        flat = [(chip, a) for group in groups for chip, a in enumerate(group) if a.hi > a.lo]
        for i, (chip_a, a) in enumerate(flat):
            for chip_b, b in flat[i + 1:]:
                if not (a.lo < b.hi and b.lo < a.hi):
                    continue
                if chip_a != chip_b or a.array is not b.array:
                    raise SimplerValueError("collective: the arrays of different chips overlap in host "
                                            "memory; give every chip its own array")

    def submit(self, reads: Sequence[_Array], writes: Sequence[_Array], inout: bool,
               body: Callable[["Step", int], None]) -> int:
        """Enqueues the collective; ``reads[i]`` / ``writes[i]`` belong to chip i."""
        run = self.run
        if inout:
            accesses = [(a.array, a.lo, a.hi, True, True) for a in reads]
        else:
            accesses = ([(a.array, a.lo, a.hi, True, False) for a in reads]
                        + [(a.array, a.lo, a.hi, False, True) for a in writes if a.hi > a.lo])
        task = run.new_task(self.slots, self.kind, accesses, getattr(body, "solo", False))
        step = Step(run, task, self.slots)
        for r, slot in enumerate(self.slots):
            if reads:
                step.inputs.append(run.stage(task, slot, reads[r].lo, reads[r].hi, True))
            if writes:   # an empty output chunk (fewer elements than chips) has no buffer
                w = writes[r]
                step.outputs.append(run.stage(task, slot, w.lo, w.hi, False) if w.hi > w.lo
                                    else None)
        for buf in (step.inputs if inout else step.outputs):
            if buf is not None:
                run.residency.record_write(buf)
        step.dtype = int((reads or writes)[0].dtype)
        step.esize = (reads or writes)[0].dtype.element_size
        task.slot_body = lambda t, slot: body(step, self.slots.index(slot))
        run.enqueue(task)
        return task.seq


class Step:
    """What each participant's part of a collective uses: its buffers and the helpers."""

    def __init__(self, run: HostRun, task: _Task, slots: Sequence[int]) -> None:
        self.run = run
        self.task = task
        self.slots = list(slots)
        self.g = len(slots)
        self.inputs: List[Any] = []
        self.outputs: List[Any] = []
        self.dtype = 0
        self.esize = 1

    def sync(self) -> None:
        """Between the steps of an algorithm: every participant finished the previous one."""
        if self.task.barrier is not None:
            self.task.barrier.wait()

    def copy(self, r_dst: int, dst: int, r_src: int, src: int, elements: int) -> None:
        if elements <= 0:
            return
        nbytes = elements * self.esize
        self.run.transport.copy_peer(self.slots[r_dst], dst, self.slots[r_src], src, nbytes)
        self.run.count_peer(self.slots[r_dst], self.slots[r_src], nbytes)

    def reduce(self, r: int, acc: int, x: int, elements: int, op: int) -> None:
        if elements <= 0:
            return
        self.run.transport.run(self.slots[r], REDUCE_KEY, [(acc, (elements,), self.dtype),
                                                           (x, (elements,), self.dtype)], [op])

    def scratch(self, r: int, elements: int) -> "Scratch":
        return Scratch(self.run.transport, self.slots[r], max(elements, 1) * self.esize)


class Scratch:
    """Device memory of one participant for the duration of its part (freed on exit)."""

    def __init__(self, transport: Any, slot: int, nbytes: int) -> None:
        self.transport = transport
        self.slot = slot
        self.ptr = transport.malloc(slot, nbytes)

    def __enter__(self) -> int:
        return self.ptr

    def __exit__(self, *exc: Any) -> None:
        self.transport.free(self.slot, self.ptr)


# ---- the algorithms (run by every participant r of the group) -----------------------------

def ring_all_reduce(op: int, n: int) -> Callable[[Step, int], None]:
    def body(s: Step, r: int) -> None:
        g, parts = s.g, chunks(n, s.g)
        acc = s.inputs[r]
        left = (r - 1) % g
        with s.scratch(r, max(size for _, size in parts)) as tmp:
            for step in range(g - 1):   # reduce-scatter: r ends owning chunk r+1
                off, size = parts[(r - 1 - step) % g]
                s.copy(r, tmp, left, s.inputs[left].addr(s.inputs[left].lo) + off * s.esize,
                       size)
                s.reduce(r, acc.addr(acc.lo) + off * s.esize, tmp, size, op)
                s.sync()
        for step in range(g - 1):       # all-gather of the reduced chunks
            off, size = parts[(r - step) % g]
            s.copy(r, acc.addr(acc.lo) + off * s.esize, left,
                   s.inputs[left].addr(s.inputs[left].lo) + off * s.esize, size)
            s.sync()
    return body


def ring_reduce_scatter(op: int, n: int) -> Callable[[Step, int], None]:
    def body(s: Step, r: int) -> None:
        g, parts = s.g, chunks(n, s.g)
        left = (r - 1) % g
        src = s.inputs[r]
        with s.scratch(r, n) as work, s.scratch(r, max(size for _, size in parts)) as tmp:
            s.run.transport.copy_peer(s.slots[r], work, s.slots[r], src.addr(src.lo),
                                      n * s.esize)            # a local working copy
            works = s.task.shared.setdefault("work", {})
            works[r] = work
            s.sync()
            for step in range(g - 1):   # r ends owning chunk r
                off, size = parts[(r - 2 - step) % g]
                s.copy(r, tmp, left, works[left] + off * s.esize, size)
                s.reduce(r, work + off * s.esize, tmp, size, op)
                s.sync()
            off, size = parts[r]
            out = s.outputs[r]
            if size > 0:
                s.run.transport.copy_peer(s.slots[r], out.addr(out.lo), s.slots[r],
                                          work + off * s.esize, size * s.esize)
            s.sync()                    # nobody frees its work buffer while a peer reads it
    return body


def ring_all_gather(sizes: Sequence[int]) -> Callable[[Step, int], None]:
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()

    def body(s: Step, r: int) -> None:
        g = s.g
        left = (r - 1) % g
        src, out = s.inputs[r], s.outputs[r]
        s.run.transport.copy_peer(s.slots[r], out.addr(out.lo) + offsets[r] * s.esize,
                                  s.slots[r], src.addr(src.lo), sizes[r] * s.esize)
        s.sync()
        for step in range(g - 1):
            block = (r - 1 - step) % g
            base_left = s.outputs[left].addr(s.outputs[left].lo)
            s.copy(r, out.addr(out.lo) + offsets[block] * s.esize, left,
                   base_left + offsets[block] * s.esize, sizes[block])
            s.sync()
    return body


def tree_broadcast(root: int, n: int) -> Callable[[Step, int], None]:
    def body(s: Step, r: int) -> None:
        g = s.g
        rel = (r - root) % g
        buf = s.inputs[r]
        span = 1
        while span < g:                 # binomial tree: ranks [span, 2*span) pull
            if span <= rel < 2 * span:
                src = (rel - span + root) % g
                s.copy(r, buf.addr(buf.lo), src, s.inputs[src].addr(s.inputs[src].lo), n)
            s.sync()
            span *= 2
    return body


def pairwise_all_to_all(n: int) -> Callable[[Step, int], None]:
    def body(s: Step, r: int) -> None:
        g, parts = s.g, chunks(n, s.g)
        out = s.outputs[r]
        off_r, size_r = parts[r]
        if size_r == 0:
            return                      # an empty chunk: nothing comes to this chip
        for step in range(g):           # step 0 is this chip's own chunk (a local copy)
            src = (r - step) % g
            dst = out.addr(out.lo) + src * size_r * s.esize
            from_ = s.inputs[src].addr(s.inputs[src].lo) + off_r * s.esize
            if src == r:
                s.run.transport.copy_peer(s.slots[r], dst, s.slots[r], from_, size_r * s.esize)
            else:
                s.copy(r, dst, src, from_, size_r)
    return body


def _count(values: Any) -> str:
    try:
        return counted(len(values), "item")
    except TypeError:
        return type(values).__name__


def submit_all_reduce(owner: Any, run: HostRun, tensors: Sequence[Any], op: str,
                      chips: Optional[Sequence[Any]], dtype: Any) -> int:
    c = Collective(owner, run, "all_reduce", chips)
    arrays = c.arrays(tensors, "tensors", dtype, writes=lambda i: True)
    n = c.same_size(arrays, "tensors")
    code = c.reducible(arrays, op)
    c.disjoint(arrays)
    from simpler.host import mpi_collectives as m
    limit = getattr(run.transport, "mpi_all_reduce_max_bytes", None)
    if limit is not None and n * arrays[0].dtype.element_size > limit:
        c.plan = c.mpi = None    # large: MPI's path pays two host copies, the ring does not
    plan = c.plan
    if c.mpi is None and plan is not None:       # several chips on some rank: hierarchical
        return c.submit(arrays, [], True, m.hierarchical_all_reduce(plan, code, n))
    return c.submit(arrays, [], True, c.choose(lambda: ring_all_reduce(code, n),
                                               lambda g: m.all_reduce(g, code, n)))


def submit_reduce_scatter(owner: Any, run: HostRun, inputs: Sequence[Any], outputs: Sequence[Any],
                          op: str, chips: Optional[Sequence[Any]], dtype: Any) -> int:
    c = Collective(owner, run, "reduce_scatter", chips)
    ins = c.arrays(inputs, "inputs", dtype)
    outs = c.arrays(outputs, "outputs", dtype, allow_empty=True, writes=lambda i: True)
    c.same_dtype(ins, outs)
    n = c.same_size(ins, "inputs")
    c.expect_sizes(outs, [size for _, size in chunks(n, c.g)], "outputs")
    code = c.reducible(ins, op)
    c.disjoint(ins, outs)
    from simpler.host import mpi_collectives as m
    return c.submit(ins, outs, False, c.choose(lambda: ring_reduce_scatter(code, n),
                                               lambda g: m.reduce_scatter(g, code, n)))


def submit_all_gather(owner: Any, run: HostRun, inputs: Sequence[Any], outputs: Sequence[Any],
                      chips: Optional[Sequence[Any]], dtype: Any) -> int:
    c = Collective(owner, run, "all_gather", chips)
    ins = c.arrays(inputs, "inputs", dtype)
    outs = c.arrays(outputs, "outputs", dtype, writes=lambda i: True)
    c.same_dtype(ins, outs)
    sizes = [a.n for a in ins]
    c.expect_sizes(outs, [sum(sizes)] * c.g, "outputs")
    c.disjoint(ins, outs)
    from simpler.host import mpi_collectives as m
    return c.submit(ins, outs, False, c.choose(lambda: ring_all_gather(sizes),
                                               lambda g: m.all_gather(g, sizes)))


def submit_broadcast(owner: Any, run: HostRun, tensors: Sequence[Any], root: int,
                     chips: Optional[Sequence[Any]], dtype: Any) -> int:
    c = Collective(owner, run, "broadcast", chips)
    if not isinstance(root, numbers.Integral) or isinstance(root, bool) or not 0 <= root < c.g:
        raise SimplerValueError(f"{c.api}: root must be an index into the group 0..{c.g - 1}, got {root!r}")
    root = int(root)
    arrays = c.arrays(tensors, "tensors", dtype, writes=lambda i: True)  # copied back, root too
    n = c.same_size(arrays, "tensors")
    c.disjoint(arrays)
    from simpler.host import mpi_collectives as m
    return c.submit(arrays, [], True, c.choose(lambda: tree_broadcast(root, n),
                                               lambda g: m.broadcast(g, root, n)))


def submit_all_to_all(owner: Any, run: HostRun, inputs: Sequence[Any], outputs: Sequence[Any],
                      chips: Optional[Sequence[Any]], dtype: Any) -> int:
    c = Collective(owner, run, "all_to_all", chips)
    ins = c.arrays(inputs, "inputs", dtype)
    outs = c.arrays(outputs, "outputs", dtype, allow_empty=True, writes=lambda i: True)
    c.same_dtype(ins, outs)
    n = c.same_size(ins, "inputs")
    c.expect_sizes(outs, [c.g * size for _, size in chunks(n, c.g)], "outputs")
    c.disjoint(ins, outs)
    from simpler.host import mpi_collectives as m
    return c.submit(ins, outs, False, c.choose(lambda: pairwise_all_to_all(n),
                                               lambda g: m.all_to_all(g, n)))


COLLECTIVES: Dict[str, Callable[..., int]] = {
    "all_reduce": submit_all_reduce, "reduce_scatter": submit_reduce_scatter,
    "all_gather": submit_all_gather, "broadcast": submit_broadcast,
    "all_to_all": submit_all_to_all,
}
