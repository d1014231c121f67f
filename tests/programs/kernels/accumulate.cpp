// Kernel accumulate (AIV): C += T (or C = T when the scalar `overwrite` is nonzero),
// float32. Signature [INOUT C (view), IN T, SCALAR overwrite (i64)]; same shapes.
#include "kernel_util.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* c = simpler_tensor_arg(args, 0);
  const ChipTensor* t = simpler_tensor_arg(args, 1);
  const bool overwrite = simpler_scalar_i64(args, 2) != 0;
  if (!test_kernels::same_shape(*c, *t)) {
    simpler_kernel_fail(args, 2);
    return;
  }
  float* pc = test_kernels::base<float>(*c);
  const float* pt = test_kernels::base<float>(*t);
  const ChipTensor* views[2] = {c, t};
  if (overwrite) {
    test_kernels::for_each_element(views, [&](const int64_t* o) { pc[o[0]] = pt[o[1]]; });
  } else {
    test_kernels::for_each_element(views, [&](const int64_t* o) { pc[o[0]] += pt[o[1]]; });
  }
}
