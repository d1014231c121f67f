// Cluster (MIX) task programs. Children: 0 cluster_exchange (MIX), 1 sleep (AIV).
//   orch_cluster [IN x, OUT y, SCALAR block_num, SCALAR mode]: one cluster task of
//     block_num clusters running cluster_exchange in `mode`.
//   orch_cluster_stream [IN x, OUT y, INOUT s (float32, 2 * singles), SCALAR singles,
//     SCALAR ms, SCALAR block_num]: `singles` independent sleep tasks (ms each, on element i
//     of s), then one cluster task (exchange mode, block_num clusters), then `singles` more
//     sleep tasks: the cluster task must not wait for the whole stream.
#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_cluster(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult r;
  return Task(api, 0, SIMPLER_CORE_MIX, static_cast<uint32_t>(args->scalars[0]))
      .in(args->tensors[0])
      .out(args->tensors[1])
      .scalar(static_cast<int64_t>(args->scalars[1]))
      .submit(&r);
}

extern "C" int orch_cluster_stream(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const int64_t singles = static_cast<int64_t>(args->scalars[0]);
  const int64_t ms = static_cast<int64_t>(args->scalars[1]);
  const uint32_t blocks = static_cast<uint32_t>(args->scalars[2]);
  const ChipTensor& s = args->tensors[2];
  SimplerTaskResult r;
  for (int64_t i = 0; i < 2 * singles; ++i) {
    if (i == singles) {
      if (int rc = Task(api, 0, SIMPLER_CORE_MIX, blocks)
                       .in(args->tensors[0])
                       .out(args->tensors[1])
                       .scalar(0)
                       .submit(&r))
        return rc;
    }
    if (int rc = Task(api, 1, SIMPLER_CORE_AIV)
                     .inout(test_orch::element_view(s, i))
                     .scalar(ms)
                     .submit(&r))
      return rc;
  }
  return 0;
}
