// orch_many_args [INOUT x0..x5 (float32), SCALAR s0..s9 (i64)]: x_i[0] = sum(s) + i for
// every tensor, by write_value. More tensors and scalars than a kernel-mode launch record
// holds inline, so it exercises the record's spill path. Children: 0 add_scalar (unused).
#include "orch_util.h"

extern "C" int orch_many_args(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  if (args->tensor_count != 6 || args->scalar_count != 10) {
    return api->fatal(api->rt, "orch_many_args: expects 6 tensors and 10 scalars");
  }
  int64_t sum = 0;
  for (uint32_t i = 0; i < args->scalar_count; ++i) sum += static_cast<int64_t>(args->scalars[i]);
  for (uint32_t i = 0; i < args->tensor_count; ++i) {
    const float value = static_cast<float>(sum + i);
    TEST_ORCH_TRY(api->write_value(api->rt, &args->tensors[i], 0, &value, sizeof value));
  }
  return 0;
}
