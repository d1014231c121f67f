// Entry [INOUT flag, OUT out]: one single-block AIV task running kernel 0 (wait_flag).
#include "simpler/orch/orchestration_api.h"

extern "C" int wait_flag_entry(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskDesc task = {};
  task.func_id = 0;
  task.core_type = SIMPLER_CORE_AIV;
  task.block_num = 1;
  task.tensor_count = 2;
  task.tensors[0].tensor = args->tensors[0];
  task.tensors[0].mode = SIMPLER_TENSOR_NODEP;
  task.tensors[1].tensor = args->tensors[1];
  task.tensors[1].mode = SIMPLER_TENSOR_OUT;
  SimplerTaskResult result;
  return api->submit(api->rt, &task, &result);
}
