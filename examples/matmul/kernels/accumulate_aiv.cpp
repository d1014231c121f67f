// c = p (scalar `first` != 0) or c += p (2-D float32 views), on vector (AIV) cores;
// each SPMD block takes a band of rows.
#include "simpler/kernel/kernel_abi.h"

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* p = simpler_tensor_arg(args, 0);
  const ChipTensor* c = simpler_tensor_arg(args, 1);
  const int64_t first = simpler_scalar_i64(args, 2);
  if (p->ndims != 2 || c->ndims != 2 || p->shapes[0] != c->shapes[0] ||
      p->shapes[1] != c->shapes[1]) {
    simpler_kernel_fail(args, 1);
    return;
  }
  const float* pp = (const float*)simpler_tensor_data(p, sizeof(float));
  float* pc = (float*)simpler_tensor_data(c, sizeof(float));
  const int64_t rows = c->shapes[0], cols = c->shapes[1];
  const int64_t band = (rows + simpler_block_num(args) - 1) / simpler_block_num(args);
  const int64_t begin = band * simpler_block_idx(args);
  const int64_t end = begin + band < rows ? begin + band : rows;
  for (int64_t r = begin; r < end; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      const float v = pp[r * p->strides[0] + col * p->strides[1]];
      float* out = pc + r * c->strides[0] + col * c->strides[1];
      *out = first ? v : *out + v;
    }
  }
}
