// out = x * y (1-D float32), on vector cores; each SPMD block takes one chunk.
#include "simpler/kernel/kernel_abi.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* x = simpler_tensor_arg(args, 0);
  const ChipTensor* y = simpler_tensor_arg(args, 1);
  const ChipTensor* out = simpler_tensor_arg(args, 2);
  if (x->dtype != CHIP_DT_FLOAT32 || y->shapes[0] != x->shapes[0] ||
      out->shapes[0] != x->shapes[0]) {
    simpler_kernel_fail(args, 1);
    return;
  }
  const float* px = (const float*)simpler_tensor_data(x, sizeof(float));
  const float* py = (const float*)simpler_tensor_data(y, sizeof(float));
  float* po = (float*)simpler_tensor_data(out, sizeof(float));
  const int64_t n = x->shapes[0];
  const int64_t chunk = (n + simpler_block_num(args) - 1) / simpler_block_num(args);
  const int64_t begin = chunk * simpler_block_idx(args);
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  for (int64_t i = begin; i < end; ++i)
    po[i * out->strides[0]] = px[i * x->strides[0]] * py[i * y->strides[0]];
}
