// orch_explicit_dep [INOUT x, OUT y, SCALAR ms]: A sleeps ms then x[0] += 1; B computes
// y = x + 0 but passes x as NODEP, so only add_dependency(A, B) orders it after A.
// Children: 0 sleep, 1 add_scalar.
#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_explicit_dep(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const ChipTensor& x = args->tensors[0];
  SimplerTaskResult a, b;
  TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV)
                    .inout(x)
                    .scalar(static_cast<int64_t>(args->scalars[0]))
                    .submit(&a));
  TEST_ORCH_TRY(
      Task(api, 1, SIMPLER_CORE_AIV).nodep(x).out(args->tensors[1]).scalar_f32(0.0f).submit(&b));
  return api->add_dependency(api->rt, a.task_id, b.task_id);
}
