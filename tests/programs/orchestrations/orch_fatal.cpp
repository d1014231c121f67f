// orch_fatal [INOUT x]: submits x += 1, then reports a fatal error.
// Children: 0 add_const.
#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_fatal(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult r;
  TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV).inout(args->tensors[0]).scalar_f32(1.0f).submit(&r));
  return api->fatal(api->rt, "deliberate failure requested by orch_fatal");
}
