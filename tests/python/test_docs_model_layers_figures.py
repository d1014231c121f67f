"""docs/model-layers.md gives the task counts of examples/decoder_layer's prefill and decode
loop (hidden 128, 32x32 tiles). They must be layer.task_count's: the decode loop was "about
1,000" while it submits 1,136 tasks."""
from __future__ import annotations

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIGURES = re.compile(r"64-token prefill ([\d,]+) tasks and a 16-step decode loop ([\d,]+) "
                     r"\(fused attention: ([\d,]+) and ([\d,]+)\)")


def test_the_documented_task_counts_are_the_layers():
    sys.path.insert(0, str(ROOT / "examples" / "decoder_layer"))
    try:
        import layer
    finally:
        sys.path.pop(0)
    found = FIGURES.search(" ".join((ROOT / "docs" / "model-layers.md").read_text().split()))
    assert found, "docs/model-layers.md no longer gives the layer's task counts"
    said = [int(g.replace(",", "")) for g in found.groups()]
    prefill = layer.LayerShape(tokens=64, step_tokens=64, pos0=0)
    decode = layer.LayerShape(tokens=16, step_tokens=1, pos0=64)
    assert prefill.hidden == 128
    assert said == [layer.task_count(prefill), layer.task_count(decode),
                    layer.task_count(prefill, fused=True), layer.task_count(decode, fused=True)]
