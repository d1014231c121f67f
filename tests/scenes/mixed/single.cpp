// A single-core task of the mixed stream (AIC or AIV): waits `us` microseconds (a stand-in
// for a kernel's work that costs the test machine no CPU), then s[0] += 1.
// Tensors: 0 s (INOUT, float32, one element); scalars: 0 us.
#include <chrono>
#include <thread>

#include "simpler/kernel/kernel_abi.h"

// scene_bench compiles this file with MIXED_WORK_US defined as CPU work (its
// bench/scenes/kernels/busy.h), so a kernel there occupies a hardware thread as real work does.
#ifndef MIXED_WORK_US
#define MIXED_WORK_US(us) std::this_thread::sleep_for(std::chrono::microseconds(us))
#endif

extern "C" void kernel_entry(int64_t* args) {
  MIXED_WORK_US(simpler_scalar_i64(args, 1));
  auto* s = static_cast<float*>(simpler_tensor_data(simpler_tensor_arg(args, 0), sizeof(float)));
  s[0] += 1.0f;
}
