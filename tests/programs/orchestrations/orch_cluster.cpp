// Cluster (MIX) task programs. Children: 0 cluster_exchange (MIX), 1 sleep (AIV).
//   orch_cluster [IN x, OUT y, SCALAR block_num, SCALAR mode]: one cluster task of
//     block_num clusters running cluster_exchange in `mode`.
//   orch_cluster_stream [IN x, OUT y, INOUT s (float32, 2 * singles), SCALAR singles,
//     SCALAR ms, SCALAR block_num]: `singles` independent sleep tasks (ms each, on element i
//     of s), then one cluster task (exchange mode, block_num clusters), then `singles` more
//     sleep tasks: the cluster task must not wait for the whole stream.
//   orch_cluster_then [IN x, OUT y, SCALAR mode]: one cluster task (one cluster, `mode`),
//     then one sleep task (0 ms: y[0] += 1) that depends on it alone.
//   orch_cluster_outside [IN x, OUT y]: cluster_exchange as a plain AIV task (mode 7): the
//     cluster calls outside a cluster task.
//   orch_cluster_fan [IN x, OUT y, INOUT c (int32, >= 2), SCALAR n, SCALAR ms]: one slow
//     cluster task (mode 4), then n overlap_probe tasks (ms each, c passed NODEP) ordered
//     after it by add_dependency alone: c[1] = the most of them that ran at once.
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

extern "C" int orch_cluster_then(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult r;
  if (int rc = Task(api, 0, SIMPLER_CORE_MIX, 1)
                   .in(args->tensors[0])
                   .out(args->tensors[1])
                   .scalar(static_cast<int64_t>(args->scalars[0]))
                   .submit(&r))
    return rc;
  return Task(api, 1, SIMPLER_CORE_AIV)
      .inout(test_orch::element_view(args->tensors[1], 0))
      .scalar(0)
      .submit(&r);
}

extern "C" int orch_cluster_outside(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult r;
  return Task(api, 0, SIMPLER_CORE_AIV)
      .in(args->tensors[0])
      .out(args->tensors[1])
      .scalar(7)
      .submit(&r);
}

extern "C" int orch_cluster_fan(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult cluster, probe;
  TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_MIX, 1)
                    .in(args->tensors[0])
                    .out(args->tensors[1])
                    .scalar(4)
                    .submit(&cluster));
  for (uint64_t i = 0; i < args->scalars[0]; ++i) {
    TEST_ORCH_TRY(Task(api, 1, SIMPLER_CORE_AIV)
                      .nodep(args->tensors[2])
                      .scalar(static_cast<int64_t>(args->scalars[1]))
                      .submit(&probe));
    TEST_ORCH_TRY(api->add_dependency(api->rt, cluster.task_id, probe.task_id));
  }
  return 0;
}
