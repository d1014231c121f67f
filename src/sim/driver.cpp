#include "driver.h"

#include "sim_config.h"

namespace simpler::sim {
namespace {

thread_local int32_t t_current_device = -1;

SimTopology topology_of(const SimConfig& config) {
  SimTopology topology{};
  topology.clusters = config.clusters_per_device;
  topology.aic_cores = config.clusters_per_device;
  topology.aiv_cores = 2 * config.clusters_per_device;
  topology.aicpu_threads = config.aicpu_threads;
  return topology;
}

}  // namespace

Device::Device(int32_t device_id, const SimConfig& config)
    : id(device_id), topology(topology_of(config)), arena(config.device_memory_bytes) {}

Driver& Driver::instance() {
  static Driver* const driver = new Driver();
  return *driver;
}

Driver::Driver() : config_(config_from_environment()) {}

SimConfig Driver::config() const {
  std::lock_guard lock(config_mutex_);
  return config_;
}

int Driver::configure(const SimConfig& config) {
  std::lock_guard lock(config_mutex_);
  if (frozen_.load(std::memory_order_relaxed)) return SIM_ERR_ALREADY_INITIALIZED;
  if (!config_is_valid(config)) return SIM_ERR_INVALID_VALUE;
  config_ = config;
  config_.reserved = 0;
  return SIMPLER_OK;
}

void Driver::freeze() {
  if (frozen_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(config_mutex_);
  if (frozen_.load(std::memory_order_relaxed)) return;
  devices_.reserve(static_cast<std::size_t>(config_.device_count));
  for (int32_t id = 0; id < config_.device_count; ++id)
    devices_.push_back(std::make_unique<Device>(id, config_));
  frozen_.store(true, std::memory_order_release);
}

int Driver::device(int32_t id, Device** out) {
  freeze();
  if (id < 0 || static_cast<std::size_t>(id) >= devices_.size()) return SIM_ERR_INVALID_DEVICE;
  *out = devices_[static_cast<std::size_t>(id)].get();
  return SIMPLER_OK;
}

int Driver::current_device(Device** out) {
  if (t_current_device < 0) return SIM_ERR_NO_DEVICE;
  return device(t_current_device, out);
}

int Driver::set_current_device(int32_t id) {
  Device* device_ptr = nullptr;
  if (int status = device(id, &device_ptr); status != SIMPLER_OK) return status;
  t_current_device = id;
  return SIMPLER_OK;
}

int Driver::get_current_device(int32_t* out) const {
  if (t_current_device < 0) return SIM_ERR_NO_DEVICE;
  *out = t_current_device;
  return SIMPLER_OK;
}

int Driver::pointer_device(const void* ptr, std::size_t size, int32_t* out_device) const {
  if (!frozen_.load(std::memory_order_acquire)) return SIM_ERR_INVALID_POINTER;
  for (const auto& device : devices_) {
    if (!device->arena.contains(ptr)) continue;
    const int status = device->arena.check_range(ptr, size);
    if (status == SIMPLER_OK && out_device != nullptr) *out_device = device->id;
    return status;
  }
  return SIM_ERR_INVALID_POINTER;
}

int Driver::check_device_range(const void* ptr, std::size_t size) const {
  return pointer_device(ptr, size, nullptr);
}

int Driver::reset_device(int32_t id) {
  Device* device_ptr = nullptr;
  if (int status = device(id, &device_ptr); status != SIMPLER_OK) return status;
  // From a host function of one of the device's streams the reset would wait for itself.
  const Stream* executing = Stream::executing_on_this_thread();
  if (executing != nullptr && executing->device() == id) return SIM_ERR_BUSY;
  auto doomed = streams_.remove_if([&](const Stream& stream) { return stream.device() == id; });
  for (auto& stream : doomed) stream->close();
  doomed.clear();
  device_ptr->arena.release_all();
  return SIMPLER_OK;
}

}  // namespace simpler::sim
