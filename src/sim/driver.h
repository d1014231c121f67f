// The per-process driver: configuration, the devices, the live stream/event handles and
// the test hooks. All device state lives in Device objects (arena, topology) and Stream
// objects; the driver only finds them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "device_arena.h"
#include "event_state.h"
#include "handle_registry.h"
#include "operation_stats.h"
#include "simpler/sim/sim_driver.h"
#include "stream.h"

namespace simpler::sim {

struct Device {
  Device(int32_t device_id, const SimConfig& config);

  const int32_t id;
  const SimTopology topology;
  DeviceArena arena;
  // Bumped by every sim_device_reset: memory and streams taken before a bump are gone.
  std::atomic<uint64_t> reset_epoch{0};
};

class Driver final : public DeviceMemoryView {
 public:
  // The one instance of the process, created at first use (reads the environment then)
  // and intentionally never destroyed: executor threads may outlive static destructors.
  static Driver& instance();

  OperationStats& stats() { return stats_; }
  HandleRegistry<Stream>& streams() { return streams_; }
  HandleRegistry<EventState>& events() { return events_; }

  SimConfig config() const;
  // SIM_ERR_ALREADY_INITIALIZED once a device was used, SIM_ERR_INVALID_VALUE if a field
  // is out of range.
  int configure(const SimConfig& config);

  // A device by id (freezes the configuration): SIM_ERR_INVALID_DEVICE if out of range.
  int device(int32_t id, Device** out);
  // The calling thread's current device, SIM_ERR_NO_DEVICE until set.
  int current_device(Device** out);
  int set_current_device(int32_t id);
  int get_current_device(int32_t* out) const;

  // Device owning [ptr, ptr+size) inside one live allocation (with accept_free_pending,
  // also one whose stream-ordered free is still pending).
  int pointer_device(const void* ptr, std::size_t size, int32_t* out_device,
                     bool accept_free_pending = false) const;
  int check_device_range(const void* ptr, std::size_t size) const {
    return pointer_device(ptr, size, nullptr);
  }
  int check_queued_range(const void* ptr, std::size_t size) const override {
    return pointer_device(ptr, size, nullptr, true);
  }
  // The allocation holding ptr (live or free-pending), on any device.
  int pointer_allocation(const void* ptr, SimAllocation* out) const;

  // sim_free of a live allocation's base, ordered after the work already queued on every
  // stream (the CUDA stream-ordered allocator's rule): released at once when no stream has
  // unfinished work, else marked free-pending and released by a later sweep once that
  // work retired. SIM_ERR_INVALID_POINTER for anything but the base of a live allocation.
  int free_ordered(Device& device, void* ptr);
  // Releases the pending frees whose queued work retired. Cheap when none is pending.
  void sweep_pending_frees();

  // Waits for and destroys the device's streams, then frees all its memory.
  int reset_device(int32_t id);

 private:
  Driver();
  void freeze();

  OperationStats stats_;
  HandleRegistry<Stream> streams_{1};
  HandleRegistry<EventState> events_{2};

  mutable std::mutex config_mutex_;
  SimConfig config_;
  std::atomic<bool> frozen_{false};
  std::vector<std::unique_ptr<Device>> devices_;  // immutable once frozen_

  struct PendingFree {
    Device* device;
    void* ptr;
    // (stream, ops enqueued on it at the free): released once each retired that many.
    std::vector<std::pair<std::shared_ptr<Stream>, uint64_t>> waits;
  };
  std::mutex pending_mutex_;
  std::vector<PendingFree> pending_frees_;
  std::atomic<std::size_t> pending_count_{0};
};

}  // namespace simpler::sim
