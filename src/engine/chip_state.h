// simpler runtime — state shared by the orchestrator, the schedulers and the caller of
// Engine::execute (internal).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cluster_buffers.h"
#include "cluster_crew.h"
#include "cluster_sync.h"
#include "observer.h"
#include "parker.h"
#include "ready_queue.h"
#include "run_status.h"
#include "run_track.h"
#include "running_blocks.h"
#include "simpler/abi/chip_types.h"
#include "simpler/kernel/kernel_abi.h"
#include "support/clock.h"
#include "task_slot.h"

namespace simpler::rt {

inline constexpr int kCoreTypeCount = 2;  // SIMPLER_CORE_AIC, SIMPLER_CORE_AIV
// Ready queues: one per core type, plus SIMPLER_CORE_MIX for cluster tasks.
inline constexpr int kQueueCount = 3;

// A core's claim word (ChipState::core_claimed). Single-core dispatch only moves it
// between free and busy; a cluster reservation (cluster_dispatch.h) holds idle cores and
// marks busy ones, so that their release hands them over (busy-reserved -> held is the
// same decrement as busy -> free).
inline constexpr uint32_t kCoreFree = 0;
inline constexpr uint32_t kCoreBusy = 1;
inline constexpr uint32_t kCoreHeld = 2;          // idle, held for the reserved cluster task
inline constexpr uint32_t kCoreBusyReserved = 3;  // busy; held for it once released

// An idle scheduler looks for work every few hundred ns while it has a CPU; one that has
// not looked for this long has lost its CPU (to the thread it yielded to, e.g. the
// orchestrating one on the same CPU) and no longer holds a hardware thread.
inline constexpr int64_t kStalledSpinNs = 50'000;

// Cluster (MIX) task state (cluster_dispatch.h).
struct ClusterPool {
  uint32_t clusters = 0;
  // The one pending reservation: `task` and `chosen` are written by the reserving thread
  // before it drops its guard count from `missing`; the thread whose decrement makes
  // `missing` zero starts the task.
  std::atomic<bool> reserving{false};
  TaskSlot* task = nullptr;
  std::unique_ptr<uint32_t[]> chosen;
  std::atomic<int32_t> missing{0};
  std::atomic<uint64_t> completed{0};       // cluster tasks finished (watchdog progress)
  std::unique_ptr<ClusterSync[]> sync;      // per cluster: one cluster task at a time
  std::unique_ptr<ClusterBuffers> buffers;  // created lazily
  std::mutex buffers_mutex;
  std::unique_ptr<ClusterCrew> crew;

  // `first_lane`: the observer lane of the crew's first helper (one lane per helper).
  void init(uint32_t cluster_count, uint32_t first_lane) {
    clusters = cluster_count;
    chosen = std::make_unique<uint32_t[]>(cluster_count);
    sync = std::make_unique<ClusterSync[]>(cluster_count);
    crew = std::make_unique<ClusterCrew>(max_helpers(), first_lane);
  }
  uint32_t max_helpers() const { return clusters * kClusterParts; }
};

struct ChipState {
  // ---- fixed at Engine::create ----
  uint64_t window = 0;  // task window size (power of two)
  uint64_t window_mask = 0;
  std::unique_ptr<TaskSlot[]> slots;
  ReadyQueue<TaskSlot> ready[kQueueCount];
  Parker scheduler_parker;     // schedulers with nothing to dispatch
  Parker orchestrator_parker;  // the orchestrator waiting for a completion
  // The task the parked orchestrator waits for: only its completion wakes it (one
  // wake-up per wait instead of one per completed task).
  std::atomic<uint64_t> awaited_task{0};
  Edge closed_fanout{nullptr, nullptr};  // address marks a completed task's fanout list
  std::atomic<bool> shutdown{false};
  // No more runnable threads than hardware threads: at most max_awake schedulers are
  // awake (running or spinning) at once, the caller of execute() being the other one.
  std::atomic<int32_t> max_awake{1};
  // max_awake while a thread orchestrates (it runs kernels too: hardware - 1), and while
  // none does because the orchestrations of the pipelined runs in flight all returned (the
  // caller of execute() is gone: one more scheduler may run).
  int32_t awake_orchestrating = 1;
  int32_t awake_unattended = 1;
  std::atomic<int32_t> awake{0};
  // Awake schedulers that found nothing to run and spin for work (a subset of `awake`):
  // they run nothing in parallel with the orchestrator until it hands them a block.
  std::atomic<int32_t> idle{0};
  // When an idle scheduler last looked for work (steady ns; spinners_stalled).
  alignas(64) std::atomic<int64_t> spin_seen_ns{0};
  // When the orchestrating thread, waiting for a task, last looked for work; 0 while it
  // does not wait (it orchestrates, runs a block, or is parked: orchestrator_stalled).
  alignas(64) std::atomic<int64_t> orchestrator_seen_ns{0};
  // Per core type, indexed by core id: kCoreBusy while a dispatcher (dispatcher.h) runs a
  // block on that core, so no core ever runs two blocks at once (values above).
  std::unique_ptr<std::atomic<uint32_t>[]> core_claimed[kCoreTypeCount];
  uint32_t core_count[kCoreTypeCount] = {0, 0};
  RunningBlocks running;  // what each core runs (watchdog messages)
  ClusterPool clusters;   // cluster (MIX) tasks
  // A caught signal or an abandoned run: the engine refuses every later run (sticky, like
  // a CUDA context after a device fault); only release() is allowed. On a line of its
  // own: every kernel-mode launch reads it on the launching thread while the engine's
  // threads write their neighbours.
  alignas(64) std::atomic<bool> poisoned{false};

