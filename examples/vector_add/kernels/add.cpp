// c = a + b over 1-D float32 tensors, on vector (AIV) cores. SPMD: each block of the
// launch handles one contiguous chunk.
#include "simpler/kernel/kernel_abi.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* a = simpler_tensor_arg(args, 0);
  const ChipTensor* b = simpler_tensor_arg(args, 1);
  const ChipTensor* c = simpler_tensor_arg(args, 2);
  if (a->dtype != CHIP_DT_FLOAT32 || a->ndims != 1 || b->shapes[0] != a->shapes[0] ||
      c->shapes[0] != a->shapes[0]) {
    simpler_kernel_fail(args, 1);  // wrong arguments: fail the run instead of guessing
    return;
  }
  const float* pa = (const float*)simpler_tensor_data(a, sizeof(float));
  const float* pb = (const float*)simpler_tensor_data(b, sizeof(float));
  float* pc = (float*)simpler_tensor_data(c, sizeof(float));

  const int64_t n = a->shapes[0];
  const int64_t blocks = simpler_block_num(args);
  const int64_t chunk = (n + blocks - 1) / blocks;
  const int64_t begin = chunk * simpler_block_idx(args);
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  for (int64_t i = begin; i < end; ++i) {
    pc[i * c->strides[0]] = pa[i * a->strides[0]] + pb[i * b->strides[0]];
  }
}
