// simpler runtime — the no-progress watchdog of a run (internal).
//
// Polled by the thread that waits for the run (the caller of Engine::execute). Progress
// is any change of a counter that grows with every finished kernel block and every
// orchestration API call; none for the timeout latches SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT,
// which makes the orchestrator give up and the schedulers skip what is left.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "chip_state.h"
#include "simpler/abi/status.h"

namespace simpler::rt {

class Watchdog {
 public:
  Watchdog(ChipState& chip, std::function<uint64_t()> progress)
      : chip_(chip), progress_(std::move(progress)) {}

  void arm(uint64_t timeout_ms) {
    timeout_ms_ = timeout_ms;
    last_progress_ = progress_();
    last_change_ = std::chrono::steady_clock::now();
  }

  void poll() {
    const uint64_t now_progress = progress_();
    const auto now = std::chrono::steady_clock::now();
    if (now_progress != last_progress_) {
      last_progress_ = now_progress;
      last_change_ = now;
      return;
    }
    if (now - last_change_ >= std::chrono::milliseconds(timeout_ms_) && !chip_.status.failed()) {
      chip_.fail(SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT,
                 "watchdog: no kernel finished and the orchestration made no runtime call for " +
                     std::to_string(timeout_ms_) +
                     " ms (watchdog_timeout_ms); a kernel may hang or be slower than the timeout");
    }
  }

  // How long a waiter may sleep before polling again.
  std::chrono::nanoseconds slice() const {
    const uint64_t ms = timeout_ms_ / 4;
    return std::chrono::milliseconds(ms < 1 ? 1 : (ms > 250 ? 250 : ms));
  }

 private:
  ChipState& chip_;
  std::function<uint64_t()> progress_;
  uint64_t timeout_ms_ = 0;
  uint64_t last_progress_ = 0;
  std::chrono::steady_clock::time_point last_change_{};
};

}  // namespace simpler::rt
