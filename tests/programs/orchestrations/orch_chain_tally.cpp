// orch_chain_tally [OUT y (int32, >= 48), INOUT c (int32, >= 2), SCALAR n]: an SPMD task
// of 48 AIV blocks on y (its blocks wake a scheduler), read_value(y) (waits for it), then a
// chain of n thread_tally tasks on c: c[1] counts the chain's tasks that ran on a thread
// other than the orchestrating one. Children: 0 spmd_block_id [OUT], 1 thread_tally.
#include <sys/syscall.h>
#include <unistd.h>

#include "orch_util.h"

using simpler::orch::Task;

extern "C" int orch_chain_tally(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const auto n = static_cast<int64_t>(args->scalars[0]);
  const auto tid = static_cast<int64_t>(syscall(SYS_gettid));  // the orchestrating thread
  SimplerTaskResult r;
  TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV, 48).out(args->tensors[0]).submit(&r));
  // Until the SPMD task is done: a scheduler it woke is left spinning for work.
  int32_t block0 = 0;
  TEST_ORCH_TRY(api->read_value(api->rt, &args->tensors[0], 0, &block0, sizeof block0));
  for (int64_t i = 0; i < n; ++i)
    TEST_ORCH_TRY(Task(api, 1, SIMPLER_CORE_AIV).inout(args->tensors[1]).scalar(tid).submit(&r));
  return 0;
}
