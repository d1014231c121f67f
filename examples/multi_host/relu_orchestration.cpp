// relu: one SPMD task, 4 blocks wide, y = max(x, 0) (1-D float32).
#include "simpler/orch/orchestration_api.h"

extern "C" int relu_orchestration(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  if (args->tensor_count != 2) return api->fatal(api->rt, "relu: expected tensors x, y");
  SimplerTaskResult result;
  return simpler::orch::Task(api, 0, SIMPLER_CORE_AIV, /*block_num=*/4)
      .in(args->tensors[0])
      .out(args->tensors[1])
      .submit(&result);
}
