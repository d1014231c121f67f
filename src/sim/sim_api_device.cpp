// C entry points: version, configuration, devices.
#include "api_support.h"

using simpler::sim::Device;
using simpler::sim::Driver;
using simpler::sim::guarded;
using simpler::sim::on_device;
using simpler::sim::Operation;

extern "C" {

int sim_driver_api_version(uint32_t* out_version) {
  if (out_version == nullptr) return SIM_ERR_INVALID_VALUE;
  *out_version = SIM_DRIVER_API_VERSION;
  return SIMPLER_OK;
}

int sim_get_config(SimConfig* out) {
  return guarded([&] {
    if (out == nullptr) return SIM_ERR_INVALID_VALUE;
    *out = Driver::instance().config();
    return SIMPLER_OK;
  });
}

int sim_configure(const SimConfig* config) {
  return guarded([&] {
    if (config == nullptr) return SIM_ERR_INVALID_VALUE;
    return Driver::instance().configure(*config);
  });
}

int sim_get_device_count(int32_t* out_count) {
  return guarded([&] {
    if (out_count == nullptr) return SIM_ERR_INVALID_VALUE;
    *out_count = Driver::instance().config().device_count;
    return SIMPLER_OK;
  });
}

int sim_set_device(int32_t device) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kSetDevice);
    return on_device(driver, device, [&](Device&) {
      if (int fault = driver.stats().take_fault(Operation::kSetDevice)) return fault;
      return driver.set_current_device(device);
    });
  });
}

int sim_get_device(int32_t* out_device) {
  return guarded([&] {
    if (out_device == nullptr) return SIM_ERR_INVALID_VALUE;
    return Driver::instance().get_current_device(out_device);
  });
}

int sim_device_topology(int32_t device, SimTopology* out) {
  return guarded([&] {
    if (out == nullptr) return SIM_ERR_INVALID_VALUE;
    return on_device(Driver::instance(), device, [&](Device& target) {
      *out = target.topology;
      return SIMPLER_OK;
    });
  });
}

int sim_device_reset_epoch(int32_t device, uint64_t* out_epoch) {
  return guarded([&] {
    if (out_epoch == nullptr) return SIM_ERR_INVALID_VALUE;
    return on_device(Driver::instance(), device, [&](Device& target) {
      *out_epoch = target.reset_epoch.load(std::memory_order_acquire);
      return SIMPLER_OK;
    });
  });
}

int sim_device_memory_generation(int32_t device, uint64_t* out_generation) {
  return guarded([&] {
    if (out_generation == nullptr) return SIM_ERR_INVALID_VALUE;
    return on_device(Driver::instance(), device, [&](Device& target) {
      // Both only grow, so the sum changes when either does. The reset epoch is in it
      // because a reset of a never-used arena bumps only the epoch.
      *out_generation =
          target.arena.generation() + target.reset_epoch.load(std::memory_order_acquire);
      return SIMPLER_OK;
    });
  });
}

int sim_device_reset(int32_t device) {
  return guarded([&] {
    Driver& driver = simpler::sim::counted(Operation::kDeviceReset);
    return on_device(driver, device, [&](Device&) {
      if (int fault = driver.stats().take_fault(Operation::kDeviceReset)) return fault;
      return driver.reset_device(device);
    });
  });
}

}  // extern "C"
