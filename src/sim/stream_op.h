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

struct StreamOp {
  StreamOpKind kind = StreamOpKind::kHostFunc;
  SimMemcpyKind copy_kind = SIM_MEMCPY_HOST_TO_DEVICE;
  int memset_value = 0;
  // Nonzero: the op fails with this status when it executes (an injected launch fault).
  int preset_status = 0;
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t size = 0;
  sim_host_fn host_fn = nullptr;
  sim_device_job_fn job = nullptr;
  sim_job_cleanup_fn cleanup = nullptr;
  void* user_data = nullptr;
  std::shared_ptr<EventState> event;
  uint64_t event_generation = 0;
};

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
