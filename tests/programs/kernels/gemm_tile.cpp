// Kernel gemm_tile (AIC): C = A * B, float32. Signature [IN A (M x K), IN B (K x N),
// OUT C (M x N)]; 2-D views with any strides (tiles of larger matrices).
#include "kernel_util.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* a = simpler_tensor_arg(args, 0);
  const ChipTensor* b = simpler_tensor_arg(args, 1);
  const ChipTensor* c = simpler_tensor_arg(args, 2);
  if (a->ndims != 2 || b->ndims != 2 || c->ndims != 2 || a->shapes[1] != b->shapes[0] ||
      c->shapes[0] != a->shapes[0] || c->shapes[1] != b->shapes[1]) {
    simpler_kernel_fail(args, 2);
    return;
  }
  const int64_t m = a->shapes[0], k = a->shapes[1], n = b->shapes[1];
  const float* pa = test_kernels::base<float>(*a) + a->start_offset;
  const float* pb = test_kernels::base<float>(*b) + b->start_offset;
  float* pc = test_kernels::base<float>(*c) + c->start_offset;
  for (int64_t i = 0; i < m; ++i) {
    float* row = pc + i * c->strides[0];
    for (int64_t j = 0; j < n; ++j) row[j * c->strides[1]] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float av = pa[i * a->strides[0] + p * a->strides[1]];
      const float* brow = pb + p * b->strides[0];
      for (int64_t j = 0; j < n; ++j) row[j * c->strides[1]] += av * brow[j * b->strides[1]];
    }
  }
}
