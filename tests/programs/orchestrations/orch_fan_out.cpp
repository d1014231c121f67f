// orch_fan_out [INOUT c(int32, >= 2), SCALAR n, SCALAR ms]: n independent overlap_probe
// tasks (c passed NODEP), alternately on AIC and AIV cores, each sleeping ms.
// Children: 0 overlap_probe (no core type: runs on either).
#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_fan_out(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const auto n = static_cast<int64_t>(args->scalars[0]);
  const auto ms = static_cast<int64_t>(args->scalars[1]);
  for (int64_t i = 0; i < n; ++i) {
    const bool aic = i % 2 == 0;
    SimplerTaskResult r;
    if (int rc = Task(api, 0, aic ? SIMPLER_CORE_AIC : SIMPLER_CORE_AIV)
                     .nodep(args->tensors[0])
                     .scalar(ms)
                     .submit(&r))
      return rc;
  }
  return 0;
}
