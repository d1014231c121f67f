// kernel_mode: y = x + s as one SPMD task, 4 blocks wide. x and y are the caller's
// DEVICE tensors (the framework allocated them); s is the entry's float32 scalar.
#include "simpler/orch/orchestration_api.h"

namespace {
constexpr int32_t kAddScalar = 0;  // func id of kernels/add_scalar.cpp in main.py
constexpr uint32_t kBlocks = 4;
}  // namespace

extern "C" int add_scalar_orchestration(const ChipStorageTaskArgs* args,
                                        const SimplerOrchApi* api) {
  if (args->tensor_count != 2 || args->scalar_count != 1)
    return api->fatal(api->rt, "add_scalar: expected tensors x, y and scalar s");
  SimplerTaskResult result;
  return simpler::orch::Task(api, kAddScalar, SIMPLER_CORE_AIV, kBlocks)
      .in(args->tensors[0])
      .out(args->tensors[1])
      .scalar_bits(args->scalars[0])
      .submit(&result);
}
