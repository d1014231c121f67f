// simpler runtime host — which context of this loaded build owns which device.
//
// Program mode: one owning context per device. Kernel mode: one live kernel context per
// device. The two registries are separate. The registry lives in the build's shared
// library (each loaded build has its own copy), which is exactly the scope of the rule.
#pragma once

#include <cstdint>

namespace simpler::rt::host {

enum class ClaimKind { Program, Kernel };

// Move-only token for one claimed device; releases the claim when destroyed.
class DeviceClaim {
 public:
  DeviceClaim() = default;
  // Returns an empty claim when `device` is already claimed for `kind`.
  static DeviceClaim try_take(ClaimKind kind, int32_t device);
  ~DeviceClaim() { release(); }
  DeviceClaim(DeviceClaim&& other) noexcept;
  DeviceClaim& operator=(DeviceClaim&& other) noexcept;
  DeviceClaim(const DeviceClaim&) = delete;
  DeviceClaim& operator=(const DeviceClaim&) = delete;

  bool held() const { return device_ >= 0; }
  void release();

 private:
  DeviceClaim(ClaimKind kind, int32_t device) : kind_(kind), device_(device) {}
  ClaimKind kind_ = ClaimKind::Program;
  int32_t device_ = -1;
};

}  // namespace simpler::rt::host
