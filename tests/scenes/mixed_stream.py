"""The mixed stream scene: single-core tasks (AIC and AIV) with cluster (MIX) tasks among
them (tests/scenes/mixed/). Used by the scene tests and by the fairness test, which reads
the run's swimlane trace to see when each cluster task became ready and when it started."""
from __future__ import annotations

import functools
import pathlib
from typing import Dict

import numpy as np

from simpler import KernelCompiler
from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable

from scene import Scene

HERE = pathlib.Path(__file__).resolve().parent / "mixed"
ENTRY = "mixed_stream"
SIGNATURE = [D.IN, D.OUT, D.INOUT] + [D.SCALAR] * 5
SINGLE_AIC, SINGLE_AIV, CLUSTER = 0, 1, 2  # func ids


@functools.lru_cache(maxsize=None)
def build_program() -> ChipCallable:
    compiler = KernelCompiler()
    single = (HERE / "single.cpp").read_text()
    children = [
        (SINGLE_AIC, CoreCallable.build([D.INOUT, D.SCALAR], compiler.compile_kernel(single, "aic"))),
        (SINGLE_AIV, CoreCallable.build([D.INOUT, D.SCALAR], compiler.compile_kernel(single, "aiv"))),
        (CLUSTER, CoreCallable.build([D.IN, D.OUT, D.SCALAR],
                                     compiler.compile_kernel((HERE / "cluster.cpp").read_text(),
                                                             "mix"))),
    ]
    orch = compiler.compile_orchestration((HERE / "orchestration.cpp").read_text(), entry=ENTRY)
    return ChipCallable.build(SIGNATURE, ENTRY, orch, children=children)


def mixed_scene(name: str, singles: int = 120, every: int = 20, clusters: int = 1,
                single_us: int = 200, cluster_us: int = 500) -> Scene:
    cluster_tasks = singles // every
    chunk = 64 * clusters

    def inputs(dtype: str) -> Dict[str, np.ndarray]:
        rng = np.random.default_rng(7)
        return {"x": rng.standard_normal(cluster_tasks * chunk).astype(np.float32),
                "y": np.zeros(cluster_tasks * chunk, np.float32),
                "s": np.arange(singles, dtype=np.float32)}

    def golden(arrays: Dict[str, np.ndarray], dtype: str) -> Dict[str, np.ndarray]:
        return {"y": 2 * arrays["x"] + 1, "s": arrays["s"] + 1}

    return Scene(name=name, program=build_program, arg_names=["x", "y", "s"],
                 directions=[D.IN, D.OUT, D.INOUT],
                 scalars=[singles, every, clusters, single_us, cluster_us], make_inputs=inputs,
                 golden=golden, load=lambda a, dtype: a.astype(np.float32), dtypes=("float32",),
                 tasks=singles + cluster_tasks, checked=["y", "s"])
