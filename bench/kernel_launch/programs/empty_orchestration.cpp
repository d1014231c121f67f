// The empty chip program of the launch benchmark: an orchestration with 4 tensor
// arguments that submits nothing, so a launch costs only what the runtime does around it.
#include "simpler/orch/orchestration_api.h"

extern "C" __attribute__((visibility("default"))) int bench_empty(const ChipStorageTaskArgs* args,
                                                                  const SimplerOrchApi* api) {
  (void)args;
  (void)api;
  return 0;
}
