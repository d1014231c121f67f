// Kernel slow_copy: sleeps `ms` milliseconds, then dst = src (float32, same element
// count, contiguous). Signature [IN src, OUT dst, SCALAR ms (i64)]. A slow reader for the
// cross-run ordering tests of pipelined runs.
#include <chrono>
#include <thread>

#include "kernel_util.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* src = simpler_tensor_arg(args, 0);
  const ChipTensor* dst = simpler_tensor_arg(args, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(simpler_scalar_i64(args, 2)));
  const float* s = test_kernels::base<float>(*src) + src->start_offset;
  float* d = test_kernels::base<float>(*dst) + dst->start_offset;
  for (int64_t i = 0; i < dst->shapes[0]; ++i) d[i] = s[i];
}
