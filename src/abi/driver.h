// simpler runtime host — small helpers over the sim driver: status mapping, the calling
// thread's current device, and an owned device allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace simpler::rt::host {

// Throws AbiError when `sim_status` is an error. Argument-type driver errors (bad value,
// pointer, range, handle, device) become PTO_RUNTIME_ERR_INVALID_ARGUMENT; anything else
// (out of memory, injected fault, busy, no device) keeps its named SIM_ERR_* status.
// The message is "<what>: <status name>".
void check_driver(int sim_status, const std::string& what);
int map_driver_status(int sim_status);

// The current device of the calling thread, or -1 when none is set.
int32_t current_device();

// Program mode only (the runtime owns the device): makes `device` current for the scope
// and restores the previous current device afterwards when there was one.
class ScopedDevice {
 public:
  explicit ScopedDevice(int32_t device);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int32_t previous_ = -1;
  bool switched_ = false;
};

// A device's reset epoch when a resource was taken: reset_since() is true once a
// sim_device_reset freed the device's memory and destroyed its streams afterwards.
class DeviceEpoch {
 public:
  static DeviceEpoch of_current_device();
  static DeviceEpoch of(int32_t device);
  bool reset_since() const;

 private:
  int32_t device_ = -1;
  uint64_t epoch_ = 0;
};

// One sim_malloc'd block on the current device. release() reports a failed free and keeps
// the block; the destructor frees best-effort (error paths only).
class DeviceAllocation {
 public:
  DeviceAllocation() = default;
  static DeviceAllocation allocate(size_t bytes, const std::string& what);  // throws AbiError
  ~DeviceAllocation();
  DeviceAllocation(DeviceAllocation&& other) noexcept;
  DeviceAllocation& operator=(DeviceAllocation&& other) noexcept;
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;

  // SIMPLER_OK (also when empty, or when a device reset already freed it) or the
  // sim_free status.
  int release();
  uint8_t* data() const { return ptr_; }
  uint64_t address() const { return reinterpret_cast<uint64_t>(ptr_); }
  size_t size() const { return size_; }
  bool empty() const { return ptr_ == nullptr; }

 private:
  uint8_t* ptr_ = nullptr;
  size_t size_ = 0;
  DeviceEpoch epoch_;
};

}  // namespace simpler::rt::host
