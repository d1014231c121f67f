// c = a + b, elementwise over 2-D views (vector core): the residual connections.
#include "layer_math.h"

extern "C" void kernel_entry(int64_t* args) {
  layer::Matrix a, b, c;
  if (!layer::matrix(simpler_tensor_arg(args, 0), &a) ||
      !layer::matrix(simpler_tensor_arg(args, 1), &b) ||
      !layer::matrix(simpler_tensor_arg(args, 2), &c) || a.rows != b.rows || a.cols != b.cols ||
      c.rows != a.rows || c.cols != a.cols) {
    simpler_kernel_fail(args, 1);
    return;
  }
  for (int64_t i = 0; i < c.rows; ++i)
    for (int64_t j = 0; j < c.cols; ++j) c.set(i, j, a.get(i, j) + b.get(i, j));
}
