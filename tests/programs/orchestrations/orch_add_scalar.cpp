// orch_add_scalar [IN x, OUT y, SCALAR s (f32 bits)]: one AIV task y = x + s (kernel mode).
// Children: 0 add_scalar.
#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_add_scalar(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult r;
  return Task(api, 0, SIMPLER_CORE_AIV)
      .in(args->tensors[0])
      .out(args->tensors[1])
      .scalar_bits(args->scalars[0])
      .submit(&r);
}
