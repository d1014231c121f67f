// The benchmark patterns (patterns.h) run by simpler's execution engine (the chip side of
// the tensormap_and_ringbuffer build) on simulated device 0, with a DEVICE slot buffer so
// no staging is involved: what is timed is Engine::execute of one orchestration.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace simpler::bench {

class SimplerPatternRunner {
 public:
  // Makes device 0 current on the calling thread, loads the pattern orchestration and the
  // empty kernel from the given shared objects, creates an engine and a device buffer of
  // `max_slots` floats. Throws std::runtime_error naming what failed.
  SimplerPatternRunner(const std::string& orchestration_path, const std::string& kernel_path,
                       uint64_t max_slots);
  ~SimplerPatternRunner();
  SimplerPatternRunner(const SimplerPatternRunner&) = delete;
  SimplerPatternRunner& operator=(const SimplerPatternRunner&) = delete;

  // Wall time in ns of one execute() of `tasks` tasks of `pattern` (0 tasks: the fixed
  // cost of a run). `views`: the slots are views of one buffer instead of one buffer
  // each; `k`: dependencies per task of BENCH_DEPSK; `scoped`: every BENCH_SCOPE_BATCH
  // tasks in a scope, so every task takes the queued path (window, inference). Throws
  // std::runtime_error if the run fails.
  double run(int pattern, uint64_t tasks, bool views = false, uint32_t k = 0, bool scoped = false);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace simpler::bench
