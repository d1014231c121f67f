// simpler runtime — the host threads that run the parts of cluster (MIX) tasks (internal).
//
// A cluster task runs its kernel on every core of its clusters at once, and the parts wait
// for each other (cluster_sync.h). Blocks of single-core tasks run on the dispatching
// thread itself (dispatcher.h), but a dispatcher cannot be three cores at once, and on a
// 2-core machine there are not three dispatchers. So the parts go to helper threads of
// this crew; a scheduler that starts a cluster task may run its first part (the AIC part
// of block 0) itself: it starts at once, without a wake-up, and one thread fewer is
// runnable. The orchestrating thread, while it submits, hands every part over and goes
// back to submitting; while it waits for completions it runs parts as a scheduler does.
// A one-cluster task started when no helper is awake to take its parts runs as fibers
// (cluster_fibers.h) of the starting thread, or of one helper.
// The thread whose part returns last runs the task's completion.
// Helpers are created on first use (a program without cluster tasks starts none), at most
// one per core of the chip. Between tasks an idle helper whose last idle gap was short
// spins briefly (pause, then yield; kCrewSpinBudget) for its next part, then parks on a
// condition variable: a wake-up costs tens of microseconds on a small VM. Waiting parts
// spin briefly or not at all and then park too (ClusterSync), so helpers beyond the
// hardware threads cost little CPU.
#pragma once

#include <atomic>
#include <chrono>
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

  // Starts part(i, lane of its thread) for i in 0..parts-1, each on its own thread, all
  // handed out before any starts; the thread whose part returns last then runs done(its
  // lane). With `here` the caller runs part 0 itself as lane *here (after handing out the
  // others) before launch returns, else every part goes to a helper and launch returns at
  // once. False (nothing started) if helper threads could not be created.
  using Part = std::function<void(uint32_t part, uint32_t lane)>;
  using Done = std::function<void(uint32_t lane)>;
  bool launch(uint32_t parts, Part part, Done done, const uint32_t* here = nullptr);

  // Whether at least `n` helpers wait for a part without being parked (spinning: they
  // take one without a wake-up).
  bool awake_idle(uint32_t n) const;
  // The observer lane of a part run cooperatively (cluster_fibers.h) on core `index` of
  // the chip's cluster numbering (cluster * kClusterParts + part): one lane per core, as
  // a core runs one part at a time.
  uint32_t core_lane(uint32_t index) const { return first_lane_ + max_helpers_ + index; }

  // Stops the helpers: joins them, or detaches them when a stuck kernel may never return.
  void stop(bool detach);
  uint32_t helpers() const;  // threads created so far

 private:
  struct Batch;  // one launch: its parts and the count of unfinished ones
  struct Helper {
    std::thread thread;
    // The batch whose part this helper runs, or null (idle): set under the mutex, read by
    // the spinning helper without it (part is written before it).
    std::atomic<Batch*> batch{nullptr};
    uint32_t part = 0;
    bool parked = false;      // waits on `wake` (guarded by the mutex)
    bool short_gaps = false;  // its last idle gap was short: spin first (its own thread)
    std::condition_variable wake;
  };
  void helper_loop(Helper* self, uint32_t lane);
  Batch* next_batch(Helper* self);  // null: stopping
  // Counts a returned part; the thread of the last one runs the batch's done and frees it.
  void part_returned(Batch* batch, uint32_t lane);

  const uint32_t max_helpers_;
  const uint32_t first_lane_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Helper>> helpers_;
  std::vector<Helper*> idle_;
  std::atomic<bool> stopping_{false};
};

// How long an idle helper spins for its next part before it parks, and the longest idle
// gap after which it still spins in the next one.
inline constexpr std::chrono::microseconds kCrewSpinBudget{30};
inline constexpr int64_t kCrewSpinWorthNs = 100'000;

}  // namespace simpler::rt
