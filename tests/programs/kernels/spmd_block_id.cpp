// Kernel spmd_block_id (AIC or AIV, SPMD): block b of n writes b into slice b of y
// (int32, numel divisible by n). Signature [OUT y].
#include "kernel_util.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* y = simpler_tensor_arg(args, 0);
  const uint32_t b = simpler_block_idx(args);
  const uint32_t n = simpler_block_num(args);
  const int64_t total = test_kernels::numel(*y);
  if (y->ndims != 1 || n == 0 || b >= n || total % n != 0) {
    simpler_kernel_fail(args, 2);
    return;
  }
  const int64_t chunk = total / n;
  int32_t* py = test_kernels::base<int32_t>(*y) + y->start_offset;
  for (int64_t i = b * chunk; i < (b + 1) * chunk; ++i)
    py[i * y->strides[0]] = static_cast<int32_t>(b);
}
