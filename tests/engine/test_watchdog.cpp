// The watchdog's blame: it fires only once user code has itself gone the timeout without
// progress (a kernel block that has run that long, or the orchestration silent that long
// since it was entered). Time the runtime's own threads wait to be scheduled (a loaded
// machine: the orchestration not started yet, a ready block not picked up) is nobody's
// stall: blaming the orchestration for it was wrong (test_faults' kernel-mode watchdog
// test, once at load 40).
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "engine/chip_state.h"
#include "engine/watchdog.h"
#include "support/clock.h"

namespace simpler::rt {
namespace {

constexpr uint64_t kTimeoutMs = 20;
constexpr int64_t kMs = 1000000;

// A chip whose progress counter never moves, with the watchdog's timeout already spent.
struct StalledChip {
  ChipState chip;
  Watchdog dog{chip, [] { return uint64_t{7}; }};
  StalledChip() {
    chip.init_cores(1);
    chip.first_task = 100;
    dog.arm(kTimeoutMs, "my_orch");
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * kTimeoutMs));
  }
};

TEST(WatchdogBlame, NothingOfTheUsersRunningIsNotAStall) {
  StalledChip s;  // the orchestration not entered yet, no kernel running
  EXPECT_FALSE(s.dog.poll());
  s.chip.running.orchestration_enter(support::steady_now_ns() - 10 * kTimeoutMs * kMs);
  s.chip.running.orchestration_leave();  // returned: its blocks wait for a core
  EXPECT_FALSE(s.dog.poll());
}

TEST(WatchdogBlame, AKernelIsBlamedOnceItHasRunTheTimeout) {
  StalledChip s;
  const int64_t now = support::steady_now_ns();
  s.chip.running.enter(SIMPLER_CORE_AIV, 1, 101, 5, 0, now);  // started late, just now
  EXPECT_FALSE(s.dog.poll());
  s.chip.running.enter(SIMPLER_CORE_AIV, 1, 101, 5, 0, now - 2 * kTimeoutMs * kMs);
  ASSERT_TRUE(s.dog.poll());
}

TEST(WatchdogBlame, TheKernelMessageNamesKernelTaskAndCore) {
  StalledChip s;
  s.chip.running.orchestration_enter(support::steady_now_ns() - 10 * kTimeoutMs * kMs);
  s.chip.running.enter(SIMPLER_CORE_AIV, 1, 101, 5, 0,
                       support::steady_now_ns() - 2 * kTimeoutMs * kMs);
  RunTrack& run = s.chip.runs[0];
  run.busy.store(true);
  ASSERT_TRUE(s.dog.poll());
  const std::string msg = run.status.message();
  EXPECT_EQ(msg.rfind("watchdog: kernel func_id 5 in task 1 (the 2nd", 0), 0u) << msg;
  EXPECT_NE(msg.find("AIV core 1"), std::string::npos) << msg;
}

TEST(WatchdogBlame, TheOrchestrationIsBlamedForItsOwnSilenceOnly) {
  StalledChip s;
  s.chip.running.orchestration_enter(support::steady_now_ns());  // entered late, just now
  EXPECT_FALSE(s.dog.poll());
  s.chip.running.orchestration_enter(support::steady_now_ns() - 2 * kTimeoutMs * kMs);
  RunTrack& run = s.chip.runs[0];
  run.busy.store(true);
  ASSERT_TRUE(s.dog.poll());
  const std::string msg = run.status.message();
  EXPECT_EQ(msg.rfind("watchdog: the orchestration 'my_orch' made no runtime call", 0), 0u) << msg;
}

}  // namespace
}  // namespace simpler::rt
