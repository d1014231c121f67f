// orch_vector_add [IN a, IN b, OUT c]: one AIV task c = a + b.
// Children: 0 vector_add.
#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_vector_add(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult r;
  return Task(api, 0, SIMPLER_CORE_AIV)
      .in(args->tensors[0])
      .in(args->tensors[1])
      .out(args->tensors[2])
      .submit(&r);
}
