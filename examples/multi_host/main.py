#!/usr/bin/env python3
"""multi_host: a tensor-parallel MLP layer, Y = relu(X @ W1) @ W2, over 2 MPI ranks x 2
simulated chips each (Worker(level=4)). W1 is split by columns and W2 by rows over the 4
chips (column- then row-parallel matmul); each chip computes a partial Y, and an all-reduce
(sum) across the chips of both ranks gives every chip the full Y. Checked against numpy.

Run it under MPI:  PYTHONPATH=python mpirun --oversubscribe -np 2 python3 examples/multi_host/main.py
(from a checkout; PYTHONPATH not needed after pip install. Run without mpirun, it starts
itself that way; as root add --allow-run-as-root).
Uses the matmul program of examples/matmul and a relu program of this folder."""
import os
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
RANKS = 2


def relaunch_under_mpirun() -> int:
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        print("multi_host: mpirun not found (Debian: openmpi-bin; scripts/setup.sh)", file=sys.stderr)
        return 2
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    command = [mpirun, "--oversubscribe", "--timeout", "300", "-np", str(RANKS), sys.executable,
               str(HERE / "main.py")]
    return subprocess.run(command, env=env, timeout=330).returncode


def main() -> int:
    import numpy as np
    sys.path.insert(0, str(HERE.parent))
    from example_support import Kernel, Stopwatch, build_chip_program, report
    from simpler import Worker
    from simpler.task_interface import ArgDirection as D

    with Stopwatch() as compile_time:
        matmul = build_chip_program(
            HERE.parent / "matmul", orchestration="orchestration.cpp",
            entry="matmul_orchestration", signature=[D.IN, D.IN, D.OUT],
            kernels=[Kernel(0, "kernels/gemm_aic.cpp", "aic", [D.IN, D.IN, D.OUT]),
                     Kernel(1, "kernels/accumulate_aiv.cpp", "aiv", [D.IN, D.INOUT, D.SCALAR])])
        relu = build_chip_program(HERE, orchestration="relu_orchestration.cpp",
                                  entry="relu_orchestration", signature=[D.IN, D.OUT],
                                  kernels=[Kernel(0, "kernels/relu.cpp", "aiv", [D.IN, D.OUT])])

    with Worker(level=4, device_ids=[0, 1], platform="a2a3sim",
                runtime="tensormap_and_ringbuffer") as worker:
        mm, act = worker.register(matmul), worker.register(relu)
        with Stopwatch() as init_time:
            worker.init()                           # every rank, every chip
        if not worker.is_orchestrator:
            return 0                                # ranks > 0 serve until rank 0 closes

        chips = worker.device_ids                   # [(0, 0), (0, 1), (1, 0), (1, 1)]
        g = len(chips)
        tokens, d_model, d_ff = 64, 256, 512
        cols = d_ff // g
        rng = np.random.default_rng(19)
        x = rng.uniform(-1, 1, (tokens, d_model)).astype(np.float32)
        w1 = rng.uniform(-0.1, 0.1, (d_model, d_ff)).astype(np.float32)
        w2 = rng.uniform(-0.1, 0.1, (d_ff, d_model)).astype(np.float32)
        w1_parts = [np.ascontiguousarray(w1[:, i * cols:(i + 1) * cols]) for i in range(g)]
        w2_parts = [np.ascontiguousarray(w2[i * cols:(i + 1) * cols]) for i in range(g)]
        h = [np.zeros((tokens, cols), dtype=np.float32) for _ in range(g)]
        a = [np.zeros((tokens, cols), dtype=np.float32) for _ in range(g)]
        y = [np.zeros((tokens, d_model), dtype=np.float32) for _ in range(g)]

        def layer(orch, _):
            for i, chip in enumerate(chips):
                orch.submit(mm, x, w1_parts[i], h[i], chip=chip)        # column-parallel
                orch.submit(act, h[i].reshape(-1), a[i].reshape(-1), chip=chip)
                orch.submit(mm, a[i], w2_parts[i], y[i], chip=chip)     # row-parallel
            orch.all_reduce(y, "sum", chips=chips)                      # partial Ys -> Y

        with Stopwatch() as run_time:
            worker.run(layer)

    expected = np.maximum(x.astype(np.float64) @ w1, 0) @ w2
    worst = float(max(np.max(np.abs(part - expected)) for part in y))
    ok = all(np.allclose(part, expected, rtol=1e-4, atol=1e-4) for part in y)
    return report("multi_host", f"tensor-parallel MLP relu(X @ W1) @ W2 ({tokens}x{d_model}x"
                  f"{d_ff}) over {RANKS} ranks x 2 chips, all-reduced, on every chip, against "
                  "numpy", ok, {"compile": compile_time.seconds, "init": init_time.seconds,
                                "run": run_time.seconds}, f"max abs error {worst:.3g}")


if __name__ == "__main__":
    if "OMPI_COMM_WORLD_SIZE" not in os.environ and "PMI_SIZE" not in os.environ:
        sys.exit(relaunch_under_mpirun())
    sys.exit(main())
