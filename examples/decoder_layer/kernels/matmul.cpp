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
  layer::matmul_tile(a, b, c);
}
