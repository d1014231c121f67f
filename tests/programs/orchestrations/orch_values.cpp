// orch_values [INOUT x, OUT y] (float32, >= 2 elements): write_value x[0] = 5; task
// y = x + 1; read_value y[0] (must be 6, else fatal); write_value y[1] = 2 * y[0].
// Children: 0 add_scalar.
#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_values(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const ChipTensor& x = args->tensors[0];
  const ChipTensor& y = args->tensors[1];
  const float five = 5.0f;
  TEST_ORCH_TRY(api->write_value(api->rt, &x, 0, &five, sizeof five));
  SimplerTaskResult r;
  TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV).in(x).out(y).scalar_f32(1.0f).submit(&r));
  float v = 0.0f;
  TEST_ORCH_TRY(api->read_value(api->rt, &y, 0, &v, sizeof v));
  if (v != 6.0f)
    return api->fatal(api->rt, "orch_values: read_value did not see the task's result");
  const float twice = 2.0f * v;
  return api->write_value(api->rt, &y, 1, &twice, sizeof twice);
}
