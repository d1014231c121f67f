// Shared helpers of the C entry points (sim_api_*.cpp). Include this first: it declares
// the C API with default visibility while everything else in the library stays hidden.
#pragma once

#pragma GCC visibility push(default)
#include "simpler/sim/sim_driver.h"
#pragma GCC visibility pop

#include <cstdint>
#include <cstring>
#include <new>

#include "driver.h"

namespace simpler::sim {

// No exception crosses the C ABI.
template <class Fn>
int guarded(Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return SIM_ERR_OUT_OF_MEMORY;
  } catch (...) {
    return PTO_RUNTIME_ERR_INTERNAL;
  }
}

// Every call of a named operation is counted first, whatever happens next.
inline Driver& counted(Operation op) {
  Driver& driver = Driver::instance();
  driver.stats().count_call(op);
  return driver;
}

// Runs fn(Device&) on device `id` once it is known to exist; else the reason it does not.
template <class Fn>
int on_device(Driver& driver, int32_t id, Fn&& fn) {
  Device* device = nullptr;
  if (int status = driver.device(id, &device); status != SIMPLER_OK) return status;
  return fn(*device);
}

// Runs fn(Device&) on the calling thread's current device (sim_set_device).
template <class Fn>
int on_current_device(Driver& driver, Fn&& fn) {
  Device* device = nullptr;
  if (int status = driver.current_device(&device); status != SIMPLER_OK) return status;
  return fn(*device);
}

inline uint64_t token_of(sim_stream_t stream) { return reinterpret_cast<uintptr_t>(stream); }
inline uint64_t token_of(sim_event_t event) { return reinterpret_cast<uintptr_t>(event); }
inline sim_stream_t stream_handle(uint64_t token) {
  return reinterpret_cast<sim_stream_t>(static_cast<uintptr_t>(token));
}
inline sim_event_t event_handle(uint64_t token) {
  return reinterpret_cast<sim_event_t>(static_cast<uintptr_t>(token));
}

// A C caller may pass any int as a SimMemcpyKind; its bytes are read without loading an
// out-of-range enum value (undefined in C++).
inline int raw_kind(const SimMemcpyKind& kind) {
  int raw = 0;
  static_assert(sizeof raw == sizeof kind);
  std::memcpy(&raw, &kind, sizeof raw);
  return raw;
}

// Arguments of a copy: a known kind, non-null ends, and the device side(s) inside one
// live allocation each. A zero-byte copy is valid and does nothing.
int validate_copy(const Driver& driver, const void* dst, const void* src, std::size_t size,
                  int kind);

}  // namespace simpler::sim
