// Helper threads for the parts of cluster (MIX) tasks.
#include "cluster_crew.h"

#include <pthread.h>

#include <system_error>

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

bool ClusterCrew::launch(uint32_t parts, Part part, Done done) {
  auto batch = std::make_unique<Batch>();
  batch->part = std::move(part);
  batch->done = std::move(done);
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_ || helpers_.size() - idle_.size() + parts > max_helpers_) return false;
  while (idle_.size() < parts) {
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
  // Every part is handed out under the lock, before any helper can start: the parts wait
  // for each other, so none may be left for later.
  Batch* b = batch.release();  // freed by the helper that finishes last
  b->unfinished = parts;
  for (uint32_t i = 0; i < parts; ++i) {
    Helper* h = idle_.back();
    idle_.pop_back();
    h->batch = b;
    h->part = i;
    h->wake.notify_one();
  }
  return true;
}

void ClusterCrew::helper_loop(Helper* self, uint32_t lane) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    self->wake.wait(lock, [&] { return self->batch != nullptr || stopping_; });
    if (self->batch == nullptr) return;  // stopping
    Batch* batch = self->batch;
    const uint32_t part = self->part;
    lock.unlock();
    batch->part(part, lane);
    lock.lock();
    self->batch = nullptr;
    idle_.push_back(self);
    if (--batch->unfinished == 0) {
      lock.unlock();
      std::unique_ptr<Batch> last(batch);
      last->done(lane);
      lock.lock();
    }
  }
}

void ClusterCrew::stop(bool detach) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
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
