"""The one interface between a host-level orchestrator and the chip workers it drives.

The orchestrator (simpler.host.orchestrator) never touches a chip worker directly: it
allocates, copies and runs through a :class:`ChipTransport`. Level 3 uses
:class:`LocalTransport` (every chip worker in this process); level 4 uses
``simpler.host.mpi.MpiTransport`` (chips of other hosts behind MPI ranks). Chips are
numbered 0..n-1 by the transport ("slots"); ``chip_name(slot)`` says what a slot is.

Everything that crosses the interface is plain data (ints, bytes, numpy views), so a
transport can ship it over a wire: a run is (callable key, tensors as (device pointer,
shape, dtype code), scalars as 64-bit patterns).
"""
from __future__ import annotations

import abc
from typing import Any, Dict, List, Optional, Sequence, Tuple

from simpler.errors import SimplerValueError
# A tensor argument of a chip run: (device pointer on that chip, shape, DataType code).
TensorRef = Tuple[int, Tuple[int, ...], int]


class ChipTransport(abc.ABC):
    """What a host orchestrator needs from the chips it drives (thread-safe per slot:
    the orchestrator issues the calls of one slot from one thread at a time, and calls of
    different slots concurrently)."""

    @property
    @abc.abstractmethod
    def chip_count(self) -> int:
        """Number of chip slots."""

    @abc.abstractmethod
    def chip_name(self, slot: int) -> str:
        """Human-readable name of a slot for messages, e.g. ``"device 1"``."""

    @abc.abstractmethod
    def register(self, key: int, image: bytes) -> None:
        """Makes the ChipCallable image known on every chip under ``key``."""

    @abc.abstractmethod
    def unregister(self, key: int) -> None:
        """Forgets ``key`` on every chip."""

    @abc.abstractmethod
    def run(self, slot: int, key: int, tensors: Sequence[TensorRef], scalars: Sequence[int],
            config: Any = None) -> None:
        """Runs callable ``key`` on the chip and blocks until it finished; raises its error."""

    @abc.abstractmethod
    def malloc(self, slot: int, nbytes: int) -> int:
        """Device memory on the chip (accounted to the chip's worker)."""

    @abc.abstractmethod
    def free(self, slot: int, ptr: int) -> None:
        """Frees memory returned by :meth:`malloc` of the same slot."""

    @abc.abstractmethod
    def copy_to(self, slot: int, dst: int, src: Any) -> None:
        """Host buffer ``src`` (all of it) to device memory ``dst`` on the chip."""

    @abc.abstractmethod
    def copy_from(self, slot: int, dst: Any, src: int) -> None:
        """Device memory ``src`` on the chip into the writable host buffer ``dst`` (all of it)."""

    @abc.abstractmethod
    def copy_peer(self, dst_slot: int, dst: int, src_slot: int, src: int, nbytes: int) -> None:
        """Device-to-device copy between two chips (or within one)."""

    @abc.abstractmethod
    def memory_info(self, slot: int) -> Tuple[int, int]:
        """``(free, total)`` bytes of the chip's device."""

    @abc.abstractmethod
    def committed(self, slot: int) -> int:
        """Bytes of device memory the chip's worker holds."""

    @abc.abstractmethod
    def close(self) -> Dict[int, BaseException]:
        """Tears every chip down; returns every failure by slot (empty on success)."""


