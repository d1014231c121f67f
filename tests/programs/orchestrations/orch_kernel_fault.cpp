// orch_kernel_fault [INOUT x]: a kernel that reports fault 42, then three x += 1 tasks
// that depend on it (they must be skipped). Children: 0 fault, 1 add_const.
#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_kernel_fault(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult r;
  TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV).inout(args->tensors[0]).submit(&r));
  for (int i = 0; i < 3; ++i) {
    const int rc =
        Task(api, 1, SIMPLER_CORE_AIV).inout(args->tensors[0]).scalar_f32(1.0f).submit(&r);
    if (rc != 0) return rc;  // the fault may already be latched
  }
  return 0;
}
