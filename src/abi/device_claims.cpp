#include "abi/device_claims.h"

#include <mutex>
#include <set>
#include <utility>

namespace simpler::rt::host {
namespace {

struct Registry {
  std::mutex mutex;
  std::set<std::pair<ClaimKind, int32_t>> claimed;
};

// Per loaded build (the static library is linked privately into each build).
Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

DeviceClaim DeviceClaim::try_take(ClaimKind kind, int32_t device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.claimed.insert({kind, device}).second) return DeviceClaim();
  return DeviceClaim(kind, device);
}

DeviceClaim::DeviceClaim(DeviceClaim&& other) noexcept
    : kind_(other.kind_), device_(std::exchange(other.device_, -1)) {}

DeviceClaim& DeviceClaim::operator=(DeviceClaim&& other) noexcept {
  if (this != &other) {
    release();
    kind_ = other.kind_;
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

void DeviceClaim::release() {
  if (device_ < 0) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.claimed.erase({kind_, device_});
  device_ = -1;
}

}  // namespace simpler::rt::host
