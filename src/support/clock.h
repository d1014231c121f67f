// The monotonic clock as an integer, for timestamps that cross threads in atomics.
#pragma once

#include <chrono>
#include <cstdint>

namespace simpler::support {

inline int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace simpler::support
