// simpler runtime — the host threads that run the parts of cluster (MIX) tasks (internal).
//
// A cluster task runs its kernel on every core of its clusters at once, and the parts wait
// for each other (cluster_sync.h). Blocks of single-core tasks run on the dispatching
// thread itself (dispatcher.h), but a dispatcher cannot be three cores at once, and on a
// 2-core machine there are not three dispatchers; nor should a dispatcher sit in a long
// cluster task while single-core tasks wait for the idle cores it could hand them. So the
// dispatcher that starts a cluster task hands every part to a helper thread of this crew
// and goes back to dispatching; the last part to return runs the task's completion.
// Helpers are created on first use (a program without cluster tasks starts none), kept
// parked on a condition variable between tasks, and at most one per core of the chip
// ever exists. Waiting parts park (ClusterSync), so helpers beyond the hardware threads
// cost no CPU while they wait.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace simpler::rt {

class ClusterCrew {
 public:
  // At most `max_helpers` threads; helper h reports to the run observer as lane
  // `first_lane + h`.
  ClusterCrew(uint32_t max_helpers, uint32_t first_lane);
  ~ClusterCrew();
  ClusterCrew(const ClusterCrew&) = delete;
  ClusterCrew& operator=(const ClusterCrew&) = delete;

  // Starts part(i, lane of its helper) for i in 0..parts-1, each on its own helper, all
  // handed out before any starts, and returns; the helper whose part returns last then
  // runs done(its lane). False (nothing started) if helper threads could not be created.
  using Part = std::function<void(uint32_t part, uint32_t lane)>;
  using Done = std::function<void(uint32_t lane)>;
  bool launch(uint32_t parts, Part part, Done done);

  // Stops the helpers: joins them, or detaches them when a stuck kernel may never return.
  void stop(bool detach);
  uint32_t helpers() const;  // threads created so far

 private:
  struct Batch;  // one launch: its parts and the count of unfinished ones
  struct Helper {
    std::thread thread;
    Batch* batch = nullptr;  // the batch whose part this helper runs, or null (idle)
    uint32_t part = 0;
    std::condition_variable wake;
  };
  void helper_loop(Helper* self, uint32_t lane);

  const uint32_t max_helpers_;
  const uint32_t first_lane_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Helper>> helpers_;
  std::vector<Helper*> idle_;
  bool stopping_ = false;
};

}  // namespace simpler::rt
