// y = x / sqrt(mean(x^2) + eps) * w, row by row (vector core). Scalar 0: eps (float32).
#include "layer_math.h"

extern "C" void kernel_entry(int64_t* args) {
  layer::Matrix x, w, y;
  if (!layer::matrix(simpler_tensor_arg(args, 0), &x) ||
      !layer::matrix(simpler_tensor_arg(args, 1), &w) ||
      !layer::matrix(simpler_tensor_arg(args, 2), &y) || w.cols != x.cols || y.rows != x.rows ||
      y.cols != x.cols) {
    simpler_kernel_fail(args, 1);
    return;
  }
  const float eps = simpler_scalar_f32(args, 3);
  for (int64_t i = 0; i < x.rows; ++i) {
    float sum = 0.0f;
    for (int64_t j = 0; j < x.cols; ++j) sum += x.get(i, j) * x.get(i, j);
    const float inv = 1.0f / std::sqrt(sum / static_cast<float>(x.cols) + eps);
    for (int64_t j = 0; j < x.cols; ++j) y.set(i, j, x.get(i, j) * inv * w.get(0, j));
  }
}
