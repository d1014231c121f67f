// A cluster (MIX) task of scene_bench's mixed stream, as tests/scenes/mixed/cluster.cpp
// but with CPU work instead of sleeps: the AIC part works `us`, puts 2 x into the cluster
// buffer and hands it to the AIV parts (flag 0); each works `us`, adds 1 to its half and
// hands it back (flag 1); the AIC part stores y = 2 x + 1. Block b owns chunk b.
// Tensors: 0 x (IN, float32), 1 y (OUT, float32, same numel); scalars: 0 us.
#include "busy.h"
#include "simpler/kernel/kernel_abi.h"

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
    busy_for_us(us);
    for (int64_t i = 0; i < chunk; ++i) buf[i] = 2.0f * x[i];
    for (uint32_t a = 0; a < c->aiv_num; ++a)
      if (simpler_cluster_set_flag(args, 0) != 0) return;
    for (uint32_t a = 0; a < c->aiv_num; ++a)
      if (simpler_cluster_wait_flag(args, 1) != 0) return;
    for (int64_t i = 0; i < chunk; ++i) y[i] = buf[i];
  } else {
    if (simpler_cluster_wait_flag(args, 0) != 0) return;
    busy_for_us(us);
    const int64_t half = (chunk + 1) / 2;
    for (int64_t i = c->aiv_idx * half; i < chunk && i < (c->aiv_idx + 1) * half; ++i)
      buf[i] += 1.0f;
    (void)simpler_cluster_set_flag(args, 1);
  }
}