  // Runs in flight: the one being orchestrated plus up to SIMPLER_MAX_PIPELINE_DEPTH - 1
  // pipelined ones still executing (run_track.h). Fixed array: tasks point into it.
  static constexpr uint32_t kRunTracks = SIMPLER_MAX_PIPELINE_DEPTH + 1;
  RunTrack runs[kRunTracks];

  // ---- per run ----
  // Sees every kernel block when not null (set between runs; schedulers read it after
  // popping a task, which the queue orders after the store).
  std::atomic<RunObserver*> observer{nullptr};
  // Engine id of the run's first task: the user numbers a task id - first_task (from 0).
  uint64_t first_task = 0;

  void init_cores(uint32_t clusters) {
    core_count[SIMPLER_CORE_AIC] = clusters;
    core_count[SIMPLER_CORE_AIV] = 2 * clusters;
    running.init(core_count[SIMPLER_CORE_AIC], core_count[SIMPLER_CORE_AIV]);
    for (int type = 0; type < kCoreTypeCount; ++type) {
      core_claimed[type] = std::make_unique<std::atomic<uint32_t>[]>(core_count[type]);
      for (uint32_t i = 0; i < core_count[type]; ++i)
        core_claimed[type][i].store(0, std::memory_order_relaxed);
    }
  }
  bool claim_core(uint32_t type, uint32_t id) {
    std::atomic<uint32_t>& c = core_claimed[type][id];
    uint32_t free = 0;
    return c.load(std::memory_order_relaxed) == kCoreFree &&
           c.compare_exchange_strong(free, kCoreBusy, std::memory_order_acquire,
                                     std::memory_order_relaxed);
  }
  // True when the core was reserved meanwhile: it is now held for the reserved cluster
  // task, and the caller must report it (cluster_dispatch.h release_core).
  [[nodiscard]] bool release_core(uint32_t type, uint32_t id) {
    return core_claimed[type][id].fetch_sub(1, std::memory_order_acq_rel) == kCoreBusyReserved;
  }
  bool try_enter_awake() {
    int32_t n = awake.load(std::memory_order_relaxed);
    while (room_beside(n)) {
      if (awake.compare_exchange_weak(n, n + 1, std::memory_order_seq_cst)) return true;
    }
    return false;
  }
  // The idle schedulers spin without a CPU: none has looked for work for kStalledSpinNs.
  // They count as awake but run nothing, so they must not keep released work from a
  // parked scheduler (the fused prefill ran serially behind such a spinner: every
  // release found the budget full and woke nobody). One stamp for all: a spinner that just
  // parked hides a stalled one for up to kStalledSpinNs (a later release sees it).
  bool spinners_stalled(int64_t now_ns) const {
    return idle.load(std::memory_order_relaxed) > 0 &&
           now_ns - spin_seen_ns.load(std::memory_order_relaxed) >= kStalledSpinNs;
  }
  // An idle scheduler is looking for work (it has a CPU).
  void spinner_looks(int64_t now_ns) { spin_seen_ns.store(now_ns, std::memory_order_relaxed); }
  // The same for the orchestrating thread while it waits for a task: the budget counts it
  // as the hardware thread that runs kernels beside the schedulers, but waiting it runs
  // only what it finds. One that lost its CPU (it yielded to a scheduler on the same CPU)
  // found nothing for milliseconds while a single scheduler ran the ready matmuls one by
  // one (the fused prefill's slow mode, docs/performance.md section 7).
  void orchestrator_looks(int64_t now_ns) {
    orchestrator_seen_ns.store(now_ns, std::memory_order_relaxed);
  }
  void orchestrator_not_waiting() { orchestrator_seen_ns.store(0, std::memory_order_relaxed); }
  bool orchestrator_stalled(int64_t now_ns) const {
    const int64_t seen = orchestrator_seen_ns.load(std::memory_order_relaxed);
    return seen != 0 && now_ns - seen >= kStalledSpinNs;
  }
  // Whether one more scheduler may be awake beside `n`: within the budget, or in place of a
  // stalled spinner or a stalled waiting orchestrator (at most one each; a spinner back on
  // its CPU over the budget leaves at its first idle moment, leave_if_over_budget).
  bool room_beside(int32_t n) const {
    const int32_t limit = max_awake.load();
    if (n < limit) return true;
    const int64_t now = support::steady_now_ns();
    const int32_t in_place = (spinners_stalled(now) ? idle.load(std::memory_order_relaxed) : 0) +
                             (orchestrator_stalled(now) ? 1 : 0);
    return n < limit + in_place;
  }
  bool awake_room() const { return room_beside(awake_schedulers()); }
  void leave_awake() { awake.fetch_sub(1, std::memory_order_seq_cst); }
  // Leaves when more schedulers are awake than the budget allows (one at a time: two
  // over-budget schedulers going idle together do not both leave).
  bool leave_if_over_budget() {
    int32_t n = awake.load(std::memory_order_relaxed);
    while (n > max_awake.load(std::memory_order_relaxed)) {
      if (awake.compare_exchange_weak(n, n - 1, std::memory_order_seq_cst)) return true;
    }
    return false;
  }
  int32_t awake_schedulers() const { return awake.load(std::memory_order_seq_cst); }
  // Awake schedulers running blocks (a hint: the two counts are read one after the other).
  int32_t working_schedulers() const {
    return std::max(0,
                    awake.load(std::memory_order_relaxed) - idle.load(std::memory_order_relaxed));
  }
  // After publishing ready work: wakes up to `count` parked schedulers, but only while the
  // awake budget has room (a scheduler woken beyond it would go straight back to sleep;
  // the awake ones re-check the queues before they park).
  void wake_schedulers(int count) {
    if (awake_room()) scheduler_parker.notify(count);
  }
  void orchestrator_returns() { max_awake.store(awake_orchestrating, std::memory_order_relaxed); }
  // `wake` false: the orchestrating thread comes back at once (the next pipelined run);
  // the budget stays as it is (raised for the gap, it let completions wake a second
  // scheduler that then stayed awake beside the next orchestration: one runnable thread
  // more than hardware threads), and a scheduler is woken only when none is awake for
  // ready work.
  void orchestrator_leaves(bool wake = true) {
    if (wake) {
      max_awake.store(awake_unattended, std::memory_order_relaxed);
      wake_schedulers(awake_unattended);
    } else if (awake_schedulers() == 0 && has_ready()) {
      wake_schedulers(1);
    }
  }
  // Ready blocks queued of either type (a hint).
  uint64_t ready_depth() const {
    return ready[0].size_hint() + ready[1].size_hint() + ready[SIMPLER_CORE_MIX].size_hint();
  }
  // A queued cluster task counts only while no reservation is pending: until then no
  // dispatcher can take it, and spinning on it would burn a hardware thread.
  bool has_ready() const {
    return !ready[0].looks_empty() || !ready[1].looks_empty() ||
           (!ready[SIMPLER_CORE_MIX].looks_empty() &&
            !clusters.reserving.load(std::memory_order_relaxed));
  }

  TaskSlot& slot(uint64_t id) { return slots[id & window_mask]; }
  Edge* closed() { return &closed_fanout; }

  // Latches the run's first error and wakes every waiter so it can observe it.
  void fail(RunTrack& run, int32_t code, const std::string& message) {
    if (run.status.latch(code, message)) {
      scheduler_parker.notify_all();
      orchestrator_parker.notify_all();
    }
  }
  // A crash or a watchdog timeout: every run in flight fails (their tasks are skipped).
  void fail_all(int32_t code, const std::string& message) {
    for (RunTrack& run : runs) {
      if (run.busy.load(std::memory_order_acquire)) fail(run, code, message);
    }
  }

  // Queues a task whose last dependency was released. The queues are sized so this
  // cannot fail; if the invariant ever broke we wait for a consumer instead of dropping
  // the task.
  void enqueue_ready(TaskSlot& task) {
    while (!ready[task.core_type].push(&task)) std::this_thread::yield();
  }
};

}  // namespace simpler::rt
