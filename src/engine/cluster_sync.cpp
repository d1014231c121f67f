// Flags and barrier of one cluster of a cluster (MIX) task, with exact deadlock detection.
#include "cluster_sync.h"

#include <string>

#include "backoff.h"
#include "block_runner.h"
#include "chip_state.h"
#include "fiber.h"
#include "simpler/abi/status.h"
#include "support/clock.h"

namespace simpler::rt {
namespace {

std::string part_name(uint32_t part) {
  return part == 0 ? "the AIC part" : "AIV part " + std::to_string(part - 1);
}

}  // namespace

void ClusterSync::start(ChipState* chip, const TaskSlot* task, uint32_t cluster_id,
                        bool cooperative) {
  std::lock_guard<std::mutex> lock(mutex_);
  cooperative_ = cooperative;
  chip_ = chip;
  task_ = task;
  cluster_id_ = cluster_id;
  broken_ = false;
  for (uint32_t& f : flags_) f = 0;
  arrived_ = 0;
  generation_ = 0;
  for (uint32_t p = 0; p < kClusterParts; ++p) {
    parts_[p] = PartState{};
    handles_[p] = PartHandle{this, p};
  }
}

SimplerClusterOps ClusterSync::ops_for(uint32_t part, void* buffer) {
  SimplerClusterOps ops{};
  ops.cluster = &handles_[part];
  ops.buffer = buffer;
  ops.buffer_bytes = SIMPLER_CLUSTER_BUFFER_BYTES;
  ops.cluster_id = cluster_id_;
  ops.aiv_idx = part == 0 ? 0 : part - 1;
  ops.aiv_num = SIMPLER_CLUSTER_AIV_CORES;
  ops.barrier = [](void* h) {
    auto* handle = static_cast<PartHandle*>(h);
    return handle->sync->barrier(handle->part);
  };
  ops.set_flag = [](void* h, uint32_t flag) {
    auto* handle = static_cast<PartHandle*>(h);
    return handle->sync->set_flag(handle->part, flag);
  };
  ops.wait_flag = [](void* h, uint32_t flag) {
    auto* handle = static_cast<PartHandle*>(h);
    return handle->sync->wait_flag(handle->part, flag);
  };
  return ops;
}

int ClusterSync::broken_status() const {
  const int code = task_->run->status.code();
  return code != SIMPLER_OK ? code : SIMPLER_CHIP_ERR_KERNEL_FAULT;
}

bool ClusterSync::satisfied(const PartState& p) const {
  switch (p.wait) {
    case Wait::kRunning:
      return true;
    case Wait::kFlag:
      return flags_[p.flag] > 0;
    case Wait::kBarrier:
      return generation_ != p.generation;
    case Wait::kExited:
      return false;
  }
  return false;
}

bool ClusterSync::deadlocked() {
  bool someone_can_move = false;
  bool exited = false;
  bool at_barrier = false;
  for (const PartState& p : parts_) {
    exited = exited || p.wait == Wait::kExited;
    at_barrier = at_barrier || (p.wait == Wait::kBarrier && !satisfied(p));
    if (p.wait != Wait::kExited && satisfied(p)) someone_can_move = true;
  }
  // A barrier needs every part: one that returned never arrives.
  if (someone_can_move && !(at_barrier && exited)) return false;
  std::string what;
  for (uint32_t i = 0; i < kClusterParts; ++i) {
    const PartState& p = parts_[i];
    what += i == 0 ? "" : ", ";
    what += part_name(i);
    switch (p.wait) {
      case Wait::kFlag:
        what += " waits for flag " + std::to_string(p.flag);
        break;
      case Wait::kBarrier:
        what += satisfied(p) ? " passed the barrier" : " waits at the barrier";
        break;
      case Wait::kExited:
        what += " returned";
        break;
      case Wait::kRunning:
        what += " runs";
        break;
    }
  }
  broken_ = true;
  chip_->fail(*task_->run, SIMPLER_CHIP_ERR_KERNEL_FAULT,
              "cluster task deadlock in " + task_name(task_->id - task_->run->first_id) +
                  " (kernel func_id " + std::to_string(task_->func_id) + ") on cluster " +
                  std::to_string(cluster_id_) + ": " + what +
                  "; no part can release the others (a flag no part sets, or a barrier a part "
                  "never reaches): check the kernel's set_flag/wait_flag/barrier pairs");
  changed();
  return true;
}

void ClusterSync::changed() {
  version_.fetch_add(1, std::memory_order_release);
  if (parked_ > 0) changed_.notify_all();
}

template <typename Ready>
int ClusterSync::park(std::unique_lock<std::mutex>& lock, uint32_t part, Ready ready) {
  Backoff backoff(kClusterSpinBudget);  // one budget per wait
  int64_t started = 0;                  // when this wait began (0: it did not wait yet)
  for (;;) {
    if (broken_) return broken_status();
    if (ready()) {
      parts_[part].wait = Wait::kRunning;
      // This part spins in its next waits only while they are short (a part that waits for
      // a long kernel of another part would spin for nothing).
      if (started != 0)
        short_wait_[part] = support::steady_now_ns() - started <= kClusterSpinWorthNs;
      return SIMPLER_OK;
    }
    if (task_->run->status.failed()) {
      broken_ = true;
      changed();
      return broken_status();
    }
    if (deadlocked()) return broken_status();
    // Cooperative: the parts that can release this one run on this thread; let them.
    // (Fiber::inside: a kernel that calls from a thread of its own parks as below.)
    if (cooperative_ && Fiber::inside()) {
      lock.unlock();
      Fiber::yield();
      lock.lock();
      continue;
    }
    if (started == 0) started = support::steady_now_ns();
    // Spin without the mutex until something changes, within the budget; then park.
    const uint32_t seen = version_.load(std::memory_order_relaxed);
    bool moved = false;
    if (short_wait_[part]) {
      lock.unlock();
      while (!moved && backoff.spin()) moved = version_.load(std::memory_order_acquire) != seen;
      lock.lock();
    }
    // Under the mutex the version is exact: a change after the last look is not missed.
    if (moved || version_.load(std::memory_order_relaxed) != seen) continue;
    ++parked_;
    changed_.wait_for(lock, kFailPollInterval);
    --parked_;
  }
}

int ClusterSync::barrier(uint32_t part) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (broken_) return broken_status();
  const uint64_t generation = generation_;
  parts_[part].wait = Wait::kBarrier;
  parts_[part].generation = generation;
  if (++arrived_ == kClusterParts) {
    arrived_ = 0;
    ++generation_;
    changed();
  }
  return park(lock, part, [&] { return generation_ != generation; });
}

