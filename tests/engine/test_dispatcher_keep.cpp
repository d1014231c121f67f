// Dispatcher::run_now with `keep`: the orchestrating lane keeps its core claimed between
// direct runs (no claim and release per task). The core stays busy to everyone else, a
// cluster reservation that marked it gets it at the next direct run, and let_go frees it.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/block_runner.h"
#include "engine/chip_state.h"
#include "engine/dispatcher.h"
#include "engine/observer.h"

namespace simpler::rt::testing {
namespace {

thread_local uint32_t t_core_of_last_block = ~0u;
thread_local const int64_t* t_args_of_last_block = nullptr;

void record_core(int64_t* args) {
  t_core_of_last_block = simpler_kernel_context(args)->core_id;
  t_args_of_last_block = args;
}

class DispatcherKeepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chip_.init_cores(1);  // AIC core 0, AIV cores 0 and 1
  }
  // A single-block AIV task, made ready by this thread (what run_now is for).
  TaskSlot& task(uint64_t id) {
    TaskSlot& t = slots_[id % 4];
    t.entry = record_core;
    t.args = nullptr;
    t.arg_count = 0;
    t.block_num = 1;
    t.core_type = SIMPLER_CORE_AIV;
    t.id = id;
    t.run = &run_;
    t.fanout.store(nullptr, std::memory_order_relaxed);
    t.done_id.store(0, std::memory_order_relaxed);
    return t;
  }
  uint32_t word(uint32_t core) {
    return chip_.core_claimed[SIMPLER_CORE_AIV][core].load(std::memory_order_relaxed);
  }

  ChipState chip_;
  RunTrack run_;
  TaskSlot slots_[4];
};

TEST_F(DispatcherKeepTest, AKeptCoreStaysBusyAndRunsTheNextDirectBlock) {
  Dispatcher lane(chip_, 0, {0, 1});
  ASSERT_TRUE(lane.run_now(task(1), /*keep=*/true));
  const uint32_t core = t_core_of_last_block;
  EXPECT_EQ(slots_[1].done_id.load(), 1u);  // completed
  EXPECT_EQ(word(core), kCoreBusy) << "a kept core must look busy to every other lane";
  EXPECT_FALSE(chip_.claim_core(SIMPLER_CORE_AIV, core));
  ASSERT_TRUE(lane.run_now(task(2), /*keep=*/true));
  EXPECT_EQ(t_core_of_last_block, core);
  EXPECT_EQ(slots_[2].done_id.load(), 2u);
  lane.let_go();
  EXPECT_EQ(word(core), kCoreFree);
  lane.let_go();  // nothing kept: no second release
  EXPECT_EQ(word(core), kCoreFree);
}

TEST_F(DispatcherKeepTest, WithoutKeepTheCoreIsFreedAfterTheBlock) {
  Dispatcher lane(chip_, 0, {0, 1});
  ASSERT_TRUE(lane.run_now(task(1), /*keep=*/false));
  EXPECT_EQ(word(t_core_of_last_block), kCoreFree);
}

// A cluster reservation marks a busy core (kCoreBusyReserved) and waits for its release.
// The lane's next direct run must hand the kept core over (release: -> kCoreHeld, one less
// missing) and run on another core, never on the reserved one.
TEST_F(DispatcherKeepTest, AReservedKeptCoreIsHandedOverAtTheNextDirectRun) {
  Dispatcher lane(chip_, 0, {0, 1});
  ASSERT_TRUE(lane.run_now(task(1), /*keep=*/true));
  const uint32_t kept = t_core_of_last_block;
  uint32_t busy = kCoreBusy;
  ASSERT_TRUE(
      chip_.core_claimed[SIMPLER_CORE_AIV][kept].compare_exchange_strong(busy, kCoreBusyReserved));
  chip_.clusters.missing.store(2);  // another core still missing: nothing starts here
  ASSERT_TRUE(lane.run_now(task(2), /*keep=*/true));
  EXPECT_NE(t_core_of_last_block, kept);
  EXPECT_EQ(word(kept), kCoreHeld);
  EXPECT_EQ(chip_.clusters.missing.load(), 1);
  lane.let_go();
  EXPECT_EQ(word(t_core_of_last_block), kCoreFree);
  EXPECT_EQ(word(kept), kCoreHeld);  // the reservation's now, not the lane's
}

