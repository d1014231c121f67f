// orch_bench [INOUT scratch (float32, >= 16 * 64 elements), SCALAR pattern, SCALAR tasks,
// SCALAR param]: `tasks` empty-kernel tasks over 1-element tensors inside scratch, spaced
// 16 elements (64 bytes) apart. Each is described as its own 4-byte buffer (like the
// addresses of `#pragma omp task depend`), so the tensor map keys them separately;
// distinct ones never overlap. Patterns:
//   0 chain          every task INOUT on view 0                       (1 dependency each)
//   1 independent    task i writes view i % slots                     (distinct outputs;
//                    truly independent when slots = numel/16 exceeds the task window,
//                    else task i also waits for task i - slots: WAW)
//   2 chains         `param` (default 8) independent INOUT chains, round robin
//   3 fan-in         groups of `param` (1..3) producers writing distinct views, then one
//                    consumer reading all of them and writing its own view
//   4 deps           task i reads the views of the `param` (0..3) previous tasks and
//                    writes view i % slots
// Children (all the `empty` kernel): 0 [OUT], 1 [IN, OUT], 2 [IN, IN, OUT],
// 3 [IN, IN, IN, OUT], 4 [INOUT].
#include "orch_util.h"

using simpler::orch::Task;
using test_orch::element_view;

extern "C" int orch_bench(const ChipStorageTaskArgs* args, const SimplerOrchApi* api) {
  const ChipTensor& scratch = args->tensors[0];
  const int64_t pattern = static_cast<int64_t>(args->scalars[0]);
  const int64_t tasks = static_cast<int64_t>(args->scalars[1]);
  int64_t param = static_cast<int64_t>(args->scalars[2]);
  const int64_t slots = scratch.shapes[0] / 16;
  if (slots < 64) return api->fatal(api->rt, "orch_bench: scratch needs >= 1024 float32 elements");
  auto view = [&](int64_t i) {
    ChipTensor t = element_view(scratch, 16 * (i % slots));
    t.buffer.addr += static_cast<uint64_t>(t.start_offset) * sizeof(float);
    t.buffer.size = sizeof(float);
    t.start_offset = 0;
    return t;
  };
  SimplerTaskResult r;
  switch (pattern) {
    case 0:
      for (int64_t i = 0; i < tasks; ++i)
        TEST_ORCH_TRY(Task(api, 4, SIMPLER_CORE_AIV).inout(view(0)).submit(&r));
      return 0;
    case 1:
      for (int64_t i = 0; i < tasks; ++i)
        TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV).out(view(i)).submit(&r));
      return 0;
    case 2:
      if (param <= 0) param = 8;
      for (int64_t i = 0; i < tasks; ++i)
        TEST_ORCH_TRY(Task(api, 4, SIMPLER_CORE_AIV).inout(view(i % param)).submit(&r));
      return 0;
    case 3: {
      if (param < 1 || param > 3)
        return api->fatal(api->rt, "orch_bench: fan-in param must be 1..3");
      int64_t next = 0;
      for (int64_t done = 0; done < tasks; done += param + 1) {
        Task consumer(api, static_cast<int32_t>(param), SIMPLER_CORE_AIV);
        for (int64_t p = 0; p < param; ++p) {
          TEST_ORCH_TRY(Task(api, 0, SIMPLER_CORE_AIV).out(view(next)).submit(&r));
          consumer.in(view(next++));
        }
        TEST_ORCH_TRY(consumer.out(view(next++)).submit(&r));
      }
      return 0;
    }
    case 4: {
      if (param < 0 || param > 3) return api->fatal(api->rt, "orch_bench: deps param must be 0..3");
      for (int64_t i = 0; i < tasks; ++i) {
        Task t(api, static_cast<int32_t>(param), SIMPLER_CORE_AIV);
        for (int64_t d = 1; d <= param; ++d) t.in(view(i + slots - d));
        TEST_ORCH_TRY(t.out(view(i)).submit(&r));
      }
      return 0;
    }
    default:
      return api->fatal(api->rt, "orch_bench: unknown pattern");
  }
}
