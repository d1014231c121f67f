// Kernel cluster_exchange (MIX: a cluster task, run on the AIC and both AIV cores of each
// of its clusters). Signature [IN x (float32, 1-D), OUT y (float32, 1-D, same numel),
// SCALAR mode]. Block b (cluster b of the task) owns chunk b of x and y.
//   mode 0 (exchange): the AIC part copies the chunk into the cluster buffer times 2 and
//     sets flag 0 once per AIV part; each AIV part waits for it, adds 1 to its half of the
//     buffer and sets flag 1; the AIC part waits for flag 1 twice; after a barrier of all
//     three parts AIV part 0 stores the chunk: y = 2 x + 1.
//   mode 1 (stuck): AIV part 1 waits for flag 5, which no part sets.
//   mode 2 (barrier): the AIC part returns at once, the AIV parts wait at a barrier.
//   mode 3 (identity): y[3b + p] = core_type * 100 + aiv_idx * 10 + (core_id == expected)
//     for part p (0: AIC, 1..2: AIV), checking what each part sees of its cluster.
//   mode 4 (slow exchange): mode 0 after the AIC part slept 50 ms (longer than any
//     dispatcher spins before it parks).
//   mode 5 (overrun): the AIC part writes the byte just past the end of the cluster buffer.
//   mode 6 (bad flag): AIV part 0 sets flag SIMPLER_CLUSTER_FLAG_COUNT (out of range); the
//     AIC part waits for flag 0, which the failed run releases.
#include <chrono>
#include <thread>

#include "kernel_util.h"

namespace {

float* data(const ChipTensor* t) { return test_kernels::base<float>(*t) + t->start_offset; }

void exchange(int64_t* args, const SimplerClusterOps* c, const float* x, float* y, int64_t chunk) {
  float* buf = static_cast<float*>(c->buffer);
  const bool aic = simpler_core_type(args) == SIMPLER_CORE_AIC;
  if (aic) {
    for (int64_t i = 0; i < chunk; ++i) buf[i] = 2.0f * x[i];
    for (uint32_t a = 0; a < c->aiv_num; ++a)
      if (simpler_cluster_set_flag(args, 0) != 0) return;
    for (uint32_t a = 0; a < c->aiv_num; ++a)
      if (simpler_cluster_wait_flag(args, 1) != 0) return;
  } else {
    if (simpler_cluster_wait_flag(args, 0) != 0) return;
    const int64_t half = (chunk + 1) / 2;
    const int64_t begin = c->aiv_idx * half;
    const int64_t end = begin + half < chunk ? begin + half : chunk;
    for (int64_t i = begin; i < end; ++i) buf[i] += 1.0f;
    if (simpler_cluster_set_flag(args, 1) != 0) return;
  }
  if (simpler_cluster_barrier(args) != 0) return;
  if (!aic && c->aiv_idx == 0)
    for (int64_t i = 0; i < chunk; ++i) y[i] = buf[i];
}

}  // namespace

extern "C" void kernel_entry(int64_t* args) {
  const ChipTensor* x = simpler_tensor_arg(args, 0);
  const ChipTensor* y = simpler_tensor_arg(args, 1);
  const int64_t mode = simpler_scalar_i64(args, 2);
  const SimplerClusterOps* c = simpler_cluster(args);
  const uint32_t b = simpler_block_idx(args), n = simpler_block_num(args);
  if (c == nullptr || c->buffer == nullptr || b >= n) {
    simpler_kernel_fail(args, 2);
    return;
  }
  const int64_t total = test_kernels::numel(*y);
  const bool aic = simpler_core_type(args) == SIMPLER_CORE_AIC;
  if (mode == 4 && aic) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (mode == 0 || mode == 4) {
    const int64_t chunk = total / n;
    if (total % n != 0 || test_kernels::numel(*x) != total ||
        chunk * static_cast<int64_t>(sizeof(float)) > static_cast<int64_t>(c->buffer_bytes)) {
      simpler_kernel_fail(args, 3);
      return;
    }
    exchange(args, c, data(x) + b * chunk, data(y) + b * chunk, chunk);
  } else if (mode == 1) {
    if (!aic && c->aiv_idx == 1) (void)simpler_cluster_wait_flag(args, 5);
  } else if (mode == 2) {
    if (!aic) (void)simpler_cluster_barrier(args);
  } else if (mode == 5) {
    if (aic) static_cast<volatile uint8_t*>(c->buffer)[c->buffer_bytes] = 1;
  } else if (mode == 6) {
    if (!aic && c->aiv_idx == 0) (void)simpler_cluster_set_flag(args, SIMPLER_CLUSTER_FLAG_COUNT);
    if (aic) (void)simpler_cluster_wait_flag(args, 0);
  } else if (mode == 3) {
    const uint32_t part = aic ? 0 : 1 + c->aiv_idx;
    const uint32_t expected = aic ? c->cluster_id : 2 * c->cluster_id + c->aiv_idx;
    const uint32_t core_id = simpler_kernel_context(args)->core_id;
    if (3 * static_cast<int64_t>(b) + part < total) {
      data(y)[3 * b + part] = static_cast<float>(simpler_core_type(args) * 100 + c->aiv_idx * 10 +
                                                 (core_id == expected ? 1 : 0));
    }
  }
}
