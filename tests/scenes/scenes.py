"""The scenes: the decoder layer of examples/decoder_layer as a prefill, a prefill over an
existing cache, and a decode loop of one token per step; and the same layer with each
head's attention fused into one cluster (MIX) task, mixing cluster and single-core tasks."""
from __future__ import annotations

import functools
import pathlib
import sys
from typing import Dict, List

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "decoder_layer"))
import layer  # noqa: E402

from mixed_stream import mixed_scene  # noqa: E402
from scene import Scene  # noqa: E402


@functools.lru_cache(maxsize=None)
def _program():
    return layer.build_program()


@functools.lru_cache(maxsize=None)
def _fused_program():
    return layer.build_program(fused=True)


def decoder_scene(name: str, shape: "layer.LayerShape", dtypes=("float32", "bfloat16"),
                  fused: bool = False, pipelined: bool = False) -> Scene:
    directions = [d for d in layer.SIGNATURE if d != layer.D.SCALAR]

    def inputs(dtype: str) -> Dict:
        return layer.make_inputs(shape, dtype)

    def golden(arrays: Dict, dtype: str) -> Dict:
        return layer.golden(shape, arrays, dtype)

    return Scene(name=name, program=_fused_program if fused else _program,
                 arg_names=layer.arg_order(), directions=directions,
                 scalars=[shape.pos0, shape.step_tokens, shape.heads], make_inputs=inputs,
                 golden=golden, load=layer.load, dtypes=dtypes,
                 tasks=layer.task_count(shape, fused=fused),
                 checked=["out", "k_cache", "v_cache"],
                 pipelined=(lambda worker, handle, arrays, dtype, depth: layer.decode_steps(
                     worker, handle, shape, arrays, dtype, depth)) if pipelined else None)


SCENES: List[Scene] = [
    decoder_scene("decoder_prefill", layer.LayerShape(tokens=64, step_tokens=64),
                  dtypes=("float32", "float16", "bfloat16")),
    decoder_scene("decoder_prefill_cached", layer.LayerShape(tokens=64, step_tokens=64, pos0=48)),
    # Also as one run per token, pipelined (mode "pipelined"): the runs share the caches.
    decoder_scene("decode_loop", layer.LayerShape(tokens=16, step_tokens=1, pos0=8),
                  pipelined=True),
    # Cluster tasks among single-core tasks: each head's attention is one cluster task.
    decoder_scene("decoder_prefill_fused", layer.LayerShape(tokens=64, step_tokens=64, pos0=48),
                  dtypes=("float32", "float16", "bfloat16"), fused=True),
    decoder_scene("decode_loop_fused", layer.LayerShape(tokens=16, step_tokens=1, pos0=8),
                  fused=True),
    # A stream of single-core tasks with one-cluster tasks among them.
    mixed_scene("mixed_stream"),
]

# Each fused scene and the unfused scene with the same shapes: same numbers, bit for bit.
FUSED_PAIRS = [("decoder_prefill_fused", "decoder_prefill_cached"),
               ("decode_loop_fused", "decode_loop")]
