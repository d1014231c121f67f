// Kernel add_const (AIV): x += c in place, float32. Signature [INOUT x, SCALAR c (f32 bits)].
#include "kernel_util.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* x = simpler_tensor_arg(args, 0);
  const float c = simpler_scalar_f32(args, 1);
  float* px = test_kernels::base<float>(*x);
  const ChipTensor* views[1] = {x};
  test_kernels::for_each_element(views, [&](const int64_t* o) { px[o[0]] += c; });
}
