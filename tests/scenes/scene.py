"""The scene-test framework: a whole program checked against numpy on every runtime and mode.

A ``Scene`` is a chip program (orchestration + kernels), an input generator with a fixed
seed, a numpy golden, and the names of the arguments it checks. ``run_scene`` runs it on
one runtime in one mode and returns the outputs; ``check_outputs`` compares them with the
golden within the dtype's tolerance and, on a mismatch, names the first differing elements
and the largest absolute and relative errors.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from simpler import Worker, sim
from simpler.task_interface import (ArgDirection, CallConfig, ChipCallable, ChipStorageTaskArgs,
                                    ChipTensor, DataType)

RUNTIMES = {"tmr": "tensormap_and_ringbuffer", "hbg": "host_build_graph"}
# (runtime, mode) pairs a scene runs in: HBG has no kernel mode. "pipelined" is program
# mode with one run per step and CallConfig(pipeline_depth=PIPELINE_DEPTH), for the
# scenes that define it (Scene.pipelined).
MODES = [("tmr", "program"), ("hbg", "program"), ("tmr", "kernel"), ("tmr", "pipelined"),
         ("hbg", "pipelined")]
PIPELINE_DEPTH = 2
# Relative to the largest golden magnitude: |got - want| <= atol * scale + rtol * |want|.
TOLERANCE: Dict[str, Tuple[float, float]] = {
    "float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (4e-2, 4e-2)}
STORAGE_DTYPE = {"float32": DataType.FLOAT32, "float16": DataType.FLOAT16,
                 "bfloat16": DataType.BFLOAT16}


@dataclass
class Scene:
    """One program with its inputs and golden. Arrays are in storage form (see layer.py)."""
    name: str
    program: Callable[[], ChipCallable]
    arg_names: Sequence[str]                      # tensors in signature order
    directions: Sequence[ArgDirection]            # one per tensor
    scalars: Sequence[int]
    make_inputs: Callable[[str], Dict[str, np.ndarray]]
    golden: Callable[[Dict[str, np.ndarray], str], Dict[str, np.ndarray]]
    load: Callable[[np.ndarray, str], np.ndarray]  # storage form -> float32
    dtypes: Sequence[str] = ("float32", "bfloat16")
    tasks: int = 0                                # tasks per run, for reports
    checked: List[str] = field(default_factory=list)
    # (worker, handle, arrays, dtype, depth) -> seconds at each step's completion: the
    # scene as one run per step, pipelined `depth` deep (None: no such form).
    pipelined: Optional[Callable[[Any, Any, Dict[str, np.ndarray], str, int], List[float]]] = None


def supports(scene: Scene, mode: str) -> bool:
    """Whether ``scene`` runs in ``mode``."""
    return mode != "pipelined" or scene.pipelined is not None


def _host_args(scene: Scene, arrays: Dict[str, np.ndarray], dtype: str) -> ChipStorageTaskArgs:
    args = ChipStorageTaskArgs()
    for name in scene.arg_names:
        args.add_tensor(ChipTensor.from_array(arrays[name], dtype=STORAGE_DTYPE[dtype]))
    for value in scene.scalars:
        args.add_scalar(value)
    return args


def _rounds_on_a_worker(scene: Scene, runtime: str, arrays: Dict[str, np.ndarray],
                        rounds: int, device_id: int,
                        one_round: Callable[[Worker, object], float]) -> List[float]:
    """Registers the scene on a program-mode Worker and calls ``one_round(worker, handle)``
    ``rounds`` times, each from the same inputs; returns what each round returned."""
    seconds = []
    with Worker(level=2, device_id=device_id, platform="a2a3sim",
                runtime=RUNTIMES[runtime]) as worker:
        handle = worker.register(scene.program())
        worker.init()
        originals = {name: arrays[name].copy() for name in scene.arg_names}
        for _ in range(rounds):
            for name in scene.arg_names:  # every round starts from the same inputs
                arrays[name][...] = originals[name]
            seconds.append(one_round(worker, handle))
    return seconds


def run_program_mode(scene: Scene, runtime: str, arrays: Dict[str, np.ndarray], dtype: str,
                     rounds: int = 1, device_id: int = 0) -> List[float]:
    """Runs the scene ``rounds`` times in program mode (HOST tensors, staged by simpler);
    returns the seconds of each run. ``arrays`` holds the outputs of the last run."""
    def one_run(worker: Worker, handle: object) -> float:
        args = _host_args(scene, arrays, dtype)
        start = time.perf_counter()
        worker.run(handle, args)
        return time.perf_counter() - start
    return _rounds_on_a_worker(scene, runtime, arrays, rounds, device_id, one_run)


def run_pipelined(scene: Scene, runtime: str, arrays: Dict[str, np.ndarray], dtype: str,
                  rounds: int = 1, depth: int = PIPELINE_DEPTH, device_id: int = 0) -> List[float]:
    """Runs the scene as one run per step, ``depth`` runs in flight; seconds per round."""
    assert scene.pipelined is not None, f"scene {scene.name} has no pipelined form"
    return _rounds_on_a_worker(
        scene, runtime, arrays, rounds, device_id,
        lambda worker, handle: scene.pipelined(worker, handle, arrays, dtype, depth)[-1])


def run_kernel_mode(scene: Scene, arrays: Dict[str, np.ndarray], dtype: str, rounds: int = 1,
                    device_id: int = 0) -> List[float]:
    """Runs the scene in kernel mode: the caller owns the device, the stream and the device
    buffers; simpler enqueues on the caller's stream. Returns seconds per launch+sync."""
    sim.set_device(device_id)
    stream = sim.Stream()
    buffers = {name: sim.malloc(max(arrays[name].nbytes, 1)) for name in scene.arg_names}
    worker = Worker(level=2, execution_mode="kernel", device_id=device_id, platform="a2a3sim",
                    runtime=RUNTIMES["tmr"])
    seconds = []
    try:
        worker.init(config=CallConfig())
        cid = worker.kernel_prepare_callable(scene.program())
        args = ChipStorageTaskArgs()
        for name in scene.arg_names:
            args.add_tensor(ChipTensor.make(buffers[name], arrays[name].shape,
                                            STORAGE_DTYPE[dtype]))
        for value in scene.scalars:
            args.add_scalar(value)
        for _ in range(rounds):
            for name in scene.arg_names:
                sim.memcpy_htod(buffers[name], np.ascontiguousarray(arrays[name]))
            start = time.perf_counter()
            worker.kernel_launch(cid, args, caller_stream=stream.handle)
            stream.synchronize()
            seconds.append(time.perf_counter() - start)
        for name, direction in zip(scene.arg_names, scene.directions):
            if direction in (ArgDirection.OUT, ArgDirection.INOUT):
                sim.memcpy_dtoh(arrays[name], buffers[name])
    finally:
        worker.close()
        for buffer in buffers.values():
            sim.free(buffer)
        stream.destroy()
    return seconds


