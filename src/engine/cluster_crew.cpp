// Helper threads for the parts of cluster (MIX) tasks.
#include "cluster_crew.h"

#include <pthread.h>

#include <system_error>

#include "backoff.h"
#include "support/clock.h"

namespace simpler::rt {

struct ClusterCrew::Batch {
  Part part;
  Done done;
  uint32_t unfinished = 0;  // parts still running (guarded by the crew's mutex)
};

ClusterCrew::ClusterCrew(uint32_t max_helpers, uint32_t first_lane)
    : max_helpers_(max_helpers), first_lane_(first_lane) {}

ClusterCrew::~ClusterCrew() { stop(false); }

uint32_t ClusterCrew::helpers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<uint32_t>(helpers_.size());
}

bool ClusterCrew::awake_idle(uint32_t n) const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint32_t awake = 0;
  for (const Helper* h : idle_) awake += h->parked ? 0 : 1;
  return awake >= n;
}

bool ClusterCrew::launch(uint32_t parts, Part part, Done done, const uint32_t* here) {
  auto batch = std::make_unique<Batch>();
  batch->part = std::move(part);
  batch->done = std::move(done);
  const uint32_t first = here != nullptr ? 1 : 0;  // parts before it run on the caller
  const uint32_t handed = parts - first;
  std::vector<Helper*> to_wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_.load(std::memory_order_relaxed) ||
        helpers_.size() - idle_.size() + handed > max_helpers_) {
      return false;
    }
    while (idle_.size() < handed) {
      auto helper = std::make_unique<Helper>();
      Helper* h = helper.get();
      const uint32_t lane = first_lane_ + static_cast<uint32_t>(helpers_.size());
      try {
        h->thread = std::thread([this, h, lane] { helper_loop(h, lane); });
      } catch (const std::system_error&) {
        return false;
      }
      pthread_setname_np(h->thread.native_handle(), "simpler-mix");
      helpers_.push_back(std::move(helper));
      idle_.push_back(h);
    }
    // Every part is handed out before any starts here: the parts wait for each other, so
    // none may be left for later.
    batch->unfinished = parts;
    for (uint32_t i = first; i < parts; ++i) {
      Helper* h = idle_.back();
      idle_.pop_back();
      h->part = i;
      h->batch.store(batch.get(), std::memory_order_release);
      if (h->parked) to_wake.push_back(h);
    }
  }
  // Outside the mutex: a woken helper does not block on it at once. Helpers live until
  // stop(), which does not run during a launch.
  for (Helper* h : to_wake) h->wake.notify_one();
  Batch* b = batch.release();  // freed by the thread whose part returns last
  if (here != nullptr) {
    b->part(0, *here);
    part_returned(b, *here);
  }
  return true;
}

void ClusterCrew::part_returned(Batch* batch, uint32_t lane) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--batch->unfinished != 0) return;
  }
  std::unique_ptr<Batch> last(batch);
  last->done(lane);
}

ClusterCrew::Batch* ClusterCrew::next_batch(Helper* self) {
  const int64_t idle_since = support::steady_now_ns();
  // Spins only while this helper's idle gaps are short (a stream of short cluster tasks).
  Backoff backoff(self->short_gaps ? kCrewSpinBudget : std::chrono::nanoseconds(0));
  Batch* batch = nullptr;
  do {
    batch = self->batch.load(std::memory_order_acquire);
    if (batch != nullptr || stopping_.load(std::memory_order_acquire)) break;
  } while (self->short_gaps && backoff.spin());
  if (batch == nullptr) {
    std::unique_lock<std::mutex> lock(mutex_);
    self->parked = true;
    self->wake.wait(lock, [&] {
      return self->batch.load(std::memory_order_relaxed) != nullptr ||
             stopping_.load(std::memory_order_relaxed);
    });
    self->parked = false;
    batch = self->batch.load(std::memory_order_relaxed);  // null: stopping
  }
  self->short_gaps = support::steady_now_ns() - idle_since <= kCrewSpinWorthNs;
  return batch;
}

void ClusterCrew::helper_loop(Helper* self, uint32_t lane) {
  while (Batch* batch = next_batch(self)) {
    batch->part(self->part, lane);
    {
      // Idle again before the batch may complete: its done may start the next task.
      std::lock_guard<std::mutex> lock(mutex_);
      self->batch.store(nullptr, std::memory_order_relaxed);
      idle_.push_back(self);
    }
    part_returned(batch, lane);
  }
}

void ClusterCrew::stop(bool detach) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true, std::memory_order_release);
    for (auto& h : helpers_) h->wake.notify_one();
  }
  for (auto& h : helpers_) {
    if (!h->thread.joinable()) continue;
    // A helper stuck in a kernel never returns: joining it would hang the caller.
    if (detach) {
      h->thread.detach();
    } else {
      h->thread.join();
    }
  }
  if (!detach) {
    std::lock_guard<std::mutex> lock(mutex_);
    helpers_.clear();
    idle_.clear();
  }
}

}  // namespace simpler::rt
