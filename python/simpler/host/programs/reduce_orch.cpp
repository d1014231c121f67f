// Host-level collectives: entry [INOUT acc, IN x, SCALAR op] submits one AIV task that
// computes acc = op(acc, x) elementwise (1-D views of one dtype; op 0 sum, 1 max, 2 min).
#include "simpler/orch/orchestration_api.h"

extern "C" int simpler_host_reduce(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  if (args->tensor_count != 2 || args->scalar_count != 1) {
    return api->fatal(api->rt, "simpler_host_reduce: expected tensors acc, x and scalar op");
  }
  SimplerTaskResult result;
  return simpler::orch::Task(api, 0, SIMPLER_CORE_AIV, /*block_num=*/4)
      .inout(args->tensors[0])
      .in(args->tensors[1])
      .scalar(static_cast<int64_t>(args->scalars[0]))
      .submit(&result);
}
