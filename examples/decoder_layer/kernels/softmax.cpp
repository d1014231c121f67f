// Causal softmax of attention scores, in place (vector core): row i is the query at
// position pos0 + i and may attend to key positions 0..pos0 + i; later keys get 0.
// Scalars: 0 scale (float32, applied before the softmax), 1 pos0.
#include "layer_math.h"

extern "C" void kernel_entry(int64_t* args) {
  layer::Matrix s;
  if (!layer::matrix(simpler_tensor_arg(args, 0), &s)) {
    simpler_kernel_fail(args, 1);
    return;
  }
  const float scale = simpler_scalar_f32(args, 1);
  const int64_t pos0 = simpler_scalar_i64(args, 2);
  for (int64_t i = 0; i < s.rows; ++i)
    layer::softmax_row(s, i, scale, layer::causal_last(pos0, i, s.cols));
}
