// y = max(x, 0) over 1-D float32 tensors, split across the SPMD blocks.
#include "simpler/kernel/kernel_abi.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* x = simpler_tensor_arg(args, 0);
  const ChipTensor* y = simpler_tensor_arg(args, 1);
  if (x->dtype != CHIP_DT_FLOAT32 || x->ndims != 1 || y->shapes[0] != x->shapes[0]) {
    simpler_kernel_fail(args, 1);
    return;
  }
  const float* px = (const float*)simpler_tensor_data(x, sizeof(float));
  float* py = (float*)simpler_tensor_data(y, sizeof(float));
  const int64_t n = x->shapes[0];
  const int64_t blocks = simpler_block_num(args);
  const int64_t chunk = (n + blocks - 1) / blocks;
  const int64_t begin = chunk * simpler_block_idx(args);
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  for (int64_t i = begin; i < end; ++i) py[i] = px[i] > 0.0f ? px[i] : 0.0f;
}
