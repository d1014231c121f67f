// simpler runtime — the flags and barrier through which the parts of one cluster of a
// cluster (MIX) task hand tiles to each other (internal).
//
// The parts run as host threads (cluster_crew.h), possibly more of them than hardware
// threads, or as fibers of one thread (cluster_fibers.h: a wait then yields to the other
// parts instead). A waiting part spins briefly (pause, then yield: backoff.h) and then parks on a
// condition variable: a hand-off between parts is often a few microseconds away, and a
// condition-variable wake-up costs tens of microseconds on a small VM; the spin is
// bounded (kClusterSpinBudget), and only a part whose last wait was short spins. A wait that can
// never end is detected exactly, not by a timeout: flags and the barrier are local to the
// cluster, so when every part that has not returned waits for something no part can
// give any more (a flag at 0, a barrier that a returned part will never reach), the
// cluster is deadlocked. That latches SIMPLER_CHIP_ERR_KERNEL_FAULT with a message naming
// each part's wait, and every wait of the cluster returns that status from then on. A part
// that computes forever is the no-progress watchdog's case (watchdog.h); a failed run
// (any error) also releases the waiters, within kFailPollInterval.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "simpler/kernel/kernel_abi.h"

namespace simpler::rt {

struct ChipState;
struct TaskSlot;

inline constexpr uint32_t kClusterParts = SIMPLER_CLUSTER_AIC_CORES + SIMPLER_CLUSTER_AIV_CORES;

class ClusterSync {
 public:
  // Part 0 is the AIC part, parts 1.. the AIV parts. Called before any part starts.
  // `cooperative`: every part runs as a fiber of one thread (cluster_fibers.h), and a wait
  // that cannot go on yields to the other parts instead of spinning or parking.
  void start(ChipState* chip, const TaskSlot* task, uint32_t cluster_id, bool cooperative = false);
  // Cooperative: whether `part`, suspended in a wait, may go on (its wait is over, or the
  // cluster or run broke); a part that did not start yet may.
  bool may_resume(uint32_t part);

  int barrier(uint32_t part);
  int set_flag(uint32_t part, uint32_t flag);
  int wait_flag(uint32_t part, uint32_t flag);
  // The part's kernel returned (or faulted): it will set no flag and reach no barrier.
  void part_exit(uint32_t part);

  // The operations table a part's kernel sees (`ops.cluster` names the part).
  SimplerClusterOps ops_for(uint32_t part, void* buffer);

 private:
  enum class Wait : uint8_t { kRunning, kFlag, kBarrier, kExited };
  struct PartState {
    Wait wait = Wait::kRunning;
    uint32_t flag = 0;        // kFlag: the flag waited for
    uint64_t generation = 0;  // kBarrier: the barrier generation waited out
  };
  // A part's handle: what SimplerClusterOps::cluster points to.
  struct PartHandle {
    ClusterSync* sync;
    uint32_t part;
  };

  bool satisfied(const PartState& p) const;
  // True (and the error latched) when no waiting part can ever be released.
  bool deadlocked();
  // Parks the part until `ready()` or the cluster breaks; 0 or a negative status.
  template <typename Ready>
  int park(std::unique_lock<std::mutex>& lock, uint32_t part, Ready ready);
  int broken_status() const;
  void changed();  // under mutex_: a waiter may be released (wakes spinners and parked ones)

  std::mutex mutex_;
  std::condition_variable changed_;
  // Bumped by changed(): a spinning waiter watches it without the mutex.
  std::atomic<uint32_t> version_{0};
  uint32_t parked_ = 0;  // waiters on changed_ (guarded by mutex_)
  // Per part: its last wait was short, so it spins first. Kept across tasks; until a part
  // has waited once here it parks at once (a long kernel's waits spin for nothing).
  bool short_wait_[kClusterParts] = {};
  ChipState* chip_ = nullptr;
  const TaskSlot* task_ = nullptr;
  uint32_t cluster_id_ = 0;
  bool broken_ = false;
  bool cooperative_ = false;
  uint32_t flags_[SIMPLER_CLUSTER_FLAG_COUNT] = {};
  uint32_t arrived_ = 0;     // parts at the current barrier generation
  uint64_t generation_ = 0;  // completed barriers
  PartState parts_[kClusterParts];
  PartHandle handles_[kClusterParts];
};

// How often a parked part re-checks whether the run failed elsewhere.
inline constexpr std::chrono::milliseconds kFailPollInterval{20};
// How long a waiting part spins before it parks, and the longest wait after which the part
// still spins in its next one.
inline constexpr std::chrono::microseconds kClusterSpinBudget{50};
inline constexpr int64_t kClusterSpinWorthNs = 100'000;

}  // namespace simpler::rt
