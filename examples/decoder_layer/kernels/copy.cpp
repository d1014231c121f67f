// dst = src over 2-D views (vector core): appends K and V rows to the cache.
#include "layer_math.h"

extern "C" void kernel_entry(int64_t* args) {
  layer::Matrix src, dst;
  if (!layer::matrix(simpler_tensor_arg(args, 0), &src) ||
      !layer::matrix(simpler_tensor_arg(args, 1), &dst) || src.rows != dst.rows ||
      src.cols != dst.cols) {
    simpler_kernel_fail(args, 1);
    return;
  }
  for (int64_t i = 0; i < dst.rows; ++i)
    for (int64_t j = 0; j < dst.cols; ++j) dst.set(i, j, src.get(i, j));
}
