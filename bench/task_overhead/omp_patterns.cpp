// Task bodies are empty on purpose: the benchmark measures what the runtime spends per
// task (creation, dependence matching, scheduling, release), not work. The asm barrier
// keeps the compiler from proving the body empty and dropping the task's data.
#include "omp_patterns.h"

#include <omp.h>

#include <chrono>

#include "patterns.h"

namespace simpler::bench {
namespace {

inline void touch(float* p) { asm volatile("" : : "r"(p) : "memory"); }

void submit_pattern(int pattern, uint64_t tasks, float* a) {
  const uint64_t n = tasks;
  switch (pattern) {
    case BENCH_CHAIN:
      for (uint64_t i = 0; i < n; ++i) {
#pragma omp task depend(inout : a[0]) firstprivate(a)
        touch(a);
      }
      break;
    case BENCH_CHAINS8:
      for (uint64_t i = 0; i < n; ++i) {
        float* s = a + i % BENCH_CHAINS;
#pragma omp task depend(inout : s[0]) firstprivate(s)
        touch(s);
      }
      break;
    case BENCH_FAN_IN:
      for (uint64_t g = 0; g + BENCH_FAN_IN_WIDTH + 1 <= n; g += BENCH_FAN_IN_WIDTH + 1) {
        float* s = a + g;
        for (int j = 0; j < BENCH_FAN_IN_WIDTH; ++j) {
          float* p = s + j;
#pragma omp task depend(out : p[0]) firstprivate(p)
          touch(p);
        }
        static_assert(BENCH_FAN_IN_WIDTH == 8, "the consumer's depend list names 8 producers");
#pragma omp task depend(in                                                               \
                        : s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]) depend(out     \
                                                                                 : s[8]) \
    firstprivate(s)
        touch(s);
      }
      break;
    case BENCH_DISTINCT:
      for (uint64_t i = 0; i < n; ++i) {
        float* s = a + i;
#pragma omp task depend(out : s[0]) firstprivate(s)
        touch(s);
      }
      break;
    case BENCH_DEPS1:
      for (uint64_t i = 0; i < n; ++i) {
        float* s = a + i + BENCH_DEPS_BASE;
#pragma omp task depend(out : s[0]) depend(in : s[-1]) firstprivate(s)
        touch(s);
      }
      break;
    case BENCH_DEPS2:
      for (uint64_t i = 0; i < n; ++i) {
        float* s = a + i + BENCH_DEPS_BASE;
#pragma omp task depend(out : s[0]) depend(in : s[-1], s[-2]) firstprivate(s)
        touch(s);
      }
      break;
    case BENCH_DEPS3:
      for (uint64_t i = 0; i < n; ++i) {
        float* s = a + i + BENCH_DEPS_BASE;
#pragma omp task depend(out : s[0]) depend(in : s[-1], s[-2], s[-3]) firstprivate(s)
        touch(s);
      }
      break;
    default:
      break;
  }
}

}  // namespace

OmpTimes run_omp_pattern(int pattern, uint64_t tasks, float* slots, int threads, int reps) {
  using Clock = std::chrono::steady_clock;
  auto ns = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::nano>(b - a).count();
  };
  OmpTimes times;
#pragma omp parallel num_threads(threads)
#pragma omp single
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    submit_pattern(pattern, tasks, slots);
#pragma omp taskwait
    const auto t1 = Clock::now();
#pragma omp taskwait
    const auto t2 = Clock::now();
    times.full.push_back(ns(t0, t1));
    times.empty.push_back(ns(t1, t2));
  }
  return times;
}

}  // namespace simpler::bench