int ClusterSync::set_flag(uint32_t part, uint32_t flag) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (broken_) return broken_status();
  if (flag >= SIMPLER_CLUSTER_FLAG_COUNT) {
    broken_ = true;
    chip_->fail(*task_->run, SIMPLER_CHIP_ERR_KERNEL_FAULT,
                part_name(part) + " of " + task_name(task_->id - task_->run->first_id) +
                    " set flag " + std::to_string(flag) + ", out of range (flags 0.." +
                    std::to_string(SIMPLER_CLUSTER_FLAG_COUNT - 1) + ")");
    changed();
    return broken_status();
  }
  ++flags_[flag];
  changed();
  return SIMPLER_OK;
}

int ClusterSync::wait_flag(uint32_t part, uint32_t flag) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (broken_) return broken_status();
  if (flag >= SIMPLER_CLUSTER_FLAG_COUNT) {
    broken_ = true;
    chip_->fail(*task_->run, SIMPLER_CHIP_ERR_KERNEL_FAULT,
                part_name(part) + " of " + task_name(task_->id - task_->run->first_id) +
                    " waited for flag " + std::to_string(flag) + ", out of range (flags 0.." +
                    std::to_string(SIMPLER_CLUSTER_FLAG_COUNT - 1) + ")");
    changed();
    return broken_status();
  }
  parts_[part].wait = Wait::kFlag;
  parts_[part].flag = flag;
  const int rc = park(lock, part, [&] { return flags_[flag] > 0; });
  if (rc == SIMPLER_OK) --flags_[flag];
  return rc;
}

bool ClusterSync::may_resume(uint32_t part) {
  std::lock_guard<std::mutex> lock(mutex_);
  return broken_ || satisfied(parts_[part]) || task_->run->status.failed();
}

void ClusterSync::part_exit(uint32_t part) {
  std::lock_guard<std::mutex> lock(mutex_);
  parts_[part].wait = Wait::kExited;
  if (broken_) return;
  bool waiting = false;
  for (const PartState& p : parts_)
    waiting = waiting || p.wait == Wait::kFlag || p.wait == Wait::kBarrier;
  if (waiting) (void)deadlocked();
}

}  // namespace simpler::rt
