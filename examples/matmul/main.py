#!/usr/bin/env python3
"""matmul: C = A @ B for 256x256x256 float32, tiled 64x64: AIC GEMM tasks produce partial
products, AIV tasks accumulate them into INOUT views of C (program mode)."""
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from example_support import Kernel, Stopwatch, build_chip_program, report  # noqa: E402

from simpler import Worker  # noqa: E402
from simpler.task_interface import ArgDirection as D, ChipStorageTaskArgs, ChipTensor  # noqa: E402

M = K = N = 256


def main() -> int:
    with Stopwatch() as compile_time:
        program = build_chip_program(
            HERE, orchestration="orchestration.cpp", entry="matmul_orchestration",
            signature=[D.IN, D.IN, D.OUT],
            kernels=[Kernel(0, "kernels/gemm_aic.cpp", "aic", [D.IN, D.IN, D.OUT]),
                     Kernel(1, "kernels/accumulate_aiv.cpp", "aiv", [D.IN, D.INOUT, D.SCALAR])])

    rng = np.random.default_rng(11)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    c = np.zeros((M, N), dtype=np.float32)
    args = ChipStorageTaskArgs()
    for array in (a, b, c):
        args.add_tensor(ChipTensor.from_array(array))

    with Worker(level=2, device_id=0, platform="a2a3sim",
                runtime="tensormap_and_ringbuffer") as worker:
        handle = worker.register(program)
        with Stopwatch() as init_time:
            worker.init()
        with Stopwatch() as run_time:
            worker.run(handle, args)

    expected = a.astype(np.float64) @ b.astype(np.float64)
    worst = float(np.max(np.abs(c - expected)))
    ok = bool(np.allclose(c, expected, rtol=1e-4, atol=1e-4))
    tiles = (M // 64) * (N // 64) * (K // 64)
    return report("matmul", f"C == A @ B for {M}x{K}x{N} float32 ({tiles} GEMM + {tiles} "
                  "accumulate tasks) against numpy", ok,
                  {"compile": compile_time.seconds, "init": init_time.seconds,
                   "run": run_time.seconds},
                  f"max abs error {worst:.3g}")


if __name__ == "__main__":
    sys.exit(main())
