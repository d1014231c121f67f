// Kernel mul (AIV): c = a * b, float32. Signature [IN a, IN b, OUT c]; same shapes.
#include "kernel_util.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* a = simpler_tensor_arg(args, 0);
  const ChipTensor* b = simpler_tensor_arg(args, 1);
  const ChipTensor* c = simpler_tensor_arg(args, 2);
  if (!test_kernels::same_shape(*a, *c) || !test_kernels::same_shape(*b, *c)) {
    simpler_kernel_fail(args, 2);
    return;
  }
  const float* pa = test_kernels::base<float>(*a);
  const float* pb = test_kernels::base<float>(*b);
  float* pc = test_kernels::base<float>(*c);
  const ChipTensor* views[3] = {a, b, c};
  test_kernels::for_each_element(views, [&](const int64_t* o) { pc[o[2]] = pa[o[0]] * pb[o[1]]; });
}
