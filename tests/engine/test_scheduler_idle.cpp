// A scheduler that has nothing it can run spins within its bounded budget, counted as idle
// (ChipState::idle), and never loops hot. Ready work it cannot take (every core of the type
// claimed) used to send it straight back to the queue without a pause or a yield: it kept
// a hardware thread from the threads holding the cores (the cluster helpers; under
// SCHED_FIFO scene_bench's fused decode loop hung), and the orchestrator counted it as a
// taker for short blocks, which split a chain between the two threads.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine/chip_state.h"
#include "engine/scheduler.h"

namespace simpler::rt::testing {
namespace {

// Polls `condition` for up to 10 s (a loaded machine may not run the scheduler at once).
template <class Condition>
bool eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::yield();
  }
  return false;
}

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& queue : chip_.ready) queue.reset(8);
    chip_.init_cores(1);  // 1 AIC, 2 AIV cores
    chip_.max_awake = 1;
  }
  void TearDown() override {
    chip_.shutdown.store(true, std::memory_order_release);
    chip_.scheduler_parker.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void start() {
    thread_ = std::thread([this] { scheduler_.run(); });
  }

  ChipState chip_;
  Scheduler scheduler_{chip_, 1, 0};
  std::thread thread_;
};

TEST_F(SchedulerTest, ReadyWorkItCannotTakeLeavesItIdleNotWorkingUntilItParks) {
  TaskSlot task;  // never run: no AIV core is free
  for (uint32_t core = 0; core < chip_.core_count[SIMPLER_CORE_AIV]; ++core)
    chip_.core_claimed[SIMPLER_CORE_AIV][core].store(kCoreBusy, std::memory_order_relaxed);
  ASSERT_TRUE(chip_.ready[SIMPLER_CORE_AIV].push(&task));
  start();
  EXPECT_TRUE(eventually([&] {
    return chip_.awake_schedulers() == 1 && chip_.idle.load() == 1 &&
           chip_.working_schedulers() == 0;
  })) << "a scheduler facing ready work it cannot take never went through its bounded spin";
  // The work goes away (the scheduler cannot pop it: it claims a core first): it parks
  // within its spin budget, and the idle count goes with it.
  ASSERT_EQ(chip_.ready[SIMPLER_CORE_AIV].try_pop(), &task);
  EXPECT_TRUE(eventually([&] { return chip_.awake_schedulers() == 0 && chip_.idle.load() == 0; }));
}

// A scheduler left over the awake budget (it shrank under it: the orchestrating thread came
// back) leaves as soon as it runs out of work, instead of spinning out its budget beside
// the orchestrator: one runnable thread more than hardware threads meanwhile.
TEST(SchedulerOverBudgetTest, LeavesAtItsFirstIdleMomentNotAfterItsSpinBudget) {
  ChipState chip;
  for (auto& queue : chip.ready) queue.reset(8);
  chip.init_cores(1);
  chip.max_awake = 2;
  // A spin budget far beyond the wait below: only leaving early passes.
  Scheduler scheduler(chip, 1, 0, std::chrono::seconds(60));
  TaskSlot task;  // never run: no AIV core is free, so the scheduler spins idle
  for (uint32_t core = 0; core < chip.core_count[SIMPLER_CORE_AIV]; ++core)
    chip.core_claimed[SIMPLER_CORE_AIV][core].store(kCoreBusy, std::memory_order_relaxed);
  ASSERT_TRUE(chip.ready[SIMPLER_CORE_AIV].push(&task));
  std::thread thread([&] { scheduler.run(); });
  EXPECT_TRUE(eventually([&] { return chip.awake_schedulers() == 1 && chip.idle.load() == 1; }));
  chip.awake.fetch_add(1);  // another scheduler is awake, and the budget shrinks to one
  chip.max_awake = 1;
  EXPECT_TRUE(eventually([&] { return chip.awake_schedulers() == 1 && chip.idle.load() == 0; }))
      << "the scheduler over the budget kept spinning";
  chip.shutdown.store(true, std::memory_order_release);
  chip.scheduler_parker.notify_all();
  thread.join();
  EXPECT_EQ(chip.awake_schedulers(), 1) << "it gave its awake slot back twice";
  ASSERT_EQ(chip.ready[SIMPLER_CORE_AIV].try_pop(), &task);
}

TEST(SchedulerOverBudgetTest, OnlyTheSchedulersOverTheBudgetLeave) {
  ChipState chip;
  chip.max_awake = 1;
  chip.awake = 3;
  EXPECT_TRUE(chip.leave_if_over_budget());
  EXPECT_TRUE(chip.leave_if_over_budget());
  EXPECT_FALSE(chip.leave_if_over_budget()) << "the last awake scheduler within the budget left";
  EXPECT_EQ(chip.awake_schedulers(), 1);
}

}  // namespace
}  // namespace simpler::rt::testing
