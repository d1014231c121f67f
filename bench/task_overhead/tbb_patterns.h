// The benchmark patterns on oneTBB, the peers a user would pick instead of simpler:
//  - a tbb::flow::graph of continue_nodes whose edges are inferred from the same slot
//    accesses (pattern_tasks.h) with a plain std::unordered_map (last writer + readers
//    since), so it pays for inference too. A continue_node counts its predecessors when
//    the edge is made, so the graph is built first and then started at its roots; the
//    time covers inference, building, running and tearing the graph down;
//  - tbb::task_group, the floor for independent tasks (no dependency tracking at all).
// Both run in a task_arena of `threads` threads with empty bodies.
#pragma once

#include <cstdint>
#include <memory>

namespace simpler::bench {

class TbbRunner {
 public:
  explicit TbbRunner(int threads);
  ~TbbRunner();
  TbbRunner(const TbbRunner&) = delete;
  TbbRunner& operator=(const TbbRunner&) = delete;

  // Wall time in ns of one round of `tasks` tasks of `pattern` over `slots` (0 tasks: the
  // fixed cost of a round).
  double flow_graph(int pattern, uint64_t tasks, float* slots);
  // Wall time in ns of `tasks` independent empty tasks run and waited for.
  double task_group(uint64_t tasks, float* slots);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace simpler::bench
