#!/usr/bin/env python3
"""dag: f = (a+b+1)(a+b+2)+(a+b) as five dependent tasks with scalars and
runtime-allocated intermediates, on the simulated chip (program mode)."""
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
            HERE, orchestration="orchestration.cpp", entry="dag_orchestration",
            signature=[D.IN, D.IN, D.OUT, D.SCALAR, D.SCALAR],
            kernels=[Kernel(0, "kernels/add.cpp", "aiv", [D.IN, D.IN, D.OUT]),
                     Kernel(1, "kernels/add_scalar.cpp", "aiv", [D.IN, D.OUT, D.SCALAR]),
                     Kernel(2, "kernels/mul.cpp", "aiv", [D.IN, D.IN, D.OUT])])

    rng = np.random.default_rng(7)
    a = rng.uniform(-2, 2, N).astype(np.float32)
    b = rng.uniform(-2, 2, N).astype(np.float32)
    f = np.zeros(N, dtype=np.float32)
    args = ChipStorageTaskArgs()
    for array in (a, b, f):
        args.add_tensor(ChipTensor.from_array(array))
    args.add_scalar_f32(1.0)
    args.add_scalar_f32(2.0)

    with Worker(level=2, device_id=0, platform="a2a3sim",
                runtime="tensormap_and_ringbuffer") as worker:
        handle = worker.register(program)
        with Stopwatch() as init_time:
            worker.init()
        with Stopwatch() as run_time:
            worker.run(handle, args)

    # Same float32 operations in the same order as the kernels.
    c = a + b
    expected = (c + np.float32(1)) * (c + np.float32(2)) + c
    worst = float(np.max(np.abs(f - expected)))
    ok = bool(np.allclose(f, expected, rtol=1e-6, atol=1e-6))
    return report("dag", f"f == (a+b+1)(a+b+2)+(a+b) for {N} float32 elements against numpy",
                  ok, {"compile": compile_time.seconds, "init": init_time.seconds,
                       "run": run_time.seconds},
                  f"max abs error {worst:.3g}")


if __name__ == "__main__":
    sys.exit(main())
