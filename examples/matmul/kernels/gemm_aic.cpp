// p = a @ b for one tile (2-D float32 views, any strides), on cube (AIC) cores.
#include "simpler/kernel/kernel_abi.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* a = simpler_tensor_arg(args, 0);
  const ChipTensor* b = simpler_tensor_arg(args, 1);
  const ChipTensor* p = simpler_tensor_arg(args, 2);
  const int64_t m_size = a->shapes[0], k_size = a->shapes[1], n_size = b->shapes[1];
  if (a->ndims != 2 || b->ndims != 2 || p->ndims != 2 || a->dtype != CHIP_DT_FLOAT32 ||
      b->shapes[0] != k_size || p->shapes[0] != m_size || p->shapes[1] != n_size) {
    simpler_kernel_fail(args, 1);
    return;
  }
  const float* pa = (const float*)simpler_tensor_data(a, sizeof(float));
  const float* pb = (const float*)simpler_tensor_data(b, sizeof(float));
  float* pp = (float*)simpler_tensor_data(p, sizeof(float));
  for (int64_t m = 0; m < m_size; ++m) {
    float* row = pp + m * p->strides[0];
    for (int64_t n = 0; n < n_size; ++n) row[n * p->strides[1]] = 0.0f;
    for (int64_t k = 0; k < k_size; ++k) {
      const float a_mk = pa[m * a->strides[0] + k * a->strides[1]];
      const float* b_row = pb + k * b->strides[0];
      for (int64_t n = 0; n < n_size; ++n)
        row[n * p->strides[1]] += a_mk * b_row[n * b->strides[1]];
    }
  }
}
