// The tasks of each benchmark pattern (patterns.h) as a list of slot accesses, written
// once for every runtime that infers dependencies from them: simpler's orchestration, the
// oneTBB flow-graph peer and the serial floor. (libgomp's depend clauses must be spelled
// out in pragmas: omp_patterns.cpp mirrors this file.)
#pragma once

#include <cstdint>

#include "patterns.h"
#include "simpler/abi/chip_types.h"

namespace simpler::bench {

// Slot `index` (one float32) of `buffer`: its own buffer (the address of that float, like
// a libgomp depend object), or with `views` a 1-element view of `buffer` itself.
inline ChipTensor slot_tensor(const ChipTensor& buffer, uint64_t index, bool views) {
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

enum class SlotMode : uint8_t { In, Out, InOut };
struct SlotAccess {
  SlotMode mode;
  uint64_t slot;
};
struct PatternTask {
  int32_t kernel;  // BENCH_KERNEL_*
  uint32_t count;
  SlotAccess access[BENCH_MAX_DEPS + 1];
};

// Calls f(const PatternTask&) for each of the `n` tasks of `pattern` in submission order
// (`k`: the dependencies per task of BENCH_DEPSK); stops at the first non-zero return.
template <class F>
int for_each_pattern_task(int pattern, uint64_t n, uint32_t k, F&& f) {
  PatternTask t{};
  int rc = 0;
  auto one = [&](int32_t kernel, SlotMode mode, uint64_t slot) {
    t.kernel = kernel;
    t.count = 1;
    t.access[0] = SlotAccess{mode, slot};
  };
  switch (pattern) {
    case BENCH_CHAIN:
      for (uint64_t i = 0; i < n && rc == 0; ++i) {
        one(BENCH_KERNEL_INOUT, SlotMode::InOut, 0);
        rc = f(t);
      }
      return rc;
    case BENCH_CHAINS8:
      for (uint64_t i = 0; i < n && rc == 0; ++i) {
        one(BENCH_KERNEL_INOUT, SlotMode::InOut, i % BENCH_CHAINS);
        rc = f(t);
      }
      return rc;
    case BENCH_FAN_IN:
      for (uint64_t g = 0; g + BENCH_FAN_IN_WIDTH + 1 <= n && rc == 0;
           g += BENCH_FAN_IN_WIDTH + 1) {
        for (uint64_t j = 0; j < BENCH_FAN_IN_WIDTH && rc == 0; ++j) {
          one(BENCH_KERNEL_OUT, SlotMode::Out, g + j);
          rc = f(t);
        }
        if (rc != 0) break;
        t.kernel = BENCH_KERNEL_IN8_OUT;
        t.count = BENCH_FAN_IN_WIDTH + 1;
        for (uint32_t j = 0; j < BENCH_FAN_IN_WIDTH; ++j)
          t.access[j] = SlotAccess{SlotMode::In, g + j};
        t.access[BENCH_FAN_IN_WIDTH] = SlotAccess{SlotMode::Out, g + BENCH_FAN_IN_WIDTH};
        rc = f(t);
      }
      return rc;
    case BENCH_DISTINCT:
      for (uint64_t i = 0; i < n && rc == 0; ++i) {
        one(BENCH_KERNEL_OUT, SlotMode::Out, i);
        rc = f(t);
      }
      return rc;
    case BENCH_DEPS1:
    case BENCH_DEPS2:
    case BENCH_DEPS3:
    case BENCH_DEPSK: {
      const uint32_t deps =
          pattern == BENCH_DEPSK ? k : static_cast<uint32_t>(bench_pattern_deps(pattern));
      const uint64_t base = pattern == BENCH_DEPSK ? BENCH_MAX_DEPS : BENCH_DEPS_BASE;
      const int32_t kernel = pattern == BENCH_DEPSK
                                 ? BENCH_KERNEL_OUT_INK + static_cast<int32_t>(deps)
                                 : BENCH_KERNEL_OUT_IN1 + static_cast<int32_t>(deps) - 1;
      for (uint64_t o = base; o < n + base && rc == 0; ++o) {
        t.kernel = kernel;
        t.count = 1 + deps;
        t.access[0] = SlotAccess{SlotMode::Out, o};
        for (uint32_t d = 1; d <= deps; ++d) t.access[d] = SlotAccess{SlotMode::In, o - d};
        rc = f(t);
      }
      return rc;
    }
    default:
      return -1;
  }
}

}  // namespace simpler::bench
