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

int Driver::pointer_device(const void* ptr, std::size_t size, int32_t* out_device,
                           bool accept_free_pending) const {
  if (!frozen_.load(std::memory_order_acquire)) return SIM_ERR_INVALID_POINTER;
  for (const auto& device : devices_) {
    if (!device->arena.contains(ptr)) continue;
    const int status = device->arena.check_range(ptr, size, accept_free_pending);
    if (status == SIMPLER_OK && out_device != nullptr) *out_device = device->id;
    return status;
  }
  return SIM_ERR_INVALID_POINTER;
}

int Driver::pointer_allocation(const void* ptr, SimAllocation* out) const {
  if (!frozen_.load(std::memory_order_acquire)) return SIM_ERR_INVALID_POINTER;
  for (const auto& device : devices_) {
    if (!device->arena.contains(ptr)) continue;
    uint64_t base = 0;
    uint64_t size = 0;
    bool pending = false;
    if (int status = device->arena.find(ptr, &base, &size, &pending); status != SIMPLER_OK)
      return status;
    out->base = base;
    out->size = size;
    out->device = device->id;
    out->flags = pending ? SIM_ALLOCATION_FREE_PENDING : 0u;
    return SIMPLER_OK;
  }
  return SIM_ERR_INVALID_POINTER;
}

int Driver::free_ordered(Device& device, void* ptr) {
  sweep_pending_frees();
  PendingFree pending{&device, ptr, {}};
  streams_.for_each([&](const std::shared_ptr<Stream>& stream) {
    if (const uint64_t target = stream->unretired_target(); target != 0)
      pending.waits.emplace_back(stream, target);
  });
  if (pending.waits.empty()) return device.arena.release(ptr);
  std::lock_guard lock(pending_mutex_);
  if (int status = device.arena.mark_free_pending(ptr); status != SIMPLER_OK) return status;
  pending_frees_.push_back(std::move(pending));
  pending_count_.store(pending_frees_.size(), std::memory_order_release);
  return SIMPLER_OK;
}

void Driver::sweep_pending_frees() {
  if (pending_count_.load(std::memory_order_acquire) == 0) return;
  std::vector<std::shared_ptr<Stream>> dropped;  // destroyed outside the lock
  std::lock_guard lock(pending_mutex_);
  auto retired = [](const PendingFree& p) {
    for (const auto& [stream, target] : p.waits) {
      if (stream->retired() < target) return false;
    }
    return true;
  };
  for (auto it = pending_frees_.begin(); it != pending_frees_.end();) {
    if (!retired(*it)) {
      ++it;
      continue;
    }
    (void)it->device->arena.release(it->ptr, /*pending=*/true);
    for (auto& wait : it->waits) dropped.push_back(std::move(wait.first));
    it = pending_frees_.erase(it);
  }
  pending_count_.store(pending_frees_.size(), std::memory_order_release);
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
  std::vector<PendingFree> forgotten;  // their streams are released outside the lock
  {
    std::lock_guard lock(pending_mutex_);
    for (auto it = pending_frees_.begin(); it != pending_frees_.end();) {
      if (it->device == device_ptr) {
        forgotten.push_back(std::move(*it));
        it = pending_frees_.erase(it);
      } else {
        ++it;
      }
    }
    pending_count_.store(pending_frees_.size(), std::memory_order_release);
    device_ptr->arena.release_all();  // under the lock: no sweep releases into it meanwhile
    device_ptr->reset_epoch.fetch_add(1, std::memory_order_acq_rel);
  }
  return SIMPLER_OK;
}

}  // namespace simpler::sim
