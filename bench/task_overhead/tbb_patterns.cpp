#include "tbb_patterns.h"

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <chrono>
#include <deque>
#include <unordered_map>
#include <vector>

#include "pattern_tasks.h"

namespace simpler::bench {
namespace {

using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;
using Clock = std::chrono::steady_clock;

inline void touch(float* p) { asm volatile("" : : "r"(p) : "memory"); }

double ns_since(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// What the naive peer tracks per address.
struct SlotState {
  Node* writer = nullptr;
  std::vector<Node*> readers;  // since the last write
};

}  // namespace

struct TbbRunner::State {
  explicit State(int threads) : arena(threads) {}
  tbb::task_arena arena;
};

TbbRunner::TbbRunner(int threads) : state_(std::make_unique<State>(threads)) {}
TbbRunner::~TbbRunner() = default;

double TbbRunner::flow_graph(int pattern, uint64_t tasks, float* slots) {
  double ns = 0;
  state_->arena.execute([&] {
    const auto start = Clock::now();
    {
      tbb::flow::graph g;
      std::deque<Node> nodes;  // stable addresses
      std::unordered_map<float*, SlotState> last;
      std::vector<Node*> roots;
      std::vector<Node*> preds;
      for_each_pattern_task(pattern, tasks, 0, [&](const PatternTask& t) {
        float* out = slots + t.access[t.count - 1].slot;
        Node& node = nodes.emplace_back(g, [out](const tbb::flow::continue_msg&) { touch(out); });
        preds.clear();
        auto add = [&](Node* p) {
          if (p == nullptr) return;
          for (Node* q : preds)
            if (q == p) return;
          preds.push_back(p);
        };
        for (uint32_t i = 0; i < t.count; ++i) {
          SlotState& s = last[slots + t.access[i].slot];
          add(s.writer);  // RAW / WAW
          if (t.access[i].mode != SlotMode::In) {
            for (Node* r : s.readers) add(r);  // WAR
            s.writer = &node;
            s.readers.clear();
          } else {
            s.readers.push_back(&node);
          }
        }
        for (Node* p : preds) tbb::flow::make_edge(*p, node);
        if (preds.empty()) roots.push_back(&node);
        return 0;
      });
      for (Node* r : roots) r->try_put(tbb::flow::continue_msg());
      g.wait_for_all();
    }
    ns = ns_since(start);
  });
  return ns;
}

double TbbRunner::task_group(uint64_t tasks, float* slots) {
  double ns = 0;
  state_->arena.execute([&] {
    const auto start = Clock::now();
    tbb::task_group group;
    for (uint64_t i = 0; i < tasks; ++i) group.run([p = slots + i] { touch(p); });
    group.wait();
    ns = ns_since(start);
  });
  return ns;
}

}  // namespace simpler::bench
