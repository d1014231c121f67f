// The awake budget counts the orchestrating thread as the hardware thread that runs kernels
// beside the schedulers. Waiting for a task, it runs only what it finds; one that lost its
// CPU (it yielded to a scheduler on the same CPU and the OS did not move either) found
// nothing for milliseconds while one scheduler ran the ready work task by task and every
// release found the budget full (the fused prefill's slow mode, docs/performance.md
// section 7). A waiting orchestrator that has not looked for work for kStalledSpinNs no
// longer holds its place: a parked scheduler is woken into it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "engine/chip_state.h"
#include "engine/orchestrator.h"
#include "engine/run_track.h"
#include "engine_test_support.h"
#include "eventually.h"
#include "simpler/abi/status.h"
#include "simpler/kernel/kernel_abi.h"
#include "support/clock.h"
#include "test_orchestrator_sizes.h"

namespace simpler::rt::testing {
namespace {

std::atomic<bool> g_ran{false};
void note_kernel(int64_t*) { g_ran.store(true); }

TEST(StalledOrchestrator, OnlyAWaitingOrchestratorThatStoppedLookingIsStalled) {
  ChipState chip;
  const int64_t now = support::steady_now_ns();
  EXPECT_FALSE(chip.orchestrator_stalled(now)) << "0: not waiting (orchestrating, running, parked)";
  chip.orchestrator_looks(now);
  EXPECT_FALSE(chip.orchestrator_stalled(now + kStalledSpinNs - 1));
  EXPECT_TRUE(chip.orchestrator_stalled(now + kStalledSpinNs));
  chip.orchestrator_not_waiting();
  EXPECT_FALSE(chip.orchestrator_stalled(now + 1'000'000'000));
}

TEST(StalledOrchestrator, AStalledWaitingOrchestratorLeavesOnePlace) {
  ChipState chip;
  chip.max_awake = 1;
  chip.awake = 1;  // a working scheduler: not judged by the spinners' stamp
  EXPECT_FALSE(chip.room_beside(1));
  chip.orchestrator_seen_ns = support::steady_now_ns() - 1'000'000'000;
  EXPECT_TRUE(chip.room_beside(1));
  EXPECT_FALSE(chip.room_beside(2)) << "one place in its stead, not one per release";
}

// The wake-up itself, with a scheduler thread:
// StalledSpinnerTest.AReleaseWakesAParkedSchedulerInPlaceOfAStalledOrchestrator.

}  // namespace

// An orchestrator driven directly (no scheduler threads) whose one task cannot start: the
// test holds every AIV core. Waiting for it, the orchestrator stamps as it looks; once the
// task ran and the run finished, it no longer counts as waiting.
class StalledOrchestratorWait : public DirectOrchestratorTest {
 protected:
  void SetUp() override {
    set_up(16);
    add_inout_kernel(1, note_kernel);
    program_.func_name = "stalled_orchestrator_test";
    program_.orchestration = orchestration;
    g_x = x_->tensor({16});
  }
  static int orchestration(const ChipStorageTaskArgs* /*args*/, const SimplerOrchApi* api) {
    const SimplerTaskDesc d = inout_task(1, g_x);
    SimplerTaskResult r{};
    return api->submit(api->rt, &d, &r);
  }
  static inline ChipTensor g_x{};
};

TEST_F(StalledOrchestratorWait, AWaitingOrchestratorStampsAndStopsWhenTheRunEnds) {
  for (uint32_t i = 0; i < chip_.core_count[SIMPLER_CORE_AIV]; ++i)
    chip_.core_claimed[SIMPLER_CORE_AIV][i].store(kCoreBusy, std::memory_order_relaxed);
  g_ran = false;
  RunTrack* track = orch_->begin_run(program_, RunOptions{});
  std::thread orchestrating([&] {
    ChipStorageTaskArgs args{};
    orch_->run(args);
  });
  const bool stamped = eventually([&] {
    return chip_.orchestrator_seen_ns.load() != 0 &&
           !chip_.orchestrator_stalled(support::steady_now_ns());
  });
  for (uint32_t i = 0; i < chip_.core_count[SIMPLER_CORE_AIV]; ++i)
    chip_.core_claimed[SIMPLER_CORE_AIV][i].store(kCoreFree, std::memory_order_relaxed);
  orchestrating.join();
  EXPECT_TRUE(stamped) << "a waiting orchestrator never stamped orchestrator_seen_ns";
  EXPECT_EQ(track->status.code(), SIMPLER_OK) << track->status.message();
  EXPECT_TRUE(g_ran.load());
  EXPECT_EQ(chip_.orchestrator_seen_ns.load(), 0) << "still counted as waiting after the run";
}

}  // namespace simpler::rt::testing