def run_scene(scene: Scene, runtime: str, mode: str, dtype: str,
              rounds: int = 1) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray], List[float]]:
    """Runs one scene; returns (inputs, outputs, seconds per round)."""
    inputs = scene.make_inputs(dtype)
    arrays = {name: a.copy() for name, a in inputs.items()}
    if mode == "kernel":
        seconds = run_kernel_mode(scene, arrays, dtype, rounds)
    elif mode == "pipelined":
        seconds = run_pipelined(scene, runtime, arrays, dtype, rounds)
    else:
        seconds = run_program_mode(scene, runtime, arrays, dtype, rounds)
    return inputs, arrays, seconds


def compare(name: str, got: np.ndarray, want: np.ndarray, dtype: str) -> str:
    """'' when ``got`` matches ``want`` within the dtype's tolerance, else a report."""
    rtol, atol = TOLERANCE[dtype]
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    if got.shape != want.shape:
        return f"{name}: shape {got.shape}, expected {want.shape}"
    scale = max(float(np.max(np.abs(want))), 1e-30) if want.size else 1.0
    diff = np.abs(got - want)
    bad = ~(diff <= atol * scale + rtol * np.abs(want))  # NaN counts as bad
    if not bad.any():
        return ""
    rel = diff / np.maximum(np.abs(want), 1e-30)
    first = [f"{tuple(int(i) for i in idx)}: got {got[tuple(idx)]:.6g}, "
             f"expected {want[tuple(idx)]:.6g}" for idx in np.argwhere(bad)[:5]]
    return (f"{name} ({dtype}): {int(bad.sum())} of {bad.size} elements differ "
            f"(max abs error {np.nanmax(diff):.3g}, max rel error {np.nanmax(rel):.3g}, "
            f"tolerance {atol:g}*{scale:.3g} + {rtol:g}*|expected|); first: " + "; ".join(first))


def check_outputs(scene: Scene, inputs: Dict[str, np.ndarray], outputs: Dict[str, np.ndarray],
                  dtype: str) -> List[str]:
    """The mismatch reports of every checked output (empty when all match)."""
    want = scene.golden(inputs, dtype)
    reports = []
    for name in scene.checked:
        report = compare(name, scene.load(outputs[name], dtype), want[name], dtype)
        if report:
            reports.append(report)
    return reports
