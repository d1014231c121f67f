// A scheduler that runs the first part of a cluster task leaves the schedulers' awake
// budget meanwhile (another scheduler may take ready work), so when its part returns the
// budget may be full: it goes back to dispatching only when there is room, else it parks
// (cluster_dispatch.cpp rejoin_awake). Before, it re-entered unconditionally: one scheduler
// over the limit, one runnable thread more than hardware threads, until it next went idle.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/chip_state.h"
#include "engine/run_track.h"
#include "engine/scheduler.h"
#include "eventually.h"
#include "simpler/kernel/kernel_abi.h"

namespace simpler::rt::testing {
namespace {

std::atomic<bool> g_cube_running{false};
std::atomic<bool> g_cube_go{false};
std::atomic<bool> g_single_ran{false};

// The cluster task's kernel: the AIC part holds until the test lets it go, the AIV parts
// return at once.
void cluster_kernel(int64_t* args) {
  if (simpler_kernel_context(args)->core_type != SIMPLER_CORE_AIC) return;
  g_cube_running.store(true);
  while (!g_cube_go.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
}

void single_kernel(int64_t*) { g_single_ran.store(true); }

TEST(ClusterAwakeBudgetTest, ASchedulerBackFromAClusterPartWaitsForRoomInTheAwakeBudget) {
  ChipState chip;
  for (auto& queue : chip.ready) queue.reset(8);
  chip.init_cores(1);        // one cluster: 1 AIC, 2 AIV cores
  chip.clusters.init(1, 2);  // its helpers report as lanes 2..
  chip.max_awake = 1;        // room for one awake scheduler
  RunTrack run;
  run.first_id = 1;
  TaskSlot cluster_task, single_task;
  cluster_task.entry = cluster_kernel;
  cluster_task.core_type = SIMPLER_CORE_MIX;
  cluster_task.id = 1;
  cluster_task.run = &run;
  single_task.entry = single_kernel;
  single_task.core_type = SIMPLER_CORE_AIV;
  single_task.id = 2;
  single_task.run = &run;
  g_cube_running = false;
  g_cube_go = false;
  g_single_ran = false;

  Scheduler scheduler(chip, 1, 0);
  ASSERT_TRUE(chip.ready[SIMPLER_CORE_MIX].push(&cluster_task));
  std::thread thread([&] { scheduler.run(); });

  // The scheduler runs the AIC part itself, outside the budget: another scheduler (this
  // thread) takes the one awake slot, and single-core work is queued meanwhile.
  ASSERT_TRUE(eventually([] { return g_cube_running.load(); }));
  ASSERT_TRUE(eventually([&] { return chip.try_enter_awake(); }));
  ASSERT_TRUE(chip.ready[SIMPLER_CORE_AIV].push(&single_task));
  g_cube_go = true;
  ASSERT_TRUE(eventually([&] { return cluster_task.done_id.load() == 1; }));

  // Its part returned: with the budget full it parks, and neither runs the queued task nor
  // counts itself awake.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(chip.awake_schedulers(), 1) << "a scheduler re-entered a full awake budget";
  EXPECT_FALSE(g_single_ran.load()) << "a scheduler outside the awake budget ran a block";

  // Room again: it comes back and runs the queued task.
  chip.leave_awake();
  chip.wake_schedulers(1);
  EXPECT_TRUE(eventually([] { return g_single_ran.load(); }));
  EXPECT_TRUE(eventually([&] { return single_task.done_id.load() == 2; }));

  chip.shutdown.store(true, std::memory_order_release);
  chip.scheduler_parker.notify_all();
  thread.join();
  EXPECT_EQ(chip.awake_schedulers(), 0);
}

}  // namespace
}  // namespace simpler::rt::testing
