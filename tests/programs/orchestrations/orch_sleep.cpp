// orch_sleep [INOUT x, SCALAR ms]: one kernel that sleeps ms, then x[0] += 1.
// Children: 0 sleep.
#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_sleep(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult r;
  return Task(api, 0, SIMPLER_CORE_AIV)
      .inout(args->tensors[0])
      .scalar(static_cast<int64_t>(args->scalars[0]))
      .submit(&r);
}
