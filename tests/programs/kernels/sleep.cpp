// Kernel sleep: sleeps `ms` milliseconds, then x[0] += 1 (float32). Signature
// [INOUT x, SCALAR ms (i64)]. A slow kernel for the watchdog and ordering tests.
#include <chrono>
#include <thread>

#include "kernel_util.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* x = simpler_tensor_arg(args, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(simpler_scalar_i64(args, 1)));
  test_kernels::base<float>(*x)[x->start_offset] += 1.0f;
}
