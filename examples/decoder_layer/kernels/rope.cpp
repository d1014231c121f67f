// Rotary embedding of one head, in place (vector core): row i is the token at position
// pos0 + i; its two halves rotate by the angle table rows cos[pos], sin[pos].
// Scalar 0: pos0.
#include "layer_math.h"

extern "C" void kernel_entry(int64_t* args) {
  layer::Matrix x, cos_table, sin_table;
  if (!layer::matrix(simpler_tensor_arg(args, 0), &x) ||
      !layer::matrix(simpler_tensor_arg(args, 1), &cos_table) ||
      !layer::matrix(simpler_tensor_arg(args, 2), &sin_table) || x.cols % 2 != 0 ||
      cos_table.cols * 2 != x.cols || sin_table.cols != cos_table.cols) {
    simpler_kernel_fail(args, 1);
    return;
  }
  const int64_t pos0 = simpler_scalar_i64(args, 3);
  const int64_t half = x.cols / 2;
  for (int64_t i = 0; i < x.rows; ++i) {
    const int64_t pos = pos0 + i;
    if (pos < 0 || pos >= cos_table.rows) {
      simpler_kernel_fail(args, 2);
      return;
    }
    for (int64_t j = 0; j < half; ++j) {
      const float c = cos_table.get(pos, j), s = sin_table.get(pos, j);
      const float x1 = x.get(i, j), x2 = x.get(i, j + half);
      x.set(i, j, x1 * c - x2 * s);
      x.set(i, j + half, x2 * c + x1 * s);
    }
  }
}
