// Orchestration of the per-task overhead benchmark: submits `tasks` empty-kernel tasks of
// one pattern (../patterns.h) over slots of the entry's tensor 0, so the runtime infers
// exactly the dependencies the libgomp reference declares.
//   args: tensor 0 = slot buffer (float32, DEVICE); scalar 0 = pattern; scalar 1 = tasks;
//         scalar 2 = layout: 0 = every slot is its own buffer (like libgomp's depend
//         objects: one address each), 1 = every slot is a view of the one entry buffer.
#include "../patterns.h"
#include "simpler/orch/orchestration_api.h"

#include <initializer_list>
#include <utility>

namespace {

ChipTensor slot(const ChipTensor& buffer, uint64_t index, bool views) {
  ChipTensor t = buffer;
  t.ndims = 1;
  t.shapes[0] = 1;
  t.strides[0] = 1;
  if (views) {
    t.start_offset = buffer.start_offset + static_cast<int64_t>(index);
  } else {
    t.buffer.addr =
        buffer.buffer.addr + (static_cast<uint64_t>(buffer.start_offset) + index) * sizeof(float);
    t.buffer.size = sizeof(float);
    t.start_offset = 0;
  }
  return t;
}

// Reuses one task descriptor: the Task builder of orchestration_api.h zero-fills a
// ~3.8 KB descriptor per task, which would add a fixed cost that is not the runtime's.
class Submitter {
 public:
  Submitter(const SimplerOrchApi* api, const ChipTensor& buffer, bool views)
      : api_(api), buffer_(buffer), views_(views) {
    desc_.core_type = SIMPLER_CORE_AIV;
    desc_.block_num = 1;
  }

  int submit(int32_t kernel,
             std::initializer_list<std::pair<SimplerTensorMode, uint64_t>> tensors) {
    desc_.func_id = kernel;
    uint32_t count = 0;
    for (const auto& [mode, index] : tensors) {
      desc_.tensors[count].tensor = slot(buffer_, index, views_);
      desc_.tensors[count].mode = static_cast<uint32_t>(mode);
      ++count;
    }
    desc_.tensor_count = count;
    return api_->submit(api_->rt, &desc_, &result_);
  }

 private:
  const SimplerOrchApi* api_;
  ChipTensor buffer_;
  bool views_;
  SimplerTaskDesc desc_{};
  SimplerTaskResult result_{};
};

int run(Submitter& s, int pattern, uint64_t n) {
  constexpr auto IN = SIMPLER_TENSOR_IN;
  constexpr auto OUT = SIMPLER_TENSOR_OUT;
  constexpr auto INOUT = SIMPLER_TENSOR_INOUT;
  int rc = 0;
  switch (pattern) {
    case BENCH_CHAIN:
      for (uint64_t i = 0; i < n && rc == 0; ++i) rc = s.submit(BENCH_KERNEL_INOUT, {{INOUT, 0}});
      return rc;
    case BENCH_CHAINS8:
      for (uint64_t i = 0; i < n && rc == 0; ++i)
        rc = s.submit(BENCH_KERNEL_INOUT, {{INOUT, i % BENCH_CHAINS}});
      return rc;
    case BENCH_FAN_IN:
      for (uint64_t g = 0; g + BENCH_FAN_IN_WIDTH + 1 <= n && rc == 0;
           g += BENCH_FAN_IN_WIDTH + 1) {
        for (uint64_t j = 0; j < BENCH_FAN_IN_WIDTH && rc == 0; ++j)
          rc = s.submit(BENCH_KERNEL_OUT, {{OUT, g + j}});
        if (rc == 0)
          rc = s.submit(BENCH_KERNEL_IN8_OUT, {{IN, g + 0},
                                               {IN, g + 1},
                                               {IN, g + 2},
                                               {IN, g + 3},
                                               {IN, g + 4},
                                               {IN, g + 5},
                                               {IN, g + 6},
                                               {IN, g + 7},
                                               {OUT, g + 8}});
      }
      return rc;
    case BENCH_DISTINCT:
      for (uint64_t i = 0; i < n && rc == 0; ++i) rc = s.submit(BENCH_KERNEL_OUT, {{OUT, i}});
      return rc;
    case BENCH_DEPS1:
      for (uint64_t o = BENCH_DEPS_BASE; o < n + BENCH_DEPS_BASE && rc == 0; ++o)
        rc = s.submit(BENCH_KERNEL_OUT_IN1, {{OUT, o}, {IN, o - 1}});
      return rc;
    case BENCH_DEPS2:
      for (uint64_t o = BENCH_DEPS_BASE; o < n + BENCH_DEPS_BASE && rc == 0; ++o)
        rc = s.submit(BENCH_KERNEL_OUT_IN2, {{OUT, o}, {IN, o - 1}, {IN, o - 2}});
      return rc;
    case BENCH_DEPS3:
      for (uint64_t o = BENCH_DEPS_BASE; o < n + BENCH_DEPS_BASE && rc == 0; ++o)
        rc = s.submit(BENCH_KERNEL_OUT_IN3, {{OUT, o}, {IN, o - 1}, {IN, o - 2}, {IN, o - 3}});
      return rc;
    default:
      return -1;
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int bench_pattern(const ChipStorageTaskArgs* args,
                                                                    const SimplerOrchApi* api) {
  if (args->tensor_count < 1 || args->scalar_count < 3)
    return api->fatal(api->rt,
                      "bench_pattern: expects 1 tensor (slots) and 3 scalars "
                      "(pattern, tasks, layout)");
  const int pattern = static_cast<int>(args->scalars[0]);
  const uint64_t tasks = args->scalars[1];
  if (pattern < 0 || pattern >= BENCH_PATTERN_COUNT)
    return api->fatal(api->rt, "bench_pattern: unknown pattern id");
  const ChipTensor& buffer = args->tensors[0];
  if (static_cast<uint64_t>(buffer.shapes[0]) < bench_pattern_slots(pattern, tasks))
    return api->fatal(api->rt, "bench_pattern: slot buffer too small for the task count");
  Submitter submitter(api, buffer, args->scalars[2] != 0);
  return run(submitter, pattern, tasks);
}
