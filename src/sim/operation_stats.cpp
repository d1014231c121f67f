#include "operation_stats.h"

namespace simpler::sim {
namespace {

constexpr std::array<std::string_view, kOperationCount> kOperationNames = {"malloc",
                                                                           "free",
                                                                           "memcpy",
                                                                           "memset",
                                                                           "stream_create",
                                                                           "stream_destroy",
                                                                           "stream_synchronize",
                                                                           "stream_query",
                                                                           "event_create",
                                                                           "event_destroy",
                                                                           "event_record",
                                                                           "event_synchronize",
                                                                           "launch",
                                                                           "host_func",
                                                                           "set_device",
                                                                           "device_reset"};

constexpr uint64_t kCountMask = 0xffffffffull;

}  // namespace

std::optional<Operation> operation_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kOperationNames.size(); ++i) {
    if (kOperationNames[i] == name) return static_cast<Operation>(i);
  }
  return std::nullopt;
}

OperationStats::OperationStats() {
  for (auto& c : calls_) c.store(0, std::memory_order_relaxed);
  for (auto& f : faults_) f.store(0, std::memory_order_relaxed);
}

void OperationStats::reset_counters() {
  for (auto& c : calls_) c.store(0, std::memory_order_relaxed);
}

void OperationStats::inject(Operation op, int32_t count, int32_t status) {
  const uint64_t packed =
      count <= 0 ? 0
                 : (uint64_t{static_cast<uint32_t>(status)} << 32) | static_cast<uint32_t>(count);
  faults_[index(op)].store(packed, std::memory_order_release);
}

void OperationStats::clear_faults() {
  for (auto& f : faults_) f.store(0, std::memory_order_release);
}

int OperationStats::take_fault(Operation op) {
  std::atomic<uint64_t>& slot = faults_[index(op)];
  uint64_t packed = slot.load(std::memory_order_acquire);
  while ((packed & kCountMask) != 0) {
    if (slot.compare_exchange_weak(packed, packed - 1, std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
      return static_cast<int32_t>(static_cast<uint32_t>(packed >> 32));
    }
  }
  return 0;
}

}  // namespace simpler::sim
