#!/usr/bin/env python3
"""multi_chip: a 256x256x256 float32 matmul split by rows over 2 chips of one host
(Worker(level=3)), then a second matmul whose row blocks are swapped between the chips, so
each chip needs the other's result: simpler infers that dependency from the arrays and
moves those rows device to device. Reuses the chip program of examples/matmul."""
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from example_support import Kernel, Stopwatch, build_chip_program, report  # noqa: E402

from simpler import Worker  # noqa: E402
from simpler.task_interface import ArgDirection as D  # noqa: E402

M = K = N = 256
H = M // 2


def main() -> int:
    with Stopwatch() as compile_time:
        matmul = build_chip_program(
            HERE.parent / "matmul", orchestration="orchestration.cpp",
            entry="matmul_orchestration", signature=[D.IN, D.IN, D.OUT],
            kernels=[Kernel(0, "kernels/gemm_aic.cpp", "aic", [D.IN, D.IN, D.OUT]),
                     Kernel(1, "kernels/accumulate_aiv.cpp", "aiv", [D.IN, D.INOUT, D.SCALAR])])

    rng = np.random.default_rng(12)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    c = np.zeros((M, N), dtype=np.float32)   # c = a @ b
    d = np.zeros((M, N), dtype=np.float32)   # d = row-swapped c @ b

    def orchestration(orch, _args):
        orch.submit(mm, a[:H], b, c[:H], chip=0)          # the two halves run in parallel
        orch.submit(mm, a[H:], b, c[H:], chip=1)
        orch.submit(mm, c[H:], b, d[:H], chip=0)          # waits for chip 1's c[H:], moved
        orch.submit(mm, c[:H], b, d[H:], chip=1)          # device to device; and vice versa

    with Worker(level=3, device_ids=[0, 1], platform="a2a3sim",
                runtime="tensormap_and_ringbuffer") as worker:
        mm = worker.register(matmul)
        with Stopwatch() as init_time:
            worker.init()
        with Stopwatch() as run_time:
            worker.run(orchestration)
        moved = worker.last_run_stats["peer_bytes"]

    c_ref = a.astype(np.float64) @ b.astype(np.float64)
    d_ref = np.concatenate([c_ref[H:], c_ref[:H]]) @ b.astype(np.float64)
    worst = float(max(np.max(np.abs(c - c_ref)), np.max(np.abs(d - d_ref))))
    ok = bool(np.allclose(c, c_ref, rtol=1e-4, atol=1e-4)
              and np.allclose(d, d_ref, rtol=1e-3, atol=1e-3) and moved == c.nbytes)
    return report("multi_chip", f"C = A @ B and D = swap(C) @ B ({M}x{K}x{N} float32) over 2 chips "
                  "against numpy", ok,
                  {"compile": compile_time.seconds, "init": init_time.seconds,
                   "run": run_time.seconds},
                  f"max abs error {worst:.3g}, {moved} bytes moved chip to chip")


if __name__ == "__main__":
    sys.exit(main())
