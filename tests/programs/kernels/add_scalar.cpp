// Kernel add_scalar (AIV): y = x + s, float32. Signature [IN x, OUT y, SCALAR s (f32 bits)].
#include "kernel_util.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* x = simpler_tensor_arg(args, 0);
  const ChipTensor* y = simpler_tensor_arg(args, 1);
  const float s = simpler_scalar_f32(args, 2);
  if (!test_kernels::same_shape(*x, *y)) {
    simpler_kernel_fail(args, 2);
    return;
  }
  const float* px = test_kernels::base<float>(*x);
  float* py = test_kernels::base<float>(*y);
  const ChipTensor* views[2] = {x, y};
  test_kernels::for_each_element(views, [&](const int64_t* o) { py[o[1]] = px[o[0]] + s; });
}
