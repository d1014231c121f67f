"""The scenes: the decoder layer of examples/decoder_layer as a prefill, a prefill over an
existing cache, and a decode loop of one token per step."""
from __future__ import annotations

import functools
import pathlib
import sys
from typing import Dict, List

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "decoder_layer"))
import layer  # noqa: E402

from scene import Scene  # noqa: E402


@functools.lru_cache(maxsize=None)
def _program():
    return layer.build_program()


def decoder_scene(name: str, shape: "layer.LayerShape", dtypes=("float32", "bfloat16"),
                  pipelined: bool = False) -> Scene:
    directions = [d for d in layer.SIGNATURE if d != layer.D.SCALAR]

    def inputs(dtype: str) -> Dict:
        return layer.make_inputs(shape, dtype)

    def golden(arrays: Dict, dtype: str) -> Dict:
        return layer.golden(shape, arrays, dtype)

    return Scene(name=name, program=_program, arg_names=layer.arg_order(), directions=directions,
                 scalars=[shape.pos0, shape.step_tokens, shape.heads], make_inputs=inputs,
                 golden=golden, load=layer.load, dtypes=dtypes, tasks=layer.task_count(shape),
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
]
