// C entry points: device memory of the current device, synchronous copies and sets.
#include <cstring>

#include "api_support.h"

using simpler::sim::Device;
using simpler::sim::Driver;
using simpler::sim::guarded;
using simpler::sim::on_current_device;
using simpler::sim::on_device;
using simpler::sim::Operation;

namespace simpler::sim {

int validate_copy(const Driver& driver, const void* dst, const void* src, std::size_t size,
                  int kind) {
  if (kind != SIM_MEMCPY_HOST_TO_DEVICE && kind != SIM_MEMCPY_DEVICE_TO_HOST &&
      kind != SIM_MEMCPY_DEVICE_TO_DEVICE)
    return SIM_ERR_INVALID_VALUE;
  if (size == 0) return SIMPLER_OK;
  if (dst == nullptr || src == nullptr) return SIM_ERR_INVALID_VALUE;
  if (kind != SIM_MEMCPY_DEVICE_TO_HOST) {
    if (int status = driver.check_device_range(dst, size); status != SIMPLER_OK) return status;
  }
  if (kind != SIM_MEMCPY_HOST_TO_DEVICE) {
    if (int status = driver.check_device_range(src, size); status != SIMPLER_OK) return status;
  }
  return SIMPLER_OK;
}

namespace {

// The shared tail of sim_malloc and sim_malloc_on_device, once the device is known.
int allocate(Driver& driver, Device& device, size_t size, void** out_ptr) {
  if (int fault = driver.stats().take_fault(Operation::kMalloc)) return fault;
  driver.sweep_pending_frees();
  return device.arena.allocate(size, out_ptr);
}

}  // namespace
}  // namespace simpler::sim

extern "C" {

int sim_malloc(void** out_ptr, size_t size) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kMalloc);
    if (out_ptr == nullptr) return SIM_ERR_INVALID_VALUE;
    *out_ptr = nullptr;
    if (size == 0) return SIM_ERR_INVALID_VALUE;
    return on_current_device(driver, [&](Device& device) {
      return simpler::sim::allocate(driver, device, size, out_ptr);
    });
  });
}

int sim_malloc_on_device(int32_t device, void** out_ptr, size_t size) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kMalloc);
    if (out_ptr == nullptr) return SIM_ERR_INVALID_VALUE;
    *out_ptr = nullptr;
    if (size == 0) return SIM_ERR_INVALID_VALUE;
    return on_device(driver, device, [&](Device& target) {
      return simpler::sim::allocate(driver, target, size, out_ptr);
    });
  });
}

int sim_free(void* ptr) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kFree);
    if (ptr == nullptr) return SIMPLER_OK;  // like free(NULL)
    int32_t owner = -1;
    // Any byte of a live allocation finds its device; release() then insists on the base.
    if (int status = driver.pointer_device(ptr, 0, &owner); status != SIMPLER_OK) return status;
    if (int fault = driver.stats().take_fault(Operation::kFree)) return fault;
    return on_device(driver, owner,
                     [&](Device& device) { return driver.free_ordered(device, ptr); });
  });
}

int sim_memset(void* device_ptr, int value, size_t size) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kMemset);
    if (size == 0) return SIMPLER_OK;
    if (device_ptr == nullptr) return SIM_ERR_INVALID_VALUE;
    if (int status = driver.check_device_range(device_ptr, size); status != SIMPLER_OK)
      return status;
    if (int fault = driver.stats().take_fault(Operation::kMemset)) return fault;
    std::memset(device_ptr, value, size);
    return SIMPLER_OK;
  });
}

int sim_memcpy(void* dst, const void* src, size_t size, SimMemcpyKind kind) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kMemcpy);
    const int kind_value = simpler::sim::raw_kind(kind);
    if (int status = simpler::sim::validate_copy(driver, dst, src, size, kind_value);
        status != SIMPLER_OK)
      return status;
    if (int fault = driver.stats().take_fault(Operation::kMemcpy)) return fault;
    if (size != 0) std::memmove(dst, src, size);
    return SIMPLER_OK;
  });
}

int sim_mem_get_info(size_t* out_free, size_t* out_total) {
  return guarded([&] {
    if (out_free == nullptr || out_total == nullptr) return SIM_ERR_INVALID_VALUE;
    Driver& driver = Driver::instance();
    return on_current_device(driver, [&](Device& device) {
      driver.sweep_pending_frees();
      *out_total = device.arena.capacity();
      *out_free = device.arena.capacity() - device.arena.used();
      return SIMPLER_OK;
    });
  });
}

int sim_pointer_device(const void* ptr, size_t size, int32_t* out_device) {
  return guarded([&] {
    if (ptr == nullptr || out_device == nullptr) return SIM_ERR_INVALID_VALUE;
    return Driver::instance().pointer_device(ptr, size, out_device);
  });
}

int sim_pointer_allocation(const void* ptr, SimAllocation* out) {
  return guarded([&] {
    if (ptr == nullptr || out == nullptr) return SIM_ERR_INVALID_VALUE;
    return Driver::instance().pointer_allocation(ptr, out);
  });
}

}  // extern "C"
