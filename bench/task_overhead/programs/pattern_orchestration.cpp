// Orchestration of the per-task overhead benchmark: submits `tasks` empty-kernel tasks of
// one pattern (../patterns.h) over slots of the entry's tensor 0, so the runtime infers
// exactly the dependencies the libgomp reference declares.
//   args: tensor 0 = slot buffer (float32, DEVICE); scalar 0 = pattern; scalar 1 = tasks;
//         scalar 2 = layout: 0 = every slot is its own buffer (like libgomp's depend
//         objects: one address each), 1 = every slot is a view of the one entry buffer;
//         scalar 3 = dependencies per task of BENCH_DEPSK (0..8);
//         scalar 4 (optional) = 1: scoped, every BENCH_SCOPE_BATCH tasks in a scope of
//         their own (../patterns.h: then no task takes the immediate path).
#include "../pattern_tasks.h"
#include "simpler/orch/orchestration_api.h"

namespace {

// Reuses one task descriptor: the Task builder of orchestration_api.h zero-fills a
// ~3.8 KB descriptor per task, which would add a fixed cost that is not the runtime's.
class Submitter {
 public:
  Submitter(const SimplerOrchApi* api, const ChipTensor& buffer, bool views)
      : api_(api), buffer_(buffer), views_(views) {
    desc_.core_type = SIMPLER_CORE_AIV;
    desc_.block_num = 1;
  }

  int submit(const simpler::bench::PatternTask& task) {
    using simpler::bench::SlotMode;
    desc_.func_id = task.kernel;
    for (uint32_t i = 0; i < task.count; ++i) {
      const simpler::bench::SlotAccess& a = task.access[i];
      desc_.tensors[i].tensor = simpler::bench::slot_tensor(buffer_, a.slot, views_);
      desc_.tensors[i].mode = a.mode == SlotMode::In    ? SIMPLER_TENSOR_IN
                              : a.mode == SlotMode::Out ? SIMPLER_TENSOR_OUT
                                                        : SIMPLER_TENSOR_INOUT;
    }
    desc_.tensor_count = task.count;
    return api_->submit(api_->rt, &desc_, &result_);
  }

 private:
  const SimplerOrchApi* api_;
  ChipTensor buffer_;
  bool views_;
  SimplerTaskDesc desc_{};
  SimplerTaskResult result_{};
};

// The scoped variant: a scope before every BENCH_SCOPE_BATCH-th task, closed after the
// batch's last. A separate loop, so the plain runs' loop stays as cheap as it was.
class ScopedSubmitter {
 public:
  ScopedSubmitter(const SimplerOrchApi* api, const ChipTensor& buffer, bool views)
      : api_(api), submitter_(api, buffer, views) {}

  int submit(const simpler::bench::PatternTask& task) {
    if (submitted_ % BENCH_SCOPE_BATCH == 0) {
      if (int rc = api_->scope_begin(api_->rt)) return rc;
      open_ = true;
    }
    const int rc = submitter_.submit(task);
    if (rc == 0 && ++submitted_ % BENCH_SCOPE_BATCH == 0) return close();
    return rc;
  }
  // Closes the last (partial) scope.
  int close() {
    if (!open_) return 0;
    open_ = false;
    return api_->scope_end(api_->rt);
  }

 private:
  const SimplerOrchApi* api_;
  Submitter submitter_;
  bool open_ = false;
  uint64_t submitted_ = 0;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) int bench_pattern(const ChipStorageTaskArgs* args,
                                                                    const SimplerOrchApi* api) {
  if (args->tensor_count < 1 || args->scalar_count < 4)
    return api->fatal(api->rt,
                      "bench_pattern: expects 1 tensor (slots) and 4 scalars "
                      "(pattern, tasks, layout, deps per task of BENCH_DEPSK)");
  const int pattern = static_cast<int>(args->scalars[0]);
  const uint64_t tasks = args->scalars[1];
  const uint64_t k = args->scalars[3];
  if (pattern < 0 || pattern >= BENCH_PATTERN_COUNT || k > BENCH_MAX_DEPS)
    return api->fatal(api->rt, "bench_pattern: unknown pattern id or deps per task above 8");
  const ChipTensor& buffer = args->tensors[0];
  if (static_cast<uint64_t>(buffer.shapes[0]) < bench_pattern_slots(pattern, tasks))
    return api->fatal(api->rt, "bench_pattern: slot buffer too small for the task count");
  const bool views = args->scalars[2] != 0;
  if (args->scalar_count > 4 && args->scalars[4] != 0) {
    ScopedSubmitter scoped(api, buffer, views);
    const int rc = simpler::bench::for_each_pattern_task(
        pattern, tasks, static_cast<uint32_t>(k),
        [&](const simpler::bench::PatternTask& t) { return scoped.submit(t); });
    const int closed = scoped.close();  // the run fails anyway after a failed submit
    return rc != 0 ? rc : closed;
  }
  Submitter submitter(api, buffer, views);
  return simpler::bench::for_each_pattern_task(
      pattern, tasks, static_cast<uint32_t>(k),
      [&](const simpler::bench::PatternTask& t) { return submitter.submit(t); });
}
