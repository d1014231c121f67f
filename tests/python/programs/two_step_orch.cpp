// Entry [IN x, OUT y, OUT z, SCALAR s]: y = x + s, then z = y + s (the second task reads
// what the first writes: one inferred RAW dependency). Logs one line per level first.
#include "simpler/orch/orchestration_api.h"

extern "C" int two_step_entry(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  if (args->tensor_count != 3 || args->scalar_count != 1) {
    return api->fatal(api->rt, "two_step_entry: expected tensors x, y, z and scalar s");
  }
  api->log(api->rt, SIMPLER_LOG_DEBUG, "two-step debug line");
  api->log(api->rt, SIMPLER_LOG_INFO, "two-step info line");
  api->log(api->rt, SIMPLER_LOG_WARN, "two-step warning line");
  SimplerTaskResult result;
  int rc = simpler::orch::Task(api, 0, SIMPLER_CORE_AIV)
               .in(args->tensors[0])
               .out(args->tensors[1])
               .scalar_bits(args->scalars[0])
               .submit(&result);
  if (rc != 0) return rc;
  return simpler::orch::Task(api, 0, SIMPLER_CORE_AIV)
      .in(args->tensors[1])
      .out(args->tensors[2])
      .scalar_bits(args->scalars[0])
      .submit(&result);
}
