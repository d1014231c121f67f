#include "host/launch_pool.h"

namespace simpler::rt::host {

LaunchPool::LaunchPool() { grow(kInitialRecords); }

void LaunchPool::grow(size_t count) {
  // Not value-initialized: a record's args (4 KiB) are written per launch, only as far as
  // they are used, so untouched pages of a large pool cost nothing.
  auto chunk = std::make_unique_for_overwrite<LaunchRecord[]>(count);
  for (size_t i = 0; i < count; ++i) {
    chunk[i].next_free = free_;
    free_ = &chunk[i];
  }
  chunks_.push_back(std::move(chunk));
  capacity_.store(capacity_.load(std::memory_order_relaxed) + count, std::memory_order_relaxed);
}

LaunchRecord* LaunchPool::acquire() {
  if (free_ == nullptr) free_ = returned_.exchange(nullptr, std::memory_order_acquire);
  if (free_ == nullptr) grow(capacity());  // doubles; only when more launches are in flight than ever
  LaunchRecord* r = free_;
  free_ = r->next_free;
  r->next_free = nullptr;
  return r;
}

void LaunchPool::release(LaunchRecord* record) {
  LaunchRecord* head = returned_.load(std::memory_order_relaxed);
  do {
    record->next_free = head;
  } while (!returned_.compare_exchange_weak(head, record, std::memory_order_release,
                                            std::memory_order_relaxed));
}

}  // namespace simpler::rt::host
