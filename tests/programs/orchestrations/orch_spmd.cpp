// orch_spmd [OUT y (int32), SCALAR block_num, SCALAR core_type]: one SPMD task whose
// block b writes b into slice b of y. Children: 0 spmd_block_id.
#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_spmd(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult r;
  return Task(api, 0, static_cast<SimplerCoreType>(args->scalars[1]),
              static_cast<uint32_t>(args->scalars[0]))
      .out(args->tensors[0])
      .submit(&r);
}
