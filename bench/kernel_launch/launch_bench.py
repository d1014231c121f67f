#!/usr/bin/python3
"""Caller-visible ``simpler.Worker.kernel_launch`` latency from Python (not a test).

Launches a prepared empty chip program (4 DEVICE tensor args) on a caller-owned sim
stream, timing each call with ``time.perf_counter_ns`` (the median cost of the timer
pair is subtracted), in batches with a stream synchronize between them. In the same run
it times two anchors through the same Python binding layer:

  * ``Stream.memset_async(ptr, 0, 0)`` -- a bare driver enqueue from Python (the floor of
    any enqueue on a caller's stream; a Python host function would need the GIL on the
    stream's thread and distort the caller's timing),
  * an empty Python function call (the interpreter's own call cost).

Usage: launch_bench.py [--quick] [--samples N] [--orchestration PATH]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

from simpler import Worker, sim  # noqa: E402
from simpler.task_interface import (  # noqa: E402
    ArgDirection, CallConfig, ChipCallable, ChipStorageTaskArgs, ChipTensor, DataType)

TENSORS = 4
ELEMENTS = 1024
TARGET_P50_NS = 3000


def default_orchestration() -> str:
    build = os.environ.get("SIMPLER_BUILD_DIR", os.path.join(REPO, "build"))
    return os.path.join(build, "bench", "images", "libbench_empty_orchestration.so")


def percentile(sorted_ns: list[float], q: float) -> float:
    return sorted_ns[min(len(sorted_ns) - 1, int(q * len(sorted_ns)))]


def timer_overhead_ns() -> float:
    clock = time.perf_counter_ns
    v = []
    for _ in range(20000):
        a = clock()
        b = clock()
        v.append(b - a)
    v.sort()
    return float(v[len(v) // 2])


def collect(call, drain, samples: int, batch: int, overhead: float, out: list[float]) -> None:
    """Times each call() on its own; drain() (untimed) after every `batch` calls."""
    clock = time.perf_counter_ns
    done = 0
    while done < samples:
        for _ in range(min(batch, samples - done)):
            a = clock()
            call()
            b = clock()
            out.append(max(0.0, b - a - overhead))
        done += min(batch, samples - done)
        drain()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--samples", type=int, default=50000, help="timed calls per row")
    parser.add_argument("--batch", type=int, default=32, help="launches between synchronizations")
    parser.add_argument("--orchestration", default=default_orchestration(),
                        help="the empty orchestration image (built by the bench targets)")
    opts = parser.parse_args()
    samples = 5000 if opts.quick else opts.samples
    rounds = 5
    if not os.path.exists(opts.orchestration):
        print(f"launch_bench.py: {opts.orchestration} does not exist; build the bench targets "
              "(scripts/build.sh) or pass --orchestration", file=sys.stderr)
        return 1
    with open(opts.orchestration, "rb") as f:
        binary = f.read()
    program = ChipCallable.build(
        signature=[ArgDirection.IN, ArgDirection.IN, ArgDirection.INOUT, ArgDirection.OUT],
        func_name="bench_empty", binary=binary, children=[])

    sim.set_device(0)  # the "framework" owns device 0 and the stream
    stream = sim.Stream()
    buffers = [sim.malloc(ELEMENTS * 4) for _ in range(TENSORS)]
    args = ChipStorageTaskArgs()
    for ptr in buffers:
        args.add_tensor(ChipTensor.make(ptr, [ELEMENTS], DataType.FLOAT32))
    worker = Worker(level=2, execution_mode="kernel", device_id=0, platform="a2a3sim",
                    runtime="tensormap_and_ringbuffer")
    try:
        worker.init(config=CallConfig())
        cid = worker.kernel_prepare_callable(program)
        handle = stream.handle

        def launch() -> None:
            worker.kernel_launch(cid, args, caller_stream=handle)

        def bare_enqueue() -> None:
            stream.memset_async(buffers[0], 0, 0)

        def empty() -> None:
            pass

        def nothing() -> None:
            pass

        overhead = timer_overhead_ns()
        rows = {"empty Python call": [], "Stream.memset_async (0 bytes)": [],
                "Worker.kernel_launch": []}
        subjects = [("empty Python call", empty, nothing),
                    ("Stream.memset_async (0 bytes)", bare_enqueue, stream.synchronize),
                    ("Worker.kernel_launch", launch, stream.synchronize)]
        for _, call, drain in subjects:  # warm up
            collect(call, drain, opts.batch * 8, opts.batch, overhead, [])
        per_round = max(opts.batch, samples // rounds)
        for _ in range(rounds):
            for name, call, drain in subjects:
                collect(call, drain, per_round, opts.batch, overhead, rows[name])
        stream.synchronize()
        anchor = None
        print(f"launch_bench.py: {per_round * rounds} samples per row ({rounds} rounds, "
              f"{opts.batch} launches between synchronizations), 4 DEVICE tensor args; "
              f"timer overhead {overhead:.0f} ns subtracted")
        print(f"{'Python call':<38} {'p50 ns':>9} {'p99 ns':>9} {'p50/enqueue':>12}")
        for name, _, _ in subjects:
            ns = sorted(rows[name])
            p50, p99 = percentile(ns, 0.5), percentile(ns, 0.99)
            if name.startswith("Stream."):
                anchor = p50
            ratio = f"{p50 / anchor:11.1f}x" if anchor else f"{'':>12}"
            print(f"{name:<38} {p50:9.0f} {p99:9.0f} {ratio}")
            if name == "Worker.kernel_launch":
                print(f"target Python p50 <= {TARGET_P50_NS} ns: "
                      f"{'met' if p50 <= TARGET_P50_NS else 'MISSED'}")
    finally:
        stream.synchronize()
        worker.close()
        for ptr in buffers:
            sim.free(ptr)
        stream.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
