#include "host/launch_pool.h"

namespace simpler::rt::host {

LaunchPool::LaunchPool() {
  std::lock_guard<std::mutex> lock(mutex_);
  grow(kInitialRecords);
}

void LaunchPool::grow(size_t count) {
  auto chunk = std::make_unique<LaunchRecord[]>(count);
  for (size_t i = 0; i < count; ++i) {
    chunk[i].next_free = free_;
    free_ = &chunk[i];
  }
  chunks_.push_back(std::move(chunk));
  capacity_ += count;
}

LaunchRecord* LaunchPool::acquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_ == nullptr) grow(capacity_);  // doubles; only when more launches are in flight than ever
  LaunchRecord* r = free_;
  free_ = r->next_free;
  r->next_free = nullptr;
  return r;
}

void LaunchPool::release(LaunchRecord* record) {
  std::lock_guard<std::mutex> lock(mutex_);
  record->next_free = free_;
  free_ = record;
}

size_t LaunchPool::capacity() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capacity_;
}

}  // namespace simpler::rt::host
