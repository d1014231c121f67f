// ProgramRun's completion (src/abi/program_run.h): settle() reports the one transition to
// done and leaves the wake-up to its caller, who notifies after unlocking (a waiter woken
// under the lock would block on it and be woken twice).
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "abi/program_run.h"

namespace simpler::rt::host {
namespace {

TEST(ProgramRunSettle, DoneOnlyOnceBothTheStatusAndTheJobsCleanupAreIn) {
  ProgramRun run;
  std::lock_guard<std::mutex> lock(run.mutex);
  EXPECT_FALSE(run.settle());
  run.completed = true;
  EXPECT_FALSE(run.settle());  // the job's cleanup has not run
  run.job_finished = true;
  EXPECT_TRUE(run.settle());
  EXPECT_TRUE(run.done);
  EXPECT_FALSE(run.settle());  // reported once: one notify
}

TEST(ProgramRunSettle, AWaiterWakesWhenTheCallerNotifiesAfterUnlocking) {
  ProgramRun run;
  std::thread waiter([&] { EXPECT_TRUE(run.wait_done(-1)); });
  bool notify = false;
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    run.completed = run.job_finished = true;
    notify = run.settle();
  }
  ASSERT_TRUE(notify);
  run.finished.notify_all();
  waiter.join();
  EXPECT_TRUE(run.wait_done(0));
}

}  // namespace
}  // namespace simpler::rt::host
