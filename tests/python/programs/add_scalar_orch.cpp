// Entry [IN x, OUT y, SCALAR s]: one 4-block AIV task running kernel 0 (y = x + s).
#include "simpler/orch/orchestration_api.h"

extern "C" int add_scalar_entry(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  if (args->tensor_count != 2 || args->scalar_count != 1) {
    return api->fatal(api->rt, "add_scalar_entry: expected tensors x, y and scalar s");
  }
  SimplerTaskDesc task = {};
  task.func_id = 0;
  task.core_type = SIMPLER_CORE_AIV;
  task.block_num = 4;
  task.tensor_count = 2;
  task.tensors[0].tensor = args->tensors[0];
  task.tensors[0].mode = SIMPLER_TENSOR_IN;
  task.tensors[1].tensor = args->tensors[1];
  task.tensors[1].mode = SIMPLER_TENSOR_OUT;
  task.scalar_count = 1;
  task.scalars[0] = args->scalars[0];
  SimplerTaskResult result;
  return api->submit(api->rt, &task, &result);
}
