"""The decoder layer of examples/decoder_layer: how to build it, its inputs, its numpy golden.

Shared by the example (main.py), the scene tests (tests/scenes) and the benchmark
(bench/scenes). Tensors are stored as float32, float16 or bfloat16; numpy has no
bfloat16, so bfloat16 arrays are held as their uint16 bit patterns (``to_bf16`` /
``from_bf16``) and handed to simpler with ``dtype=DataType.BFLOAT16``.
"""
from __future__ import annotations

import pathlib
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import numpy as np

from simpler import KernelCompiler
from simpler.task_interface import (ArgDirection as D, CallConfig, ChipCallable,
                                    ChipStorageTaskArgs, ChipTensor, CoreCallable, DataType)

HERE = pathlib.Path(__file__).resolve().parent
ENTRY = "decoder_layer"
# The same layer with each head's attention as one cluster (MIX) task (kernels/attention.cpp).
FUSED_ENTRY = "decoder_layer_fused"


def _kernel_list() -> List[tuple]:
    """func id order -> (kernel source, core type, signature), from kernels.list."""
    kernels = []
    for line in (HERE / "kernels.list").read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            kernels.append((words[0], words[1], [getattr(D, w) for w in words[2:]]))
    return kernels


# func id -> (kernel source, core type, signature); the ids are the orchestration's enum.
KERNELS = _kernel_list()
WEIGHTS = ["attn_norm", "wq", "wk", "wv", "wo", "mlp_norm", "w_gate", "w_up", "w_down",
           "rope_cos", "rope_sin"]
# The entry signature: x, the weights, the two caches (INOUT), out; pos0, step_tokens, heads.
SIGNATURE = [D.IN] * 12 + [D.INOUT, D.INOUT, D.OUT] + [D.SCALAR] * 3
DTYPES = {"float32": DataType.FLOAT32, "float16": DataType.FLOAT16,
          "bfloat16": DataType.BFLOAT16}


def build_program(compiler: Optional[KernelCompiler] = None, fused: bool = False) -> ChipCallable:
    """Compiles the orchestration and its kernels (cached) into one ChipCallable.

    ``fused``: each head's attention runs as one cluster task instead of matmul / softmax /
    matmul tasks (same numbers)."""
    entry = FUSED_ENTRY if fused else ENTRY
    compiler = compiler or KernelCompiler(include_dirs=[HERE / "kernels"])
    children = []
    for func_id, (source, core, signature) in enumerate(KERNELS):
        binary = compiler.compile_kernel((HERE / "kernels" / source).read_text(), core)
        children.append((func_id, CoreCallable.build(signature, binary)))
    binary = compiler.compile_orchestration((HERE / "orchestration.cpp").read_text(), entry=entry)
    return ChipCallable.build(SIGNATURE, entry, binary, children=children)


