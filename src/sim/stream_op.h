// One operation in a stream's queue. Plain data plus an event reference, so a pre-sized
// ring of these makes enqueueing allocation-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "event_state.h"
#include "simpler/sim/sim_driver.h"

namespace simpler::sim {

enum class StreamOpKind : uint8_t {
  kMemcpy,
  kMemset,
  kHostFunc,
  kDeviceJob,
  kRecordEvent,
  kWaitEvent
};

// Laid out so that what the executor reads for a launch, a host function or an event
// (kind .. event_generation) is the first 64 bytes: the op slot is 64-byte aligned, so
// such an op moves one cache line from the launching thread to the executor, not two.
struct StreamOp {
  StreamOpKind kind = StreamOpKind::kHostFunc;
  // Nonzero: the op fails with this status when it executes (an injected launch fault).
  int preset_status = 0;
  sim_device_job_fn job = nullptr;
  sim_job_cleanup_fn cleanup = nullptr;
  void* user_data = nullptr;
  sim_host_fn host_fn = nullptr;
  std::shared_ptr<EventState> event;
  uint64_t event_generation = 0;
  // Copies and memsets only.
  SimMemcpyKind copy_kind = SIM_MEMCPY_HOST_TO_DEVICE;
  int memset_value = 0;
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t size = 0;
};
static_assert(sizeof(StreamOp) <= 128, "an op slot is two cache lines at most");

// Where a stream re-validates device ranges when a copy executes. A free is ordered after
// the work queued before it, so memory whose free is pending still counts; memory gone
// for another reason (a device reset) does not.
class DeviceMemoryView {
 public:
  // SIMPLER_OK, SIM_ERR_INVALID_POINTER or SIM_ERR_OUT_OF_RANGE.
  virtual int check_queued_range(const void* ptr, std::size_t size) const = 0;

 protected:
  ~DeviceMemoryView() = default;
};

}  // namespace simpler::sim
