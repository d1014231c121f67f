// The serial floor of the per-task overhead benchmark: the same patterns executed inline
// on one thread through simpler's own dependency inference (rt::TensorMap), with no
// hand-off, no ready queue and no completion protocol: what inference plus a kernel call
// cost, the least any dispatch design can reach.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/tensor_map.h"

namespace simpler::bench {

class SerialFloor {
 public:
  explicit SerialFloor(uint64_t window);  // live tasks kept in the map, as the engine's window

  // Wall time in ns of `tasks` tasks of `pattern` (views / k as SimplerPatternRunner::run).
  double run(int pattern, uint64_t tasks, bool views = false, uint32_t k = 0);

 private:
  uint64_t window_;
  rt::TensorMap map_;
  std::vector<uint64_t> deps_;
  std::unique_ptr<float[]> slots_;
  uint64_t slot_count_ = 0;
  uint64_t next_id_ = 1;
};

}  // namespace simpler::bench
