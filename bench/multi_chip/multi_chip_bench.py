#!/usr/bin/python3
"""Worker(level=3): do the chips run in parallel? (not a test)

Two independent, equal jobs (each a 256x256x256 float32 matmul of examples/matmul) are run
by one host orchestration, in the same process and the same run, two ways:

  * both on one chip (the jobs serialize on it),
  * one per chip on two chips.

Reported: the median wall time of each and their ratio (2 chips / 1 chip; 0.5 is perfect
parallelism, 1.0 none). Each simulated chip is configured small (--clusters, default 1
cluster = 3 cores, 2 AICPU threads) so that two chips fit in the host's cores; the ratio
can only approach 0.5 when the host has free cores for both chips.

Usage: multi_chip_bench.py [--repeat N] [--clusters C]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "examples"))

import numpy as np  # noqa: E402

from example_support import Kernel, build_chip_program  # noqa: E402
from simpler import Worker, sim  # noqa: E402
from simpler.task_interface import ArgDirection as D  # noqa: E402

SIZE = 256


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--clusters", type=int, default=1)
    opts = parser.parse_args()
    sim.configure(clusters_per_device=opts.clusters, aicpu_threads=2)
    matmul = build_chip_program(
        pathlib.Path(REPO, "examples", "matmul"),
        orchestration="orchestration.cpp", entry="matmul_orchestration",
        signature=[D.IN, D.IN, D.OUT],
        kernels=[Kernel(0, "kernels/gemm_aic.cpp", "aic", [D.IN, D.IN, D.OUT]),
                 Kernel(1, "kernels/accumulate_aiv.cpp", "aiv", [D.IN, D.INOUT, D.SCALAR])])
    rng = np.random.default_rng(1)
    jobs = [(rng.standard_normal((SIZE, SIZE)).astype(np.float32),
             rng.standard_normal((SIZE, SIZE)).astype(np.float32),
             np.zeros((SIZE, SIZE), dtype=np.float32)) for _ in range(2)]

    with Worker(level=3, device_ids=[0, 1]) as worker:
        mm = worker.register(matmul)
        worker.init()

        def timed(chips):
            def orchestration(orch, _):
                for (a, b, c), chip in zip(jobs, chips):
                    orch.submit(mm, a, b, c, chip=chip)
            start = time.perf_counter()
            worker.run(orchestration)
            return time.perf_counter() - start

        timed((0, 1))  # warm-up: kernels loaded, buffers touched
        one, two = [], []
        for _ in range(opts.repeat):  # interleaved, so machine noise hits both alike
            one.append(timed((0, 0)))
            two.append(timed((0, 1)))
    for a, b, c in jobs:
        assert np.allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    t1, t2 = statistics.median(one), statistics.median(two)
    print(f"multi_chip: 2 independent {SIZE}^3 matmuls, {opts.clusters} cluster(s)/chip, "
          f"median of {opts.repeat}, host cores {os.cpu_count()}")
    print(f"  one chip (serialized) : {t1 * 1e3:8.1f} ms")
    print(f"  two chips (parallel)  : {t2 * 1e3:8.1f} ms")
    print(f"  ratio two/one         : {t2 / t1:8.2f}   (0.50 = perfect, 1.00 = no overlap)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