// run_alone (the immediate run) takes the kept core inline, without a claim: the same core,
// still busy, and the argument vector the caller built (argv + 1) is what the kernel gets.
TEST_F(DispatcherKeepTest, RunAloneRunsOnTheKeptCoreWithTheCallersArguments) {
  Dispatcher lane(chip_, 0, {0, 1});
  int64_t argv[2] = {0, 0};
  ASSERT_TRUE(lane.run_alone(task(1), argv, /*keep=*/true));
  const uint32_t core = t_core_of_last_block;
  EXPECT_EQ(word(core), kCoreBusy);
  EXPECT_EQ(t_args_of_last_block, argv + 1) << "the kernel must get the caller's vector";
  ASSERT_TRUE(lane.run_alone(task(2), argv, /*keep=*/true));
  EXPECT_EQ(t_core_of_last_block, core);
  EXPECT_EQ(slots_[2].done_id.load(), 0u) << "run_alone completes nothing";
  ASSERT_TRUE(lane.run_alone(task(3), argv, /*keep=*/false));
  EXPECT_EQ(t_core_of_last_block, core);
  EXPECT_EQ(word(core), kCoreFree) << "without keep the core is freed after the block";
}

// The same hand-over as run_now's when a reservation marked the kept core: the inline path
// must not run on it.
TEST_F(DispatcherKeepTest, RunAloneHandsAReservedKeptCoreOver) {
  Dispatcher lane(chip_, 0, {0, 1});
  int64_t argv[2] = {0, 0};
  ASSERT_TRUE(lane.run_alone(task(1), argv, /*keep=*/true));
  const uint32_t kept = t_core_of_last_block;
  uint32_t busy = kCoreBusy;
  ASSERT_TRUE(
      chip_.core_claimed[SIMPLER_CORE_AIV][kept].compare_exchange_strong(busy, kCoreBusyReserved));
  chip_.clusters.missing.store(2);  // another core still missing: nothing starts here
  ASSERT_TRUE(lane.run_alone(task(2), argv, /*keep=*/true));
  EXPECT_NE(t_core_of_last_block, kept);
  EXPECT_EQ(word(kept), kCoreHeld);
  EXPECT_EQ(chip_.clusters.missing.load(), 1);
  lane.let_go();
  EXPECT_EQ(word(t_core_of_last_block), kCoreFree);
}

// Records every block's view at entry and exit, with its lane.
class ViewRecorder : public RunObserver {
 public:
  void set_up(uint32_t) override {}
  void on_entry(uint32_t lane, const BlockView& b) override { entries.push_back({lane, b}); }
  void on_exit(uint32_t lane, const BlockView& b) override { exits.push_back({lane, b}); }
  void on_task(const TaskView&) override {}
  void on_dependency(uint64_t, uint64_t) override {}
  struct Seen {
    uint32_t lane;
    BlockView view;
  };
  std::vector<Seen> entries, exits;
};

// An observed block, run inline on the kept core: the observer sees it at entry and exit
// on this lane, named as the user numbers it (its index in the run), with its kernel,
// block and core (the view is built only when observed: run_block_in_place).
TEST_F(DispatcherKeepTest, AnObserverSeesTheInlineBlockAtEntryAndExit) {
  Dispatcher lane(chip_, /*lane=*/0, {0, 1});
  int64_t argv[2] = {0, 0};
  ASSERT_TRUE(lane.run_alone(task(1), argv, /*keep=*/true));  // keeps a core: inline next
  ViewRecorder recorder;
  chip_.observer.store(&recorder);
  run_.first_id = 5;
  TaskSlot& observed = task(7);
  observed.func_id = 3;
  ASSERT_TRUE(lane.run_alone(observed, argv, /*keep=*/true));
  chip_.observer.store(nullptr);
  ASSERT_EQ(recorder.entries.size(), 1u);
  ASSERT_EQ(recorder.exits.size(), 1u);
  for (const auto& seen : {recorder.entries[0], recorder.exits[0]}) {
    EXPECT_EQ(seen.lane, 0u);
    EXPECT_EQ(seen.view.task_id, 2u);  // 7 - first_id
    EXPECT_EQ(seen.view.func_id, 3);
    EXPECT_EQ(seen.view.block_idx, 0u);
    EXPECT_EQ(seen.view.core_type, static_cast<uint32_t>(SIMPLER_CORE_AIV));
    EXPECT_EQ(seen.view.core_id, t_core_of_last_block);
  }
}

}  // namespace
}  // namespace simpler::rt::testing
