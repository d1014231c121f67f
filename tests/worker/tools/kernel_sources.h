// Kernel and orchestration sources compiled by the KernelCompiler tests.
#pragma once

namespace simpler::test {

// Writes a marker of the core type it was compiled for (AIC 100, AIV 200, else -1) and
// scalar + block index into its int32 tensor argument.
inline constexpr const char* kProbeKernel = R"(
#include "simpler/kernel/kernel_abi.h"
extern "C" void kernel_entry(int64_t* args) {
  int32_t* out = (int32_t*)simpler_tensor_data(simpler_tensor_arg(args, 0), sizeof(int32_t));
#if defined(SIMPLER_KERNEL_AIC)
  out[0] = 100;
#elif defined(SIMPLER_KERNEL_AIV)
  out[0] = 200;
#else
  out[0] = -1;
#endif
  out[1] = (int32_t)simpler_scalar_i64(args, 1) + (int32_t)simpler_block_idx(args);
}
)";

inline constexpr const char* kKernelWithoutEntry = R"(
#include "simpler/kernel/kernel_abi.h"
extern "C" void kernel_main(int64_t* args) { (void)args; }
)";

inline constexpr const char* kKernelWithSyntaxError = R"(
extern "C" void kernel_entry(int64_t* args) { this is not C++; }
)";

inline constexpr const char* kOrchestration = R"(
#include "simpler/orch/orchestration_api.h"
extern "C" int build_graph(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  SimplerTaskResult result;
  return simpler::orch::Task(api, 0, SIMPLER_CORE_AIV).in(args->tensors[0]).submit(&result);
}
)";

}  // namespace simpler::test
