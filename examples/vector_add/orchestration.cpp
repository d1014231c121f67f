// vector_add: one SPMD task, 4 blocks wide, c = a + b.
#include "simpler/orch/orchestration_api.h"

namespace {
constexpr int32_t kAddKernel = 0;  // func id of kernels/add.cpp in main.py
constexpr uint32_t kBlocks = 4;
}  // namespace

extern "C" int vector_add(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  if (args->tensor_count != 3) return api->fatal(api->rt, "vector_add: expected tensors a, b, c");
  SimplerTaskResult result;
  return simpler::orch::Task(api, kAddKernel, SIMPLER_CORE_AIV, kBlocks)
      .in(args->tensors[0])
      .in(args->tensors[1])
      .out(args->tensors[2])
      .submit(&result);
}
