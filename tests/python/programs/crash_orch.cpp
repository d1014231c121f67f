// Entry [INOUT x, SCALAR how, SCALAR who]: who 0 = one task running the crash kernel with
// `how`; who 1 = the orchestration itself misbehaves (how 0 NULL dereference, 1 abort(),
// 3 never returns without a runtime call).
#include <stdlib.h>
#include <unistd.h>

#include "simpler/orch/orchestration_api.h"

static int* volatile g_null = 0;

extern "C" int crash_entry(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const int64_t how = (int64_t)args->scalars[0];
  if (args->scalars[1] == 1) {
    if (how == 0) *g_null = 1;
    if (how == 1) abort();
    if (how == 3) {
      for (;;) sleep(1);
    }
    return 0;
  }
  SimplerTaskDesc task = {};
  task.func_id = 0;
  task.core_type = SIMPLER_CORE_AIV;
  task.block_num = 1;
  task.tensor_count = 1;
  task.tensors[0].tensor = args->tensors[0];
  task.tensors[0].mode = SIMPLER_TENSOR_INOUT;
  task.scalar_count = 1;
  task.scalars[0] = (uint64_t)how;
  SimplerTaskResult result;
  return api->submit(api->rt, &task, &result);
}
