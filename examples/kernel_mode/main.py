#!/usr/bin/env python3
"""kernel_mode: a framework that owns device 0 and a stream enqueues a whole chip
program (y = x + s over 16,384 float32) on *its* stream through simpler.

simpler never selects, synchronizes or resets anything it does not own: the framework
makes the device current, creates the stream, allocates and fills the device tensors,
and synchronizes its stream itself.
"""
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from example_support import Kernel, Stopwatch, build_chip_program, report  # noqa: E402

from simpler import Worker, sim  # noqa: E402
from simpler.task_interface import (ArgDirection as D, CallConfig, ChipStorageTaskArgs,  # noqa: E402
                                    ChipTensor, DataType)

N = 16384
SCALAR = 1.5


def main() -> int:
    with Stopwatch() as compile_time:
        program = build_chip_program(
            HERE, orchestration="orchestration.cpp", entry="add_scalar_orchestration",
            signature=[D.IN, D.OUT, D.SCALAR],
            kernels=[Kernel(0, "kernels/add_scalar.cpp", "aiv", [D.IN, D.OUT, D.SCALAR])])

    # ---- the framework side: it owns device 0, a stream and the device tensors ----------
    sim.set_device(0)
    stream = sim.Stream()
    x = np.arange(N, dtype=np.float32) * np.float32(0.25) - np.float32(1000)
    y = np.zeros(N, dtype=np.float32)
    x_dev = sim.malloc(x.nbytes)
    y_dev = sim.malloc(y.nbytes)
    sim.memcpy_htod(x_dev, x)
    args = ChipStorageTaskArgs()
    args.add_tensor(ChipTensor.make(x_dev, (N,), DataType.FLOAT32))
    args.add_tensor(ChipTensor.make(y_dev, (N,), DataType.FLOAT32))
    args.add_scalar_f32(SCALAR)

    # ---- simpler in kernel mode: enqueue the whole chip program on the caller's stream ----
    worker = Worker(level=2, execution_mode="kernel", device_id=0,
                    platform="a2a3sim", runtime="tensormap_and_ringbuffer")
    assert worker.kernel_mode_supported  # answered before init, no device taken
    with Stopwatch() as init_time:
        worker.init(config=CallConfig())  # device 0 is already current on this thread
    try:
        callable_id = worker.kernel_prepare_callable(program)
        with Stopwatch() as launch_time:
            worker.kernel_launch(callable_id, args, caller_stream=stream.handle)  # enqueues, returns
        with Stopwatch() as sync_time:
            stream.synchronize()  # the caller synchronizes its own stream
    finally:
        worker.close()

    sim.memcpy_dtoh(y, y_dev)
    sim.free(x_dev)
    sim.free(y_dev)
    stream.destroy()

    expected = x + np.float32(SCALAR)
    mismatches = int(np.count_nonzero(y != expected))
    return report("kernel_mode", f"y == x + {SCALAR} for {N} float32 elements on the caller's "
                  "stream against numpy (exact)", mismatches == 0,
                  {"compile": compile_time.seconds, "init": init_time.seconds,
                   "launch (enqueue)": launch_time.seconds,
                   "stream synchronize": sync_time.seconds},
                  f"{mismatches} elements differ" if mismatches else "")


if __name__ == "__main__":
    sys.exit(main())
