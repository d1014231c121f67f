// y = silu(gate) * up, elementwise (vector core): the gated MLP's activation.
#include "layer_math.h"

extern "C" void kernel_entry(int64_t* args) {
  layer::Matrix g, u, y;
  if (!layer::matrix(simpler_tensor_arg(args, 0), &g) ||
      !layer::matrix(simpler_tensor_arg(args, 1), &u) ||
      !layer::matrix(simpler_tensor_arg(args, 2), &y) || g.rows != u.rows || g.cols != u.cols ||
      y.rows != g.rows || y.cols != g.cols) {
    simpler_kernel_fail(args, 1);
    return;
  }
  for (int64_t i = 0; i < y.rows; ++i) {
    for (int64_t j = 0; j < y.cols; ++j) {
      const float x = g.get(i, j);
      y.set(i, j, x / (1.0f + std::exp(-x)) * u.get(i, j));
    }
  }
}
