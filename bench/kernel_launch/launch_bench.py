#!/usr/bin/python3
"""Caller-visible kernel-mode launch latency from Python (not a test).

Launches a prepared empty chip program (4 DEVICE tensor args) on a caller-owned sim
stream, timing each call with ``time.perf_counter_ns`` (the median cost of the timer
pair is subtracted), in batches with a stream synchronize between them, three ways:
``Worker.kernel_launch`` with a ChipStorageTaskArgs, ``Worker.kernel_launch`` with
borrowed arguments (four sim.DeviceArrays), and ``KernelLaunch.launch`` of a descriptor
from ``Worker.kernel_bind``; then sustained back-to-back descriptor launches. In the same
run it times two anchors through the same Python binding layer:

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
# Issue 11's targets.
TARGET_DESCRIPTOR_P50_NS = 1000
TARGET_DESCRIPTOR_VS_MEMSET = 1.5
TARGET_BORROWED_P50_NS = 2000
TARGET_SUSTAINED_PER_S = 0.5e6


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
    arrays = [sim.DeviceArray(ELEMENTS, "float32") for _ in range(TENSORS)]
    buffers = [a.ptr for a in arrays]
    args = ChipStorageTaskArgs()
    for ptr in buffers:
        args.add_tensor(ChipTensor.make(ptr, [ELEMENTS], DataType.FLOAT32))
    worker = Worker(level=2, execution_mode="kernel", device_id=0, platform="a2a3sim",
                    runtime="tensormap_and_ringbuffer")
    try:
        worker.init(config=CallConfig())
        cid = worker.kernel_prepare_callable(program)
        handle = stream.handle
        descriptor = worker.kernel_bind(cid, *arrays)
        a0, a1, a2, a3 = arrays

        def launch() -> None:
            worker.kernel_launch(cid, args, caller_stream=handle)

        def borrowed() -> None:
            worker.kernel_launch(cid, a0, a1, a2, a3, caller_stream=handle)

        def bound() -> None:
            descriptor.launch(caller_stream=handle)

        def bare_enqueue() -> None:
            stream.memset_async(buffers[0], 0, 0)

        def empty() -> None:
            pass

        def nothing() -> None:
            pass

        overhead = timer_overhead_ns()
        subjects = [("empty Python call", empty, nothing),
                    ("Stream.memset_async (0 bytes)", bare_enqueue, stream.synchronize),
                    ("Worker.kernel_launch (ChipStorageTaskArgs)", launch, stream.synchronize),
                    ("Worker.kernel_launch (borrowed)", borrowed, stream.synchronize),
                    ("KernelLaunch.launch (descriptor)", bound, stream.synchronize)]
        rows: "dict[str, list[float]]" = {name: [] for name, _, _ in subjects}
        for _, call, drain in subjects:  # warm up
            collect(call, drain, opts.batch * 8, opts.batch, overhead, [])
        per_round = max(opts.batch, samples // rounds)
        for _ in range(rounds):
            for name, call, drain in subjects:
                collect(call, drain, per_round, opts.batch, overhead, rows[name])
        stream.synchronize()

        # Sustained: back-to-back descriptor launches, then one synchronize.
        sustained = 20000 if not opts.quick else 2000
        start = time.perf_counter_ns()
        for _ in range(sustained):
            descriptor.launch(caller_stream=handle)
        stream.synchronize()
        per_s = sustained / ((time.perf_counter_ns() - start) * 1e-9)

        print(f"launch_bench.py: {per_round * rounds} samples per row ({rounds} rounds, "
              f"{opts.batch} launches between synchronizations), 4 DEVICE tensor args; "
              f"timer overhead {overhead:.0f} ns subtracted; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'Python call':<44} {'p50 ns':>9} {'p99 ns':>9} {'p50/memset':>11}")
        p50s = {}
        anchor = None
        for name, _, _ in subjects:
            ns = sorted(rows[name])
            p50, p99 = percentile(ns, 0.5), percentile(ns, 0.99)
            p50s[name] = p50
            if name.startswith("Stream."):
                anchor = p50
            ratio = f"{p50 / anchor:10.2f}x" if anchor else f"{'':>11}"
            print(f"{name:<44} {p50:9.0f} {p99:9.0f} {ratio}")
        print(f"sustained KernelLaunch.launch: {per_s / 1e6:.3f} M launches/s completed")

        def verdict(met: bool) -> str:
            return "met" if met else "MISSED"

        d = p50s["KernelLaunch.launch (descriptor)"]
        b = p50s["Worker.kernel_launch (borrowed)"]
        print(f"target descriptor p50 <= {TARGET_DESCRIPTOR_P50_NS} ns: "
              f"{verdict(d <= TARGET_DESCRIPTOR_P50_NS)}; <= {TARGET_DESCRIPTOR_VS_MEMSET}x "
              f"Stream.memset_async: {verdict(d <= TARGET_DESCRIPTOR_VS_MEMSET * anchor)}")
        print(f"target borrowed kernel_launch p50 <= {TARGET_BORROWED_P50_NS} ns: "
              f"{verdict(b <= TARGET_BORROWED_P50_NS)}")
        print(f"target sustained >= {TARGET_SUSTAINED_PER_S / 1e6} M/s from Python: "
              f"{verdict(per_s >= TARGET_SUSTAINED_PER_S)}")
    finally:
        stream.synchronize()
        worker.close()
        stream.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
