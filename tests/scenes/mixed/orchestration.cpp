// The mixed stream: single-core tasks (alternately AIC and AIV, each on its own element of
// s) with a cluster task after every `every` of them. Tensors: 0 x (IN), 1 y (OUT), 2 s
// (INOUT, one element per single-core task); scalars: 0 singles, 1 every, 2 clusters per
// cluster task (block_num), 3 single_us, 4 cluster_us. Cluster task k owns chunk k of x/y.
#include "simpler/orch/orchestration_api.h"

namespace {
enum Kernel : int32_t { kSingleAic = 0, kSingleAiv = 1, kCluster = 2 };

ChipTensor slice(const ChipTensor& t, int64_t first, int64_t count) {
  ChipTensor v = t;
  v.start_offset = t.start_offset + first * t.strides[0];
  v.shapes[0] = count;
  return v;
}
}  // namespace

extern "C" int mixed_stream(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const ChipTensor &x = args->tensors[0], &y = args->tensors[1], &s = args->tensors[2];
  const int64_t singles = static_cast<int64_t>(args->scalars[0]);
  const int64_t every = static_cast<int64_t>(args->scalars[1]);
  const auto blocks = static_cast<uint32_t>(args->scalars[2]);
  const auto single_us = static_cast<int64_t>(args->scalars[3]);
  const auto cluster_us = static_cast<int64_t>(args->scalars[4]);
  const int64_t cluster_tasks = every > 0 ? singles / every : 0;
  if (singles != s.shapes[0] || cluster_tasks == 0 || x.shapes[0] % cluster_tasks != 0)
    return api->fatal(api->rt,
                      "mixed_stream: s must have `singles` elements, x one chunk per cluster task");
  const int64_t chunk = x.shapes[0] / cluster_tasks;
  SimplerTaskResult r;
  for (int64_t i = 0; i < singles; ++i) {
    if (i % every == every / 2 && i / every < cluster_tasks) {
      const int64_t k = i / every;
      if (int rc = simpler::orch::Task(api, kCluster, SIMPLER_CORE_MIX, blocks)
                       .in(slice(x, k * chunk, chunk))
                       .out(slice(y, k * chunk, chunk))
                       .scalar(cluster_us)
                       .submit(&r))
        return rc;
    }
    const bool aic = i % 3 == 0;
    if (int rc = simpler::orch::Task(api, aic ? kSingleAic : kSingleAiv,
                                     aic ? SIMPLER_CORE_AIC : SIMPLER_CORE_AIV)
                     .inout(slice(s, i, 1))
                     .scalar(single_us)
                     .submit(&r))
      return rc;
  }
  return 0;
}