class LocalTransport(ChipTransport):
    """Level 3: one program-mode level-2 Worker per device, all in this process.

    Device-to-device copies use the simulated driver's peer copy (``sim.memcpy_dtod``,
    which crosses devices); a platform without a peer copy goes through the host.
    """

    def __init__(self, device_ids: Sequence[int], platform: str, runtime: str,
                 lib_dir: Optional[str] = None, enable_sdma: bool = False) -> None:
        self._device_ids = list(device_ids)
        self._platform = platform
        self._runtime = runtime
        self._lib_dir = lib_dir
        self._enable_sdma = enable_sdma
        self._workers: List[Any] = []
        self._handles: Dict[int, List[Any]] = {}
        self._close_grace: Optional[float] = None   # Worker.close_grace of every chip
        self._peer_copy = platform.endswith("sim")

    @property
    def device_ids(self) -> List[int]:
        return list(self._device_ids)

    @property
    def chip_count(self) -> int:
        return len(self._device_ids)

    def chip_name(self, slot: int) -> str:
        return f"device {self._device_ids[slot]}"

    @property
    def addressable(self) -> bool:
        """True when device memory is host memory this process can address (the simulator):
        level 4 then moves data straight from and into it."""
        return self._peer_copy

    def worker(self, slot: int) -> Any:
        """The level-2 Worker of a slot (READY after :meth:`init`)."""
        return self._workers[slot]

    # ---- lifecycle ----------------------------------------------------------------------
    def check_build(self) -> None:
        """The runtime build every chip would load, found or refused as level 2's init does
        first (an unknown platform/runtime, a missing file): bad input, nothing taken."""
        from simpler.builds import find_build
        find_build(self._platform, self._runtime, self._lib_dir)

    def init(self, prewarm_config: Any = None) -> None:
        """Brings every chip up, or none: a failure on chip k closes chips 0..k-1 and
        raises :class:`simpler.host.errors.ChipGroupError` naming device k."""
        from simpler.host.errors import ChipGroupError
        from simpler.worker import Worker
        for slot, device in enumerate(self._device_ids):
            worker = Worker(level=2, device_id=device, platform=self._platform,
                            runtime=self._runtime, enable_sdma=self._enable_sdma,
                            lib_dir=self._lib_dir)
            if self._close_grace is not None:
                worker.close_grace = self._close_grace
            try:
                self._init_chip(worker, prewarm_config)
            except BaseException as error:  # noqa: BLE001 - rolled back, then re-raised
                failures: Dict[int, BaseException] = {device: error}
                try:
                    worker.close()
                except BaseException as close_error:  # noqa: BLE001
                    failures.setdefault(device, close_error)
                rollback = self._close_workers()
                self._workers = []
                for done_slot, close_error in rollback.items():
                    failures[self._device_ids[done_slot]] = close_error
                raise ChipGroupError(
                    f"Worker(level=3).init: device {device} (chip {slot} of "
                    f"{len(self._device_ids)}) failed to initialize: {error}; devices "
                    f"{self._device_ids[:slot]} were rolled back"
                    + ("" if len(rollback) == 0 else
                       f" (rollback failed on {sorted(failures)[1:]})"),
                    failures) from error
            self._workers.append(worker)

    def set_close_grace(self, seconds: float) -> None:
        """Every chip's Worker.close_grace (seconds, already validated), now and at init."""
        self._close_grace = seconds
        for worker in self._workers:
            worker.close_grace = seconds

    @staticmethod
    def _init_chip(worker: Any, prewarm_config: Any) -> None:
        # One place that brings a chip up (tests wrap it to inject a fault on chip k).
        worker.init(prewarm_config)

    def _close_workers(self) -> Dict[int, BaseException]:
        failures: Dict[int, BaseException] = {}
        for slot, worker in enumerate(self._workers):
            try:
                worker.close()
            except BaseException as error:  # noqa: BLE001 - every failure is reported
                failures[slot] = error
        return failures

    def close(self) -> Dict[int, BaseException]:
        failures = self._close_workers()
        if not failures:
            self._workers = []
            self._handles.clear()
        return failures

    # ---- callables ----------------------------------------------------------------------
    def register(self, key: int, image: bytes) -> None:
        from simpler.task_interface import ChipCallable
        callable_ = ChipCallable.from_bytes(image)
        handles = []
        try:
            for worker in self._workers:
                handles.append(worker.register(callable_))
        except BaseException:
            for worker, handle in zip(self._workers, handles):
                worker.unregister(handle)
            raise
        self._handles[key] = handles

    def unregister(self, key: int) -> None:
        for worker, handle in zip(self._workers, self._handles.pop(key, [])):
            worker.unregister(handle)

    def run(self, slot: int, key: int, tensors: Sequence[TensorRef], scalars: Sequence[int],
            config: Any = None) -> None:
        from simpler.task_interface import ChipStorageTaskArgs, ChipTensor, DataType
        args = ChipStorageTaskArgs()
        for ptr, shape, dtype in tensors:
            args.add_tensor(ChipTensor.make(ptr, list(shape), DataType(dtype)))
        for bits in scalars:
            args.add_scalar_u64(bits)
        self._workers[slot].run(self._handles[key][slot], args, config)

    # ---- memory -------------------------------------------------------------------------
    def malloc(self, slot: int, nbytes: int) -> int:
        return self._workers[slot].malloc(nbytes)

    def free(self, slot: int, ptr: int) -> None:
        self._workers[slot].free(ptr)

    def copy_to(self, slot: int, dst: int, src: Any) -> None:
        self._workers[slot].copy_to(dst, src)

    def copy_from(self, slot: int, dst: Any, src: int) -> None:
        self._workers[slot].copy_from(dst, src)

    def copy_peer(self, dst_slot: int, dst: int, src_slot: int, src: int, nbytes: int) -> None:
        if self._peer_copy:
            from simpler import sim
            sim.memcpy_dtod(dst, src, nbytes)
            return
        import numpy as np
        staging = np.empty(nbytes, dtype=np.uint8)
        self._workers[src_slot].copy_from(staging, src)
        self._workers[dst_slot].copy_to(dst, staging)

    def device_view(self, slot: int, ptr: int, nbytes: int) -> Optional[Any]:
        """A writable numpy uint8 view of device memory [ptr, ptr + nbytes) on the simulated
        platform (device memory is host memory there), so MPI can send from and receive into
        it directly, as device-aware MPI does on real hardware; None on other platforms.
        The range must lie inside one live allocation of the chip (checked)."""
        if not self._peer_copy:
            return None
        import ctypes

        import numpy as np
        from simpler import sim
        if sim.pointer_device(ptr, nbytes) != self._device_ids[slot]:
            raise SimplerValueError(f"device range {ptr:#x}+{nbytes} is not on {self.chip_name(slot)}")
        return np.frombuffer((ctypes.c_uint8 * nbytes).from_address(ptr), dtype=np.uint8)

    def read_device(self, slot: int, dst: Any, src: int) -> None:
        """Like copy_from, without waiting for a run in progress on the chip (the sim's
        driver copy; level 4 uses it to serve transfers while the chip computes)."""
        if self._peer_copy:
            from simpler import sim
            sim.memcpy_dtoh(dst, src)
        else:
            self.copy_from(slot, dst, src)

    def write_device(self, slot: int, dst: int, src: Any) -> None:
        """Like copy_to, without waiting for a run in progress on the chip."""
        if self._peer_copy:
            from simpler import sim
            sim.memcpy_htod(dst, src)
        else:
            self.copy_to(slot, dst, src)

    def memory_info(self, slot: int) -> Tuple[int, int]:
        return self._workers[slot].device_memory_info()

    def committed(self, slot: int) -> int:
        return self._workers[slot].committed_device_memory()
