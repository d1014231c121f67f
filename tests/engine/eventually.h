// Test helper: polls a condition until it holds or 10 s have passed (threads on a loaded
// machine may take long to get a CPU; a test must not hang on a condition that never holds).
#pragma once

#include <chrono>
#include <thread>

namespace simpler::rt::testing {

template <class Condition>
bool eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return false;
}

}  // namespace simpler::rt::testing
