// Entry [INOUT flag(int32), OUT out(int32)]: what a kernel must not do (docs/kernels.md).
// Task A (kernel 0, wait_flag) waits for the flag, which only this orchestration sets, after
// submitting B (the same kernel, after A: both write out). When this thread runs A itself
// (work-first), A waits for a write_value its own thread would make later.
#include "simpler/orch/orchestration_api.h"

namespace {

int submit_wait(const SimplerOrchApi* api, const ChipTensor& flag, const ChipTensor& out) {
  SimplerTaskDesc task = {};
  task.func_id = 0;
  task.core_type = SIMPLER_CORE_AIV;
  task.block_num = 1;
  task.tensor_count = 2;
  task.tensors[0].tensor = flag;
  task.tensors[0].mode = SIMPLER_TENSOR_NODEP;
  task.tensors[1].tensor = out;
  task.tensors[1].mode = SIMPLER_TENSOR_OUT;
  SimplerTaskResult result;
  return api->submit(api->rt, &task, &result);
}

}  // namespace

extern "C" int wait_on_orch_entry(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const ChipTensor& flag = args->tensors[0];
  const ChipTensor& out = args->tensors[1];
  int rc = 0;
  if ((rc = submit_wait(api, flag, out))) return rc;  // A
  if ((rc = submit_wait(api, flag, out))) return rc;  // B: its consumer
  const int32_t go = 42;
  return api->write_value(api->rt, &flag, 0, &go, sizeof go);
}