def to_bf16(a: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns (uint16), rounding to nearest even."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits.astype(np.uint16)


def from_bf16(a: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32."""
    return (a.astype(np.uint32) << 16).view(np.float32)


def store(a: np.ndarray, dtype: str) -> np.ndarray:
    """A float array in the storage form of ``dtype``."""
    if dtype == "bfloat16":
        return to_bf16(a)
    return a.astype(np.float16 if dtype == "float16" else np.float32)


def load(a: np.ndarray, dtype: str) -> np.ndarray:
    """The float32 values of an array in the storage form of ``dtype``."""
    return from_bf16(a) if dtype == "bfloat16" else a.astype(np.float32)


@dataclass
class LayerShape:
    tokens: int = 64        # rows of x processed by one call
    step_tokens: int = 64   # rows per step: tokens (prefill) or 1 (decode loop)
    hidden: int = 128
    heads: int = 4
    ffn: int = 256
    max_pos: int = 128       # rows of the KV cache
    pos0: int = 0           # position of x's first row (rows before it are in the cache)


def make_inputs(shape: LayerShape, dtype: str, seed: int = 7) -> Dict[str, np.ndarray]:
    """Random weights and activations (fixed seed) in the storage form of ``dtype``.

    Positions before ``pos0`` are filled in the caches as an earlier call would have."""
    rng = np.random.default_rng(seed)
    h, f, p = shape.hidden, shape.ffn, shape.max_pos
    head_dim = h // shape.heads

    def weight(rows: int, cols: int) -> np.ndarray:
        return rng.normal(0, 1 / np.sqrt(rows), (rows, cols)).astype(np.float32)

    inv_freq = 1.0 / (10000 ** (np.arange(head_dim // 2, dtype=np.float64) * 2 / head_dim))
    angles = np.arange(p, dtype=np.float64)[:, None] * inv_freq[None, :]
    values = {
        "x": rng.normal(0, 1, (shape.tokens, h)).astype(np.float32),
        "attn_norm": rng.uniform(0.5, 1.5, h).astype(np.float32),
        "wq": weight(h, h), "wk": weight(h, h), "wv": weight(h, h), "wo": weight(h, h),
        "mlp_norm": rng.uniform(0.5, 1.5, h).astype(np.float32),
        "w_gate": weight(h, f), "w_up": weight(h, f), "w_down": weight(f, h),
        "rope_cos": np.cos(angles).astype(np.float32),
        "rope_sin": np.sin(angles).astype(np.float32),
        "k_cache": np.zeros((p, h), np.float32), "v_cache": np.zeros((p, h), np.float32),
        "out": np.zeros((shape.tokens, h), np.float32),
    }
    values["k_cache"][:shape.pos0] = rng.normal(0, 1, (shape.pos0, h))
    values["v_cache"][:shape.pos0] = rng.normal(0, 1, (shape.pos0, h))
    return {name: store(value, dtype) for name, value in values.items()}


def arg_order() -> List[str]:
    return ["x"] + WEIGHTS + ["k_cache", "v_cache", "out"]


def golden(shape: LayerShape, inputs: Dict[str, np.ndarray], dtype: str) -> Dict[str, np.ndarray]:
    """The layer in float64 numpy from the same stored inputs: out, k_cache, v_cache."""
    v = {name: load(a, dtype).astype(np.float64) for name, a in inputs.items()}
    h_dim, heads = shape.hidden, shape.heads
    d = h_dim // heads
    half = d // 2

    def rmsnorm(x, w):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w

    def rope(x, pos):
        cos, sin = v["rope_cos"][pos], v["rope_sin"][pos]
        y = x.copy()
        for head in range(heads):
            x1 = x[:, head * d:head * d + half]
            x2 = x[:, head * d + half:(head + 1) * d]
            y[:, head * d:head * d + half] = x1 * cos - x2 * sin
            y[:, head * d + half:(head + 1) * d] = x2 * cos + x1 * sin
        return y

    k_cache, v_cache = v["k_cache"].copy(), v["v_cache"].copy()
    out = np.zeros_like(v["x"])
    for row in range(0, shape.tokens, shape.step_tokens):
        n = shape.step_tokens
        pos = shape.pos0 + row
        positions = np.arange(pos, pos + n)
        x = v["x"][row:row + n]
        h = rmsnorm(x, v["attn_norm"])
        q, k = rope(h @ v["wq"], positions), rope(h @ v["wk"], positions)
        k_cache[pos:pos + n], v_cache[pos:pos + n] = k, h @ v["wv"]
        seen = pos + n
        attn = np.zeros_like(x)
        for head in range(heads):
            cols = slice(head * d, (head + 1) * d)
            scores = q[:, cols] @ k_cache[:seen, cols].T / np.sqrt(d)
            mask = np.arange(seen)[None, :] > positions[:, None]
            scores = np.where(mask, -np.inf, scores)
            p = np.exp(scores - scores.max(axis=1, keepdims=True))
            attn[:, cols] = (p / p.sum(axis=1, keepdims=True)) @ v_cache[:seen, cols]
        h1 = x + attn @ v["wo"]
        h2 = rmsnorm(h1, v["mlp_norm"])
        gate = h2 @ v["w_gate"]
        act = gate / (1 + np.exp(-gate)) * (h2 @ v["w_up"])
        out[row:row + n] = h1 + act @ v["w_down"]
    return {"out": out, "k_cache": k_cache, "v_cache": v_cache}


def task_count(shape: LayerShape, tile: int = 32, fused: bool = False) -> int:
    """How many tasks one call submits (mirrors orchestration.cpp)."""
    def tiles(rows: int, cols: int) -> int:
        return -(-rows // tile) * -(-cols // tile)

    n, h, f = shape.step_tokens, shape.hidden, shape.ffn
    d = h // shape.heads
    total = 0
    for row in range(0, shape.tokens, n):
        seen = shape.pos0 + row + n
        total += 1 + 3 * tiles(n, h) + 2 * shape.heads + 2              # norm, q/k/v, rope, cache
        total += shape.heads * (1 if fused else tiles(n, seen) + 1 + tiles(n, d))  # attention
        total += tiles(n, h) + 1 + 1 + 2 * tiles(n, f) + 1 + tiles(n, h) + 1  # wo, add, mlp
    return total


def decode_steps(worker: Any, handle: Any, shape: LayerShape, arrays: Dict[str, np.ndarray],
                 dtype: str, depth: int = 2) -> List[float]:
    """The decode loop as one run per token, ``depth`` runs in flight (CallConfig.pipeline_depth).

    Every tensor lives in device memory for the whole loop (``worker.malloc``): the runs
    share the KV caches, and simpler orders each step's attention after the earlier steps'
    cache writes from the tensors alone, as within one run. With ``depth`` > 1 the
    orchestration of step t+1 overlaps the kernels of step t. ``arrays`` get the outputs
    (``out`` and the caches). Returns the seconds from the first submit to each step's
    completion (the last one is the whole loop)."""
    storage = DTYPES[dtype]
    names = arg_order()
    ptrs: Dict[str, int] = {}
    runs: List[Any] = []
    try:
        for name in names:
            ptrs[name] = worker.malloc(max(arrays[name].nbytes, 1))
            worker.copy_to(ptrs[name], np.ascontiguousarray(arrays[name]))
        config = CallConfig(pipeline_depth=depth)
        start = time.perf_counter()
        for t in range(shape.tokens):
            args = ChipStorageTaskArgs()
            for name in names:
                a = arrays[name]
                if name in ("x", "out"):  # this step's row
                    row = a.nbytes // a.shape[0]
                    args.add_tensor(ChipTensor.make(ptrs[name] + t * row, (1, a.shape[1]), storage))
                else:
                    args.add_tensor(ChipTensor.make(ptrs[name], a.shape, storage))
            for value in (shape.pos0 + t, 1, shape.heads):
                args.add_scalar(value)
            runs.append(worker.submit(handle, args, config=config))
        seconds: List[float] = []
        for run in runs:
            run.wait()
            seconds.append(time.perf_counter() - start)
        for name in ("out", "k_cache", "v_cache"):
            worker.copy_from(arrays[name], ptrs[name])
        return seconds
    finally:
        for run in runs:  # no device memory goes while a run may still use it
            try:
                run.wait()
            except Exception:  # noqa: BLE001 - the first error is already propagating
                pass
        for ptr in ptrs.values():
            worker.free(ptr)
