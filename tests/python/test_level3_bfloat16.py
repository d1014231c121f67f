"""A typed BFLOAT16 tensor at level 3: numpy has no bfloat16 and ``orch.submit`` takes only
numpy arrays, so a uint16 array of the bits is one (docs/api.md, the orchestrator table), as
the collectives' ``dtype=DataType.BFLOAT16`` takes it. It was refused ("expected a BFLOAT16
array, got UINT16"), leaving no way to call such a kernel at level 3."""
from __future__ import annotations

import numpy as np
import pytest

from simpler import Worker
from simpler.errors import ArgumentTypeError
from simpler.task_interface import ArgDirection as D, ChipCallable, CoreCallable, DataType

KERNEL = r"""
#include <string.h>
#include "simpler/kernel/kernel_abi.h"
extern "C" void kernel_entry(int64_t* args) {  // y = x + s in bfloat16 (round to nearest even)
  const ChipTensor* x = simpler_tensor_arg(args, 0);
  const float s = simpler_scalar_f32(args, 2);
  const uint16_t* px = (const uint16_t*)simpler_tensor_data(x, 2);
  uint16_t* py = (uint16_t*)simpler_tensor_data(simpler_tensor_arg(args, 1), 2);
  for (int64_t i = 0; i < x->shapes[0]; ++i) {
    uint32_t b = (uint32_t)px[i] << 16;
    float f;
    memcpy(&f, &b, 4);
    f += s;
    memcpy(&b, &f, 4);
    py[i] = (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
  }
}
"""


def _bf16_bits(values):
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.fixture(scope="module")
def add_bf16(compiler):
    bf16 = DataType.BFLOAT16
    kernel = CoreCallable.build([(D.IN, bf16, 1), (D.OUT, bf16, 1), (D.SCALAR, DataType.FLOAT32)],
                                compiler.compile_kernel(KERNEL, "aiv"))
    return ChipCallable.from_kernel(kernel)


def test_a_uint16_array_feeds_a_bfloat16_tensor_at_level_3(add_bf16):
    x = _bf16_bits(np.arange(16))
    y = np.zeros_like(x)
    with Worker(level=3, device_ids=[1]) as w:
        w.init()
        add = w.register(add_bf16)
        w.run(lambda o, a: o.submit(add, x, y, 1.0))
        np.testing.assert_array_equal(y, _bf16_bits(np.arange(16) + 1))
        with pytest.raises(ArgumentTypeError, match="expected a BFLOAT16 array, got INT16"):
            w.run(lambda o, a: o.submit(add, x.view(np.int16), y, 1.0))   # only its bits' type
        assert w.last_run_stats["tasks"] == 0
