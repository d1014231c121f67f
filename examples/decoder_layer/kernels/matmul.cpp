// C = A @ B for one tile, on a cube (AIC) core. Any strides, so a transposed view of the
// KV cache (K^T) needs no copy. Accumulates in float32 and rounds once at the store.
#include "layer_math.h"

extern "C" void kernel_entry(int64_t* args) {
  layer::Matrix a, b, c;
  if (!layer::matrix(simpler_tensor_arg(args, 0), &a) ||
      !layer::matrix(simpler_tensor_arg(args, 1), &b) ||
      !layer::matrix(simpler_tensor_arg(args, 2), &c) || a.cols != b.rows || c.rows != a.rows ||
      c.cols != b.cols) {
    simpler_kernel_fail(args, 1);
    return;
  }
  for (int64_t i = 0; i < c.rows; ++i) {
    for (int64_t j = 0; j < c.cols; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < a.cols; ++k) acc += a.get(i, k) * b.get(k, j);
      c.set(i, j, acc);
    }
  }
}
