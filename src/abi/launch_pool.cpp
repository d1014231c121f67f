#include "abi/launch_pool.h"

#include <cstring>

namespace simpler::rt::host {

void LaunchRecord::store_args(const ChipStorageTaskArgs& args) {
  tensor_count = args.tensor_count;
  scalar_count = args.scalar_count;
  uses_spill = tensor_count > kInlineTensors || scalar_count > kInlineScalars;
  if (!uses_spill) {
    // Whole tensors of a constant size: plain vector moves (a memcpy of a variable size
    // became `rep movsq`, whose start-up cost was most of this copy).
    for (uint32_t i = 0; i < tensor_count; ++i) tensors[i] = args.tensors[i];
    for (uint32_t i = 0; i < scalar_count; ++i) scalars[i] = args.scalars[i];
    return;
  }
  if (!spill) spill = std::make_unique_for_overwrite<ChipStorageTaskArgs>();
  spill->tensor_count = tensor_count;
  spill->scalar_count = scalar_count;
  std::memcpy(spill->tensors, args.tensors, sizeof(ChipTensor) * tensor_count);
  std::memcpy(spill->scalars, args.scalars, sizeof(uint64_t) * scalar_count);
}

const ChipStorageTaskArgs& LaunchRecord::expanded_args(ChipStorageTaskArgs& scratch) const {
  if (uses_spill) return *spill;
  scratch.tensor_count = tensor_count;
  scratch.scalar_count = scalar_count;
  std::memcpy(scratch.tensors, tensors, sizeof(ChipTensor) * tensor_count);
  std::memcpy(scratch.scalars, scalars, sizeof(uint64_t) * scalar_count);
  return scratch;
}

LaunchPool::LaunchPool() { grow(kInitialRecords); }

void LaunchPool::grow(size_t count) {
  auto chunk = std::make_unique<LaunchRecord[]>(count);
  for (size_t i = 0; i < count; ++i) {
    chunk[i].next_free = free_;
    free_ = &chunk[i];
  }
  chunks_.push_back(std::move(chunk));
  capacity_.store(capacity_.load(std::memory_order_relaxed) + count, std::memory_order_relaxed);
}

LaunchRecord* LaunchPool::acquire() {
  if (free_ == nullptr) free_ = returned_.exchange(nullptr, std::memory_order_acquire);
  if (free_ == nullptr)
    grow(capacity());  // doubles; only when more launches are in flight than ever
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
