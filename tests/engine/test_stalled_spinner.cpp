// An idle scheduler spins for work counted as awake: it holds one of the awake budget's
// hardware threads. One that lost its CPU (it yielded to the orchestrating thread on the
// same CPU, and the OS did not move either) holds the budget without running: every
// release found the budget full and woke nobody, and the fused prefill ran one task at a
// time on the orchestrating thread with ready work queued (docs/performance.md section 7,
// "A spinner without a CPU"). A spinner that has not looked for work for kStalledSpinNs
// no longer counts against the budget: a parked scheduler is woken in its place.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "engine/chip_state.h"
#include "engine/run_track.h"
#include "engine/scheduler.h"
#include "eventually.h"
#include "simpler/kernel/kernel_abi.h"
#include "support/clock.h"

namespace simpler::rt::testing {
namespace {

std::atomic<bool> g_running{false};
std::atomic<bool> g_go{false};

// Holds its core until the test lets it go.
void held_kernel(int64_t*) {
  g_running.store(true);
  while (!g_go.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
}

class StalledSpinnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& queue : chip_.ready) queue.reset(8);
    chip_.init_cores(1);  // 1 AIC, 2 AIV cores
    chip_.max_awake = 1;
    run_.first_id = 1;
    task_.entry = held_kernel;
    task_.core_type = SIMPLER_CORE_AIC;
    task_.id = 1;
    task_.run = &run_;
    g_running = false;
    g_go = false;
  }
  void TearDown() override {
    g_go = true;
    chip_.shutdown.store(true, std::memory_order_release);
    chip_.scheduler_parker.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // Another scheduler is awake and idle, and last looked for work `ago_ns` ago; it never
  // runs in these tests (it stands for one whose thread has no CPU).
  void other_spinner(int64_t ago_ns) {
    chip_.awake = 1;
    chip_.idle = 1;
    chip_.spin_seen_ns = support::steady_now_ns() - ago_ns;
  }

  // A scheduler thread (joined in TearDown, before the scheduler goes).
  void start(std::chrono::nanoseconds spin_budget = kSchedulerSpinBudget) {
    scheduler_ = std::make_unique<Scheduler>(chip_, 1, 0, spin_budget);
    thread_ = std::thread([this] { scheduler_->run(); });
  }

  ChipState chip_;
  RunTrack run_;
  TaskSlot task_;
  std::unique_ptr<Scheduler> scheduler_;
  std::thread thread_;
};

TEST_F(StalledSpinnerTest, AReleaseWakesAParkedSchedulerInPlaceOfASpinnerWithoutACpu) {
  other_spinner(1'000'000'000);
  start();
  // Parked (it may have spun first, beside the stalled one, and stamped meanwhile: the
  // stamp is made stale again once it sleeps).
  ASSERT_TRUE(eventually([&] { return chip_.scheduler_parker.has_waiters_after_publish(); }));
  chip_.spin_seen_ns = support::steady_now_ns() - 1'000'000'000;
  // Released as a completion releases it: queued, then a wake-up for it.
  ASSERT_TRUE(chip_.ready[SIMPLER_CORE_AIC].push(&task_));
  chip_.wake_schedulers(1);
  EXPECT_TRUE(eventually([] { return g_running.load(); }))
      << "ready work waited behind a spinner that never looked for it";
  // Bounded: one scheduler in place of the stalled one, not one per release.
  EXPECT_EQ(chip_.awake_schedulers(), 2);
  EXPECT_FALSE(chip_.room_beside(chip_.awake_schedulers()));
  // The spinner gets its CPU back over the budget: it is the one that leaves.
  EXPECT_TRUE(chip_.leave_if_over_budget());
  g_go = true;
  EXPECT_TRUE(eventually([&] { return task_.done_id.load() == 1; }));
}

// The same for the orchestrating thread waiting without a CPU (test_stalled_orchestrator.cpp):
// the one awake scheduler works elsewhere, and the orchestrator has not looked for a second.
TEST_F(StalledSpinnerTest, AReleaseWakesAParkedSchedulerInPlaceOfAStalledOrchestrator) {
  chip_.awake = 1;
  start();
  ASSERT_TRUE(eventually([&] { return chip_.scheduler_parker.has_waiters_after_publish(); }));
  chip_.orchestrator_seen_ns = support::steady_now_ns() - 1'000'000'000;
  ASSERT_TRUE(chip_.ready[SIMPLER_CORE_AIC].push(&task_));
  chip_.wake_schedulers(1);
  EXPECT_TRUE(eventually([] { return g_running.load(); }))
      << "ready work waited behind an orchestrator that never looked for it";
  g_go = true;
  EXPECT_TRUE(eventually([&] { return task_.done_id.load() == 1; }));
}

TEST_F(StalledSpinnerTest, ASpinnerThatLooksForWorkKeepsTheBudget) {
  // Judged at fixed times: the clock moves on while the test runs.
  other_spinner(0);
  const int64_t seen = chip_.spin_seen_ns.load();
  EXPECT_FALSE(chip_.spinners_stalled(seen + kStalledSpinNs - 1));
  EXPECT_TRUE(chip_.spinners_stalled(seen + kStalledSpinNs));
  chip_.idle = 0;  // a working scheduler is not judged by the spinners' stamp
  EXPECT_FALSE(chip_.spinners_stalled(seen + 1'000'000'000));
  EXPECT_FALSE(chip_.room_beside(1));
  EXPECT_TRUE(chip_.room_beside(0));
}

TEST_F(StalledSpinnerTest, AnIdleSchedulerStampsWhenItLooksForWork) {
  // Ready work it cannot take (its one core is claimed) keeps it spinning, idle.
  chip_.core_claimed[SIMPLER_CORE_AIC][0].store(kCoreBusy, std::memory_order_relaxed);
  ASSERT_TRUE(chip_.ready[SIMPLER_CORE_AIC].push(&task_));
  chip_.spin_seen_ns = 0;
  start(std::chrono::seconds(60));
  EXPECT_TRUE(eventually([&] {
    return chip_.idle.load() == 1 && !chip_.spinners_stalled(support::steady_now_ns());
  })) << "a spinning scheduler never stamped spin_seen_ns";
  chip_.core_claimed[SIMPLER_CORE_AIC][0].store(kCoreFree, std::memory_order_relaxed);
  EXPECT_TRUE(eventually([] { return g_running.load(); }));
}

}  // namespace
}  // namespace simpler::rt::testing
