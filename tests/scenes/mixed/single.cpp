// A single-core task of the mixed stream (AIC or AIV): waits `us` microseconds (a stand-in
// for a kernel's work that costs the test machine no CPU), then s[0] += 1.
// Tensors: 0 s (INOUT, float32, one element); scalars: 0 us.
#include <chrono>
#include <thread>

#include "simpler/kernel/kernel_abi.h"

extern "C" void kernel_entry(int64_t* args) {
  std::this_thread::sleep_for(std::chrono::microseconds(simpler_scalar_i64(args, 1)));
  auto* s = static_cast<float*>(simpler_tensor_data(simpler_tensor_arg(args, 0), sizeof(float)));
  s[0] += 1.0f;
}
