#!/usr/bin/env python3
"""vector_add: c = a + b over 16,384 float32 on the simulated chip (program mode)."""
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from example_support import Kernel, Stopwatch, build_chip_program, report  # noqa: E402

from simpler import Worker  # noqa: E402
from simpler.task_interface import ArgDirection as D, ChipStorageTaskArgs, ChipTensor  # noqa: E402

N = 16384


def main() -> int:
    with Stopwatch() as compile_time:
        program = build_chip_program(
            HERE, orchestration="orchestration.cpp", entry="vector_add",
            signature=[D.IN, D.IN, D.OUT],
            kernels=[Kernel(0, "kernels/add.cpp", "aiv", [D.IN, D.IN, D.OUT])])

    rng = np.random.default_rng(2024)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    c = np.zeros(N, dtype=np.float32)
    args = ChipStorageTaskArgs()
    for array in (a, b, c):
        args.add_tensor(ChipTensor.from_array(array))  # HOST tensors: staged by the runtime

    with Worker(level=2, device_id=0, platform="a2a3sim",
                runtime="tensormap_and_ringbuffer") as worker:
        handle = worker.register(program)
        with Stopwatch() as init_time:
            worker.init()
        with Stopwatch() as run_time:
            worker.run(handle, args)

    expected = a + b
    mismatches = int(np.count_nonzero(c != expected))
    return report("vector_add", f"c == a + b for {N} float32 elements against numpy (exact)",
                  mismatches == 0,
                  {"compile": compile_time.seconds, "init": init_time.seconds,
                   "run": run_time.seconds},
                  f"{mismatches} elements differ" if mismatches else "")


if __name__ == "__main__":
    sys.exit(main())
