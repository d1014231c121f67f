// Entry [INOUT flag(int32), OUT out(int32), IN x, OUT y, OUT z (float32, same length),
// SCALAR case]. Children: 0 wait_flag [INOUT, OUT] (holds until flag != 0), 1 add_scalar
// [IN, OUT, SCALAR], 2 cluster_wait_flag (MIX: the same, on a whole cluster).
//   case 0: read_value(y) after y = x + 1 sees the task's result (it waits for the task that
//           writes y); write_value(out, 42) into a tensor no task touches.
//   case 1: cluster task A waits for the flag, which only the orchestration sets, last;
//           add_dependency(t0, B) where B is an older task still waiting for A (B is not
//           the latest task) is accepted; then write_value(flag, 42) (A and B pass flag
//           NODEP: nothing to wait for) releases A, and B writes 42 into out after it.
//           A is a cluster task because its parts run on helper threads: a single-core
//           task could be run by this thread itself (work-first), which would then wait
//           for its own write_value (docs/kernels.md).
#include "simpler/orch/orchestration_api.h"

namespace {

int submit(const SimplerOrchApi* api, int32_t func, const ChipTensor& a, uint32_t mode_a,
           const ChipTensor& b, uint32_t mode_b, float scalar, bool with_scalar,
           uint64_t* task_id) {
  SimplerTaskDesc task = {};
  task.func_id = func;
  task.core_type = func == 2 ? SIMPLER_CORE_MIX : SIMPLER_CORE_AIV;
  task.block_num = 1;
  task.tensor_count = 2;
  task.tensors[0].tensor = a;
  task.tensors[0].mode = mode_a;
  task.tensors[1].tensor = b;
  task.tensors[1].mode = mode_b;
  if (with_scalar) {
    task.scalar_count = 1;
    __builtin_memcpy(&task.scalars[0], &scalar, sizeof scalar);
  }
  SimplerTaskResult result;
  const int rc = api->submit(api->rt, &task, &result);
  if (task_id != nullptr) *task_id = result.task_id;
  return rc;
}

}  // namespace

extern "C" int value_order_entry(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const ChipTensor& flag = args->tensors[0];
  const ChipTensor& out = args->tensors[1];
  const ChipTensor& x = args->tensors[2];
  const ChipTensor& y = args->tensors[3];
  const ChipTensor& z = args->tensors[4];
  int rc = 0;
  const int32_t go = 42;
  if (args->scalars[0] == 0) {
    // (A task blocked on the orchestration would not do here: the orchestrator runs ready
    // tasks itself while it waits, so it might run that one.)
    if ((rc = submit(api, 1, x, SIMPLER_TENSOR_IN, y, SIMPLER_TENSOR_OUT, 1.0f, true, nullptr)))
      return rc;
    float x0 = 0, y0 = 0;
    if ((rc = api->read_value(api->rt, &x, 0, &x0, sizeof x0))) return rc;
    if ((rc = api->read_value(api->rt, &y, 0, &y0, sizeof y0))) return rc;
    if (y0 != x0 + 1.0f) return api->fatal(api->rt, "read_value did not see y = x + 1");
    return api->write_value(api->rt, &out, 0, &go, sizeof go);
  } else {
    uint64_t t0 = 0, b = 0;
    if ((rc = submit(api, 1, x, SIMPLER_TENSOR_IN, z, SIMPLER_TENSOR_OUT, 2.0f, true, &t0)))
      return rc;
    if ((rc = submit(api, 2, flag, SIMPLER_TENSOR_NODEP, out, SIMPLER_TENSOR_OUT, 0, false,
                     nullptr)))
      return rc;  // A
    if ((rc = submit(api, 0, flag, SIMPLER_TENSOR_NODEP, out, SIMPLER_TENSOR_OUT, 0, false, &b)))
      return rc;  // B: waits for A (both write out)
    if ((rc = submit(api, 1, x, SIMPLER_TENSOR_IN, y, SIMPLER_TENSOR_OUT, 1.0f, true, nullptr)))
      return rc;  // B is no longer the latest task
    if (t0 != 0 || b != 2) return api->fatal(api->rt, "task ids are not 0, 1, 2, ... per run");
    if ((rc = api->add_dependency(api->rt, t0, b))) return rc;
  }
  return api->write_value(api->rt, &flag, 0, &go, sizeof go);
}
