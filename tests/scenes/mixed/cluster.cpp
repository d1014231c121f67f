// A cluster (MIX) task of the mixed stream: block b owns chunk b of x and y. The AIC part
// waits `us`, puts 2 x into the cluster buffer and hands it to the AIV parts (flag 0); each
// waits `us`, adds 1 to its half and hands it back (flag 1); the AIC part stores y = 2 x + 1.
// Tensors: 0 x (IN, float32), 1 y (OUT, float32, same numel); scalars: 0 us.
#include <chrono>
#include <thread>

#include "simpler/kernel/kernel_abi.h"

// scene_bench compiles this file with MIXED_WORK_US defined as CPU work (its
// bench/scenes/kernels/busy.h), so a kernel there occupies a hardware thread as real work does.
#ifndef MIXED_WORK_US
#define MIXED_WORK_US(us) std::this_thread::sleep_for(std::chrono::microseconds(us))
#endif

extern "C" void kernel_entry(int64_t* args) {
  const SimplerClusterOps* c = simpler_cluster(args);
  const ChipTensor* xt = simpler_tensor_arg(args, 0);
  const ChipTensor* yt = simpler_tensor_arg(args, 1);
  const int64_t chunk = xt->shapes[0] / simpler_block_num(args);
  const int64_t first = chunk * simpler_block_idx(args);
  const int64_t us = simpler_scalar_i64(args, 2);
  if (c == nullptr || chunk * static_cast<int64_t>(sizeof(float)) > (int64_t)c->buffer_bytes) {
    simpler_kernel_fail(args, 1);
    return;
  }
  auto* buf = static_cast<float*>(c->buffer);
  if (simpler_core_type(args) == SIMPLER_CORE_AIC) {
    const float* x = static_cast<const float*>(simpler_tensor_data(xt, sizeof(float))) + first;
    float* y = static_cast<float*>(simpler_tensor_data(yt, sizeof(float))) + first;
    MIXED_WORK_US(us);
    for (int64_t i = 0; i < chunk; ++i) buf[i] = 2.0f * x[i];
    for (uint32_t a = 0; a < c->aiv_num; ++a)
      if (simpler_cluster_set_flag(args, 0) != 0) return;
    for (uint32_t a = 0; a < c->aiv_num; ++a)
      if (simpler_cluster_wait_flag(args, 1) != 0) return;
    for (int64_t i = 0; i < chunk; ++i) y[i] = buf[i];
  } else {
    if (simpler_cluster_wait_flag(args, 0) != 0) return;
    MIXED_WORK_US(us);
    const int64_t half = (chunk + 1) / 2;
    for (int64_t i = c->aiv_idx * half; i < chunk && i < (c->aiv_idx + 1) * half; ++i)
      buf[i] += 1.0f;
    (void)simpler_cluster_set_flag(args, 1);
  }
}
