// y = x + s over 1-D float32 tensors, split across the SPMD blocks (worker tests).
#include "simpler/kernel/kernel_abi.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* x = simpler_tensor_arg(args, 0);
  const ChipTensor* y = simpler_tensor_arg(args, 1);
  const float s = simpler_scalar_f32(args, 2);
  const float* px = (const float*)simpler_tensor_data(x, sizeof(float));
  float* py = (float*)simpler_tensor_data(y, sizeof(float));
  const int64_t n = x->shapes[0];
  const int64_t blocks = simpler_block_num(args);
  const int64_t chunk = (n + blocks - 1) / blocks;
  const int64_t begin = chunk * simpler_block_idx(args);
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  for (int64_t i = begin; i < end; ++i) py[i] = px[i] + s;
}
