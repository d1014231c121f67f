// A single-core task of scene_bench's mixed stream (AIC or AIV; the orchestration is
// tests/scenes/mixed/orchestration.cpp): `us` microseconds of CPU work, then s[0] += 1.
// Tensors: 0 s (INOUT, float32, one element); scalars: 0 us.
#include "busy.h"
#include "simpler/kernel/kernel_abi.h"

extern "C" void kernel_entry(int64_t* args) {
  busy_for_us(simpler_scalar_i64(args, 1));
  auto* s = static_cast<float*>(simpler_tensor_data(simpler_tensor_arg(args, 0), sizeof(float)));
  s[0] += 1.0f;
}
