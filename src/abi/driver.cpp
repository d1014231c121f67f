#include "abi/driver.h"

#include <utility>

#include "abi/abi_error.h"
#include "simpler/abi/status.h"
#include "simpler/sim/sim_driver.h"

namespace simpler::rt::host {

int map_driver_status(int sim_status) {
  switch (sim_status) {
    case SIM_ERR_INVALID_VALUE:
    case SIM_ERR_INVALID_DEVICE:
    case SIM_ERR_INVALID_POINTER:
    case SIM_ERR_OUT_OF_RANGE:
    case SIM_ERR_INVALID_HANDLE:
    case SIM_ERR_WRONG_DEVICE:
      return PTO_RUNTIME_ERR_INVALID_ARGUMENT;
    default:
      return sim_status;
  }
}

void check_driver(int sim_status, const std::string& what) {
  if (sim_status == SIMPLER_OK) return;
  fail(map_driver_status(sim_status), what + ": " + simpler_status_name(sim_status));
}

int32_t current_device() {
  int32_t device = -1;
  if (sim_get_device(&device) != SIMPLER_OK) return -1;
  return device;
}

ScopedDevice::ScopedDevice(int32_t device) : previous_(current_device()) {
  if (previous_ == device) return;
  check_driver(sim_set_device(device), "making device " + std::to_string(device) + " current");
  switched_ = true;
}

ScopedDevice::~ScopedDevice() {
  if (switched_ && previous_ >= 0) (void)sim_set_device(previous_);
}

DeviceAllocation DeviceAllocation::allocate(size_t bytes, const std::string& what) {
  void* ptr = nullptr;
  check_driver(sim_malloc(&ptr, bytes),
               "allocating " + std::to_string(bytes) + " device bytes for " + what);
  DeviceAllocation a;
  a.ptr_ = static_cast<uint8_t*>(ptr);
  a.size_ = bytes;
  a.epoch_ = DeviceEpoch::of_current_device();
  return a;
}

DeviceEpoch DeviceEpoch::of_current_device() { return of(current_device()); }

DeviceEpoch DeviceEpoch::of(int32_t device) {
  DeviceEpoch e;
  e.device_ = device;
  if (device >= 0 && sim_device_reset_epoch(device, &e.epoch_) != SIMPLER_OK) e.device_ = -1;
  return e;
}

bool DeviceEpoch::reset_since() const {
  uint64_t now = 0;
  return device_ >= 0 && sim_device_reset_epoch(device_, &now) == SIMPLER_OK && now != epoch_;
}

DeviceAllocation::~DeviceAllocation() {
  if (ptr_ != nullptr && !epoch_.reset_since()) (void)sim_free(ptr_);
}

DeviceAllocation::DeviceAllocation(DeviceAllocation&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      epoch_(other.epoch_) {}

DeviceAllocation& DeviceAllocation::operator=(DeviceAllocation&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr && !epoch_.reset_since()) (void)sim_free(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    size_ = std::exchange(other.size_, 0);
    epoch_ = other.epoch_;
  }
  return *this;
}

int DeviceAllocation::release() {
  if (ptr_ == nullptr) return SIMPLER_OK;
  // A device reset already freed the block (and its address may belong to someone else
  // now): forget it.
  int status = epoch_.reset_since() ? SIMPLER_OK : sim_free(ptr_);
  if (status != SIMPLER_OK) return status;
  ptr_ = nullptr;
  size_ = 0;
  return SIMPLER_OK;
}

}  // namespace simpler::rt::host
