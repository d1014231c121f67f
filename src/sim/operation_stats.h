// Per-operation call counters and fault injection (the driver's test hooks). Lock-free:
// every API call touches them, so they must cost one or two atomic operations.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>

namespace simpler::sim {

// The operation names of sim_driver.h, in the order of kOperationNames.
enum class Operation : int {
  kMalloc,
  kFree,
  kMemcpy,
  kMemset,
  kStreamCreate,
  kStreamDestroy,
  kStreamSynchronize,
  kStreamQuery,
  kEventCreate,
  kEventDestroy,
  kEventRecord,
  kEventSynchronize,
  kLaunch,
  kHostFunc,
  kSetDevice,
  kDeviceReset,
  kCount
};

inline constexpr std::size_t kOperationCount = static_cast<std::size_t>(Operation::kCount);

std::optional<Operation> operation_from_name(std::string_view name);

class OperationStats {
 public:
  OperationStats();

  void count_call(Operation op) { calls_[index(op)].fetch_add(1, std::memory_order_relaxed); }
  uint64_t calls(Operation op) const { return calls_[index(op)].load(std::memory_order_relaxed); }
  void reset_counters();

  // The next `count` calls that reach take_fault(op) fail with `status`; replaces any
  // pending fault of `op` (count 0 clears it).
  void inject(Operation op, int32_t count, int32_t status);
  void clear_faults();
  // 0, or the injected status (consuming one of the pending faults).
  int take_fault(Operation op);

 private:
  static std::size_t index(Operation op) { return static_cast<std::size_t>(op); }

  std::array<std::atomic<uint64_t>, kOperationCount> calls_;
  // (status << 32) | remaining count, so a fault is consumed with one CAS.
  std::array<std::atomic<uint64_t>, kOperationCount> faults_;
};

}  // namespace simpler::sim
