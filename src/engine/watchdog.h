// simpler runtime — the no-progress watchdog of a run (internal).
//
// Off unless the run's watchdog_timeout_ms is nonzero (there is no default timeout: a
// timeout abandons the engine, so it must be asked for). Polled by the thread that waits
// for the run, which runs no kernel and no orchestration itself (run_thread.h): a kernel
// that never returns cannot stop the watchdog. Progress is any change of a counter that
// grows with every finished kernel block and every orchestration API call. None for the
// timeout fires only once some user code has itself run that long: the block that has run
// longest (named by task as the user numbers it, kernel func_id, core), else the
// orchestration, silent since it was entered or its last call. While neither is the case
// nothing of the user's is stuck (the runtime's own threads wait to be scheduled on a
// loaded machine): no blame, the watchdog keeps looking.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "block_runner.h"
#include "chip_state.h"
#include "simpler/abi/status.h"

namespace simpler::rt {

class Watchdog {
 public:
  Watchdog(ChipState& chip, std::function<uint64_t()> progress)
      : chip_(chip), progress_(std::move(progress)) {}

  void arm(uint64_t timeout_ms, std::string orchestration) {
    timeout_ms_ = timeout_ms;
    orchestration_ = std::move(orchestration);
    last_progress_ = progress_();
    last_change_ = std::chrono::steady_clock::now();
  }

  // True when the timeout expired without progress (the error is latched).
  bool poll() {
    const uint64_t now_progress = progress_();
    const auto now = std::chrono::steady_clock::now();
    if (now_progress != last_progress_) {
      last_progress_ = now_progress;
      last_change_ = now;
      return false;
    }
    if (now - last_change_ < std::chrono::milliseconds(timeout_ms_)) return false;
    std::string stall = describe_stall(now);
    if (stall.empty()) return false;
    chip_.fail_all(SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT, stall);
    return true;
  }

  // How long the waiter may sleep before polling again.
  std::chrono::nanoseconds slice() const {
    const uint64_t ms = timeout_ms_ / 8;
    return std::chrono::milliseconds(ms < 1 ? 1 : (ms > 100 ? 100 : ms));
  }

 private:
  // The user code stuck for the timeout, described; "" when none is.
  std::string describe_stall(std::chrono::steady_clock::time_point now) const {
    const std::string limit = " (watchdog_timeout_ms=" + std::to_string(timeout_ms_) + ")";
    const std::string after =
        "; the run was abandoned and the context is now failed: close it and create a new one";
    const int64_t now_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    // The block that has run longest is the one that holds the run up.
    const RunningBlock* oldest = nullptr;
    uint32_t oldest_type = 0;
    uint32_t oldest_core = 0;
    for (uint32_t type = 0; type < 2; ++type) {
      for (uint32_t core = 0; core < chip_.running.count[type]; ++core) {
        const RunningBlock& b = chip_.running.cores[type][core];
        if (b.task_id.load(std::memory_order_acquire) == 0) continue;
        if (oldest == nullptr || b.start_ns.load(std::memory_order_relaxed) <
                                     oldest->start_ns.load(std::memory_order_relaxed)) {
          oldest = &b;
          oldest_type = type;
          oldest_core = core;
        }
      }
    }
    const int64_t timeout_ns = static_cast<int64_t>(timeout_ms_) * 1000000;
    if (oldest == nullptr ||
        now_ns - oldest->start_ns.load(std::memory_order_relaxed) < timeout_ns) {
      const int64_t entered = chip_.running.orchestration_since_ns.load(std::memory_order_acquire);
      const int64_t last_call =
          std::chrono::duration_cast<std::chrono::nanoseconds>(last_change_.time_since_epoch())
              .count();
      if (entered == 0 || now_ns - std::max(entered, last_call) < timeout_ns) return {};
      return "watchdog: the orchestration '" + orchestration_ +
             "' made no runtime call and no kernel finished for " + std::to_string(timeout_ms_) +
             " ms" + limit + after;
    }
    const int64_t ran_ms = (now_ns - oldest->start_ns.load(std::memory_order_relaxed)) / 1000000;
    return "watchdog: kernel func_id " + std::to_string(oldest->func_id.load()) + " in " +
           task_name(chip_, oldest->task_id.load()) + ", block " +
           std::to_string(oldest->block_idx.load()) + ", has run on " +
           (oldest_type == SIMPLER_CORE_AIC ? "AIC" : "AIV") + " core " +
           std::to_string(oldest_core) + " for " + std::to_string(ran_ms) +
           " ms without returning" + limit + after;
  }

  ChipState& chip_;
  std::function<uint64_t()> progress_;
  uint64_t timeout_ms_ = 0;
  std::string orchestration_;
  uint64_t last_progress_ = 0;
  std::chrono::steady_clock::time_point last_change_{};
};

}  // namespace simpler::rt
