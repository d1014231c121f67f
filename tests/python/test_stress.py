"""A bounded Python-level stress test (issue 13, item 4): thousands of mixed task submits
with random dependencies, spread over two chips, every result checked against numpy.

Tasks are submitted by level-3 host orchestrations over random, partly overlapping slices
of a few host arrays, so simpler infers read-after-write, write-after-read and
write-after-write dependencies from the ranges. Two kinds of task are mixed:
``y = x + s`` (add_scalar) and ``x[0] += 1`` (the crash program's harmless path). The
second is not idempotent, so a task that ran twice, or not at all, shows in the result;
the first makes every value depend on the order of its writers."""
from __future__ import annotations

import time

import numpy as np

from simpler import Worker

ARRAYS, LENGTH, SLICE, STEP = 6, 256, 64, 16
BUMP = 99          # crash_callable: any other `how` than 0..3 does x[0] += 1
PER_RUN = 250      # tasks per host orchestration
MAX_TASKS = 2000
SECONDS = 20.0     # the bound, whatever the machine's load


def test_thousands_of_mixed_submits_with_random_dependencies(add_scalar_callable, crash_callable):
    rng = np.random.default_rng(20261203)  # fixed seed: a failure reproduces
    w = Worker(level=3, device_ids=[0, 1])
    add = w.register(add_scalar_callable)
    bump = w.register(crash_callable)
    w.init()
    arrays = [np.arange(LENGTH, dtype=np.float32) * (i + 1) for i in range(ARRAYS)]
    expected = [a.copy() for a in arrays]
    offsets = range(0, LENGTH - SLICE + 1, STEP)
    submitted = 0
    deadline = time.monotonic() + SECONDS
    try:
        while submitted < MAX_TASKS and time.monotonic() < deadline:
            plan = []
            for _ in range(PER_RUN):
                chip = int(rng.integers(0, 2))
                dst, dst_at = int(rng.integers(0, ARRAYS)), int(rng.choice(offsets))
                if rng.random() < 0.6:
                    src = int(rng.choice([i for i in range(ARRAYS) if i != dst]))
                    src_at = int(rng.choice(offsets))
                    s = float(rng.integers(-3, 4))
                    plan.append(("add", chip, src, src_at, dst, dst_at, s))
                    expected[dst][dst_at:dst_at + SLICE] = expected[src][src_at:src_at + SLICE] + s
                else:
                    plan.append(("bump", chip, dst, dst_at))
                    expected[dst][dst_at] += 1

            def orch(o, args, plan=plan):
                for task in plan:
                    if task[0] == "add":
                        _, chip, src, src_at, dst, dst_at, s = task
                        o.submit(add, arrays[src][src_at:src_at + SLICE],
                                 arrays[dst][dst_at:dst_at + SLICE], s, chip=chip)
                    else:
                        _, chip, dst, dst_at = task
                        o.submit(bump, arrays[dst][dst_at:dst_at + SLICE], BUMP, 0, chip=chip)

            w.run(orch)
            submitted += len(plan)
            assert w.last_run_stats["tasks"] == len(plan)
            for i in range(ARRAYS):
                np.testing.assert_array_equal(arrays[i], expected[i], err_msg=f"array {i} after "
                                              f"{submitted} tasks")
    finally:
        w.close()
    assert submitted >= 1000, f"only {submitted} tasks within {SECONDS} s"
