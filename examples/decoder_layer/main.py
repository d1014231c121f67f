#!/usr/bin/env python3
"""decoder_layer: one transformer decoder layer (RMSNorm, Q/K/V projections, rotary
embedding, causal attention over a KV cache, output projection, residuals, gated MLP) as
simpler tasks, prefill then a decode loop of one token per step, checked against numpy.

Matmuls run on cube (AIC) cores in 32x32 tiles, everything else on vector (AIV) cores.
The decode loop appends to the KV cache in place; the runtime orders each step after the
steps whose cache rows it reads, from the tensors alone (program mode). It runs twice: as
one run of 16 steps, and as 16 runs of one token with two runs in flight
(CallConfig.pipeline_depth=2, layer.decode_steps), as a serving loop would."""
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import layer  # noqa: E402
from example_support import Stopwatch, report  # noqa: E402

from simpler import Worker  # noqa: E402
from simpler.task_interface import ChipStorageTaskArgs, ChipTensor  # noqa: E402

DTYPE = "float32"


def run(worker: Worker, handle, shape: "layer.LayerShape", arrays: dict) -> None:
    args = ChipStorageTaskArgs()
    for name in layer.arg_order():
        args.add_tensor(ChipTensor.from_array(arrays[name], dtype=layer.DTYPES[DTYPE]))
    for value in (shape.pos0, shape.step_tokens, shape.heads):
        args.add_scalar(value)
    worker.run(handle, args)


def main() -> int:
    prefill = layer.LayerShape(tokens=64, step_tokens=64, pos0=0)
    decode = layer.LayerShape(tokens=16, step_tokens=1, pos0=64)
    with Stopwatch() as compile_time:
        program = layer.build_program()
    prompt = layer.make_inputs(prefill, DTYPE, seed=1)
    steps = layer.make_inputs(decode, DTYPE, seed=2)
    # The decode loop continues the prefill's cache (same weights).
    for name in layer.WEIGHTS:
        steps[name] = prompt[name]

    with Worker(level=2, device_id=0, platform="a2a3sim",
                runtime="tensormap_and_ringbuffer") as worker:
        handle = worker.register(program)
        worker.init()
        with Stopwatch() as prefill_time:
            run(worker, handle, prefill, prompt)
        steps["k_cache"], steps["v_cache"] = prompt["k_cache"].copy(), prompt["v_cache"].copy()
        before = {name: steps[name].copy() for name in steps}
        piped = {name: a.copy() for name, a in before.items()}
        with Stopwatch() as decode_time:
            run(worker, handle, decode, steps)
        # The same loop as a server runs it: one run per token, two runs in flight
        # (CallConfig.pipeline_depth=2), the caches shared in device memory.
        with Stopwatch() as piped_time:
            layer.decode_steps(worker, handle, decode, piped, DTYPE, depth=2)

    want_prefill = layer.golden(prefill, layer.make_inputs(prefill, DTYPE, seed=1), DTYPE)
    want_decode = layer.golden(decode, before, DTYPE)
    errors = [float(np.max(np.abs(got - want)))
              for got, want in ((prompt["out"], want_prefill["out"]),
                                (steps["out"], want_decode["out"]),
                                (steps["k_cache"], want_decode["k_cache"]),
                                (piped["out"], want_decode["out"]),
                                (piped["k_cache"], want_decode["k_cache"]))]
    ok = all(e <= 1e-3 for e in errors)
    tasks = layer.task_count(prefill) + layer.task_count(decode)
    return report("decoder_layer", f"a {prefill.tokens}-token prefill and {decode.tokens} "
                  f"decode steps ({tasks} tasks, hidden {prefill.hidden}, {prefill.heads} heads) "
                  "against numpy", ok,
                  {"compile": compile_time.seconds, "prefill": prefill_time.seconds,
                   "decode loop": decode_time.seconds,
                   "decode loop, one run per token, pipelined": piped_time.seconds},
                  f"max abs error {max(errors):.3g}")


if __name__ == "__main__":
    sys.exit(main())
