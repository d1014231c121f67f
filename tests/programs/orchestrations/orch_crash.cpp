// orch_crash [INOUT x, SCALAR how, SCALAR who]: who 0 = a task x += 1, then a kernel that
// misbehaves as `how` says (kernels/crash.cpp), then a dependent x += 1; who 1 = the
// orchestration itself misbehaves (how 0 NULL dereference, 1 abort(), 3 never returns
// without an API call). Children: 0 crash.
#include <chrono>
#include <cstdlib>
#include <thread>

#include "orch_util.h"

using simpler::orch::Task;

namespace {
int* volatile g_null = nullptr;
// The fault is the point: UBSan (in the ASan build) must not stop the process before the
// SIGSEGV reaches the engine's fault guard under test.
__attribute__((no_sanitize("undefined"))) void store_through_null() { *g_null = 1; }
}  // namespace

extern "C" int orch_crash(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const int64_t how = static_cast<int64_t>(args->scalars[0]);
  if (args->scalars[1] == 1) {
    if (how == 0) store_through_null();
    if (how == 1) std::abort();
    if (how == 3) {
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    return 0;
  }
  SimplerTaskResult r;
  TEST_ORCH_TRY(
      Task(api, 0, SIMPLER_CORE_AIV).inout(args->tensors[0]).scalar(int64_t{9}).submit(&r));
  TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV).inout(args->tensors[0]).scalar(how).submit(&r));
  return Task(api, 0, SIMPLER_CORE_AIV).inout(args->tensors[0]).scalar(int64_t{9}).submit(&r);
}
