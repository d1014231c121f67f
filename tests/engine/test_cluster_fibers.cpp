// A one-cluster task started by a scheduler, with no helper awake to take its parts, runs
// them as fibers of that scheduler (cluster_fibers.h): no helper thread, no wake-up, and
// the hand-offs through flags and barrier work as between threads. What must hold on a
// fiber as on a thread: a fault in a part is caught by that part's guard (fiber.h keeps
// each fiber's recovery chain its own) and names the part, the engine is poisoned and the
// waiting partner released; a part that hangs is on its core for the watchdog; a stack
// overflow in a part is a caught fault, not another part's stack.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cfenv>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "engine/chip_state.h"
#include "engine/cluster_dispatch.h"
#include "engine/dispatcher.h"
#include "engine/fault_guard.h"
#include "engine/fiber.h"
#include "engine/observer.h"
#include "engine/run_track.h"
#include "engine/scheduler.h"
#include "eventually.h"
#include "simpler/abi/status.h"
#include "simpler/kernel/kernel_abi.h"

namespace simpler::rt::testing {
namespace {

int* volatile g_null = nullptr;
__attribute__((no_sanitize("undefined"))) void store_through_null() { *g_null = 1; }

// ---- the engine: one scheduler, one cluster --------------------------------------------

std::atomic<pthread_t> g_part_thread[3];
std::atomic<float> g_seen[3];
std::atomic<int> g_wait_status[3];
std::atomic<bool> g_hang{false};
std::atomic<bool> g_release{false};
std::atomic<bool> g_crash_aiv1{false};

uint32_t part_of(const SimplerKernelContext* c) {
  return c->core_type == SIMPLER_CORE_AIC ? 0 : 1 + c->cluster->aiv_idx;
}

// The AIC part hands a tile to each AIV part (flag 0, twice); each adds its index and
// hands it back (flags 1, 2); all meet at a barrier. Optionally the AIC part first hangs
// until released, or AIV part 1 crashes instead of answering.
void exchange_kernel(int64_t* args) {
  const SimplerKernelContext* c = simpler_kernel_context(args);
  const SimplerClusterOps* ops = c->cluster;
  auto* tile = static_cast<float*>(ops->buffer);
  const uint32_t part = part_of(c);
  g_part_thread[part].store(pthread_self());
  if (part == 0) {
    while (g_hang.load() && !g_release.load())
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    tile[0] = 40.0f;
    ops->set_flag(ops->cluster, 0);
    ops->set_flag(ops->cluster, 0);
    int status = ops->wait_flag(ops->cluster, 1);
    if (status == 0) status = ops->wait_flag(ops->cluster, 2);
    g_wait_status[0].store(status);
    if (status != 0) return;
    g_seen[0].store(tile[1] + tile[2]);
  } else {
    const int status = ops->wait_flag(ops->cluster, 0);
    g_wait_status[part].store(status);
    if (status != 0) return;
    if (part == 2 && g_crash_aiv1.load()) store_through_null();
    g_seen[part].store(tile[0]);
    tile[part] = tile[0] + static_cast<float>(part);
    ops->set_flag(ops->cluster, part);
  }
  ops->barrier(ops->cluster);
}

class ClusterFiberTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& queue : chip_.ready) queue.reset(8);
    chip_.init_cores(1);        // one cluster: 1 AIC, 2 AIV cores
    chip_.clusters.init(1, 2);  // its helpers report as lanes 2..
    chip_.max_awake = 1;
    run_.first_id = 1;
    task_.entry = exchange_kernel;
    task_.core_type = SIMPLER_CORE_MIX;
    task_.block_num = 1;
    task_.id = 1;
    task_.run = &run_;
    for (int i = 0; i < 3; ++i) {
      g_part_thread[i].store(pthread_t{});
      g_seen[i].store(0.0f);
      g_wait_status[i].store(-1);
    }
    g_hang = false;
    g_release = false;
    g_crash_aiv1 = false;
  }
  // Runs the task on one scheduler thread; the scheduler's thread.
  pthread_t run_task(const std::function<void()>& meanwhile = [] {}) {
    Scheduler scheduler(chip_, 1, 0);
    EXPECT_TRUE(chip_.ready[SIMPLER_CORE_MIX].push(&task_));
    std::atomic<pthread_t> self{};
    std::thread thread([&] {
      self.store(pthread_self());
      scheduler.run();
    });
    meanwhile();
    EXPECT_TRUE(eventually([&] { return task_.done_id.load() == 1; }));
    chip_.shutdown.store(true, std::memory_order_release);
    chip_.scheduler_parker.notify_all();
    thread.join();
    return self.load();
  }

  ChipState chip_;
  RunTrack run_;
  TaskSlot task_;
};

TEST_F(ClusterFiberTest, PartsRunAsFibersOfTheStartingSchedulerAndHandTilesOver) {
  const pthread_t scheduler = run_task();
  ASSERT_FALSE(run_.status.failed()) << run_.status.message();
  for (int part = 0; part < 3; ++part)
    EXPECT_TRUE(pthread_equal(g_part_thread[part].load(), scheduler)) << "part " << part;
  EXPECT_EQ(chip_.clusters.crew->helpers(), 0u) << "a helper thread was started";
  EXPECT_EQ(g_seen[1].load(), 40.0f);
  EXPECT_EQ(g_seen[2].load(), 40.0f);
  EXPECT_EQ(g_seen[0].load(), 83.0f);  // 41 + 42
}

// Records each lane's blocks; an entry on a lane whose last block has not exited breaks
// the observer contract (per-lane state without locks: the swimlane's start times).
class LaneRecorder : public RunObserver {
 public:
  void set_up(uint32_t) override {}
  void on_entry(uint32_t lane, const BlockView& b) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (open_.count(lane) != 0) overlapped_ = true;
    open_[lane] = {b.core_type, b.core_id};
  }
  void on_exit(uint32_t lane, const BlockView& b) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::pair<uint32_t, uint32_t> core{b.core_type, b.core_id};
    if (open_.count(lane) == 0 || open_[lane] != core) overlapped_ = true;
    open_.erase(lane);
    blocks_.push_back({lane, core});
  }
  void on_task(const TaskView&) override {}
  void on_dependency(uint64_t, uint64_t) override {}

  std::mutex mutex_;
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> open_;
  std::vector<std::pair<uint32_t, std::pair<uint32_t, uint32_t>>> blocks_;
  bool overlapped_ = false;
};

TEST_F(ClusterFiberTest, EachPartIsTracedOnItsCoreAndItsOwnLane) {
  LaneRecorder recorder;
  chip_.observer.store(&recorder);
  run_task();
  chip_.observer.store(nullptr);
  ASSERT_FALSE(run_.status.failed()) << run_.status.message();
  EXPECT_FALSE(recorder.overlapped_) << "two parts' blocks interleaved on one lane";
  ASSERT_EQ(recorder.blocks_.size(), 3u);
  std::set<uint32_t> lanes;
  std::set<std::pair<uint32_t, uint32_t>> cores;
  for (const auto& [lane, core] : recorder.blocks_) {
    lanes.insert(lane);
    cores.insert(core);
  }
  EXPECT_EQ(lanes.size(), 3u);
  const std::set<std::pair<uint32_t, uint32_t>> want{
      {SIMPLER_CORE_AIC, 0}, {SIMPLER_CORE_AIV, 0}, {SIMPLER_CORE_AIV, 1}};
  EXPECT_EQ(cores, want);
}

TEST_F(ClusterFiberTest, AFaultingPartIsNamedThePartnerReleasedAndTheEnginePoisoned) {
  g_crash_aiv1 = true;
  run_task();
  ASSERT_TRUE(run_.status.failed());
  EXPECT_EQ(run_.status.code(), SIMPLER_CHIP_ERR_KERNEL_FAULT);
  const std::string message = run_.status.message();
  EXPECT_NE(message.find("crashed with SIGSEGV"), std::string::npos) << message;
  EXPECT_NE(message.find("AIV core 1"), std::string::npos) << message;
  EXPECT_TRUE(chip_.poisoned.load());
  EXPECT_NE(g_wait_status[0].load(), 0) << "the AIC part's wait did not end with the fault";
}

TEST_F(ClusterFiberTest, AHungPartStaysOnItsCoreForTheWatchdog) {
  g_hang = true;
  chip_.running.tracking.store(true);
  run_task([&] {
    ASSERT_TRUE(eventually([] { return g_part_thread[0].load() != pthread_t{}; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(chip_.running.cores[SIMPLER_CORE_AIC][0].task_id.load(), 1u)
        << "the hung AIC part is not on its core";
    g_release = true;
  });
  EXPECT_FALSE(run_.status.failed()) << run_.status.message();
  EXPECT_EQ(chip_.running.cores[SIMPLER_CORE_AIC][0].task_id.load(), 0u);
  EXPECT_EQ(chip_.running.cores[SIMPLER_CORE_AIV][1].task_id.load(), 0u);
}

// The orchestrating thread (lane 0) runs a one-cluster task as fibers itself while it
// waits for completions: it has nothing to submit, and a helper would first have to wake
// up while it spins (the fused prefill's slow mode: the woken helper queued behind the
// running threads). Submitting, it hands the task to one helper and goes on.
TEST_F(ClusterFiberTest, TheWaitingOrchestratorRunsTheTaskAsFibersItself) {
  Dispatcher orchestrator(chip_, /*lane=*/0, {0, 0});
  ASSERT_TRUE(chip_.ready[SIMPLER_CORE_MIX].push(&task_));
  ASSERT_TRUE(orchestrator.run_one(/*waiting=*/true));
  EXPECT_EQ(task_.done_id.load(), 1u) << "not completed when run_one returned";
  ASSERT_FALSE(run_.status.failed()) << run_.status.message();
  for (int part = 0; part < 3; ++part)
    EXPECT_TRUE(pthread_equal(g_part_thread[part].load(), pthread_self())) << "part " << part;
  EXPECT_EQ(chip_.clusters.crew->helpers(), 0u) << "a helper thread was started";
  EXPECT_EQ(g_seen[0].load(), 83.0f);
  EXPECT_EQ(chip_.awake_schedulers(), 0) << "the orchestrator entered the schedulers' budget";
}

// Single-core work ready beside the cluster task stays queued for whichever thread comes
// free; the cluster task still runs here. Handing it to a helper instead (as before) made
// it wait for that one helper's wake-up and a hardware thread, behind the running threads.
TEST_F(ClusterFiberTest, ReadySingleCoreWorkDoesNotSendTheTaskToAHelper) {
  TaskSlot single;
  single.core_type = SIMPLER_CORE_AIV;
  single.block_num = 1;
  single.id = 2;
  single.run = &run_;
  ASSERT_TRUE(chip_.ready[SIMPLER_CORE_AIV].push(&single));
  Dispatcher orchestrator(chip_, /*lane=*/0, {0, 0});
  ASSERT_TRUE(chip_.ready[SIMPLER_CORE_MIX].push(&task_));
  ASSERT_TRUE(orchestrator.run_one(/*waiting=*/true));
  EXPECT_EQ(task_.done_id.load(), 1u);
  ASSERT_FALSE(run_.status.failed()) << run_.status.message();
  for (int part = 0; part < 3; ++part)
    EXPECT_TRUE(pthread_equal(g_part_thread[part].load(), pthread_self())) << "part " << part;
  EXPECT_EQ(chip_.clusters.crew->helpers(), 0u) << "handed to a helper";
  EXPECT_EQ(chip_.ready[SIMPLER_CORE_AIV].try_pop(), &single) << "the single-core task went";
}

TEST_F(ClusterFiberTest, TheSubmittingOrchestratorHandsTheTaskToAHelper) {
  Dispatcher orchestrator(chip_, /*lane=*/0, {0, 0});
  ASSERT_TRUE(chip_.ready[SIMPLER_CORE_MIX].push(&task_));
  ASSERT_TRUE(orchestrator.run_one());
  EXPECT_TRUE(eventually([&] { return task_.done_id.load() == 1; }));
  ASSERT_FALSE(run_.status.failed()) << run_.status.message();
  EXPECT_EQ(chip_.clusters.crew->helpers(), 1u);
  for (int part = 0; part < 3; ++part)
    EXPECT_FALSE(pthread_equal(g_part_thread[part].load(), pthread_self())) << "part " << part;
  chip_.clusters.crew->stop(/*detach=*/false);
}

// A one-cluster task that no scheduler starts (the orchestrating thread did) runs as
// fibers of one helper, and the helper completes it. When that completion starts the next
// cluster task, a whole-chip one waiting for these cores, its parts need every helper the
// chip may have: the completing helper must count as idle by then (it did not, and the
// whole-chip task failed with "cannot start the helper threads").
TEST(ClusterFiberHandOver, AHelperThatRanATaskAsFibersStartsAWholeChipTaskAfterIt) {
  ChipState chip;
  for (auto& queue : chip.ready) queue.reset(8);
  chip.init_cores(2);
  chip.clusters.init(2, 2);
  chip.max_awake = 1;
  RunTrack run;
  run.first_id = 1;
  TaskSlot one, whole;
  for (TaskSlot* t : {&one, &whole}) {
    t->entry = exchange_kernel;
    t->core_type = SIMPLER_CORE_MIX;
    t->run = &run;
  }
  one.id = 1;
  one.block_num = 1;
  whole.id = 2;
  whole.block_num = 2;
  g_hang = true;
  g_release = false;
  g_crash_aiv1 = false;
  g_part_thread[0].store(pthread_t{});
  ASSERT_TRUE(chip.ready[SIMPLER_CORE_MIX].push(&one));
  ASSERT_TRUE(start_cluster_task(chip, nullptr));  // as the orchestrating thread does
  ASSERT_TRUE(eventually([] { return g_part_thread[0].load() != pthread_t{}; }));
  ASSERT_EQ(chip.clusters.crew->helpers(), 1u) << "the one-cluster task did not run as fibers";
  // The whole-chip task reserves every core; cluster 0's come free when `one` completes.
  ASSERT_TRUE(chip.ready[SIMPLER_CORE_MIX].push(&whole));
  EXPECT_FALSE(start_cluster_task(chip, nullptr));
  g_release = true;
  EXPECT_TRUE(eventually([&] { return whole.done_id.load() == 2; }));
  EXPECT_FALSE(run.status.failed()) << run.status.message();
  EXPECT_EQ(one.done_id.load(), 1u);
  EXPECT_LE(chip.clusters.crew->helpers(), chip.clusters.max_helpers());
  g_hang = false;
  chip.clusters.crew->stop(/*detach=*/false);
}

// ---- fibers and the fault guard ---------------------------------------------------------

struct GuardedStep {
  bool yield_inside = false;  // yields once inside its guard before faulting
  bool returned = true;
  int signo = 0;
};

void guarded_fault(void* arg) {
  auto* step = static_cast<GuardedStep*>(arg);
  FaultInfo fault;
  step->returned = guarded_call(
      [&] {
        if (step->yield_inside) Fiber::yield();
        store_through_null();
      },
      &fault);
  step->signo = fault.signo;
}

// Fiber a is suspended inside its guard while b faults inside its own, and then the
// thread faults under its own guard: each fault lands in the guard of the context that
// raised it (with one chain per thread, the thread's fault jumped into a's guard, onto a's
// stack). Then a resumes and its fault lands in its guard.
TEST(FiberFaultGuard, EachFiberRecoversIntoItsOwnGuard) {
  Fiber a, b;
  GuardedStep sa{true}, sb{false};
  ASSERT_TRUE(a.prepare(&guarded_fault, &sa));
  ASSERT_TRUE(b.prepare(&guarded_fault, &sb));
  FaultInfo outer;
  const bool thread_returned = guarded_call(
      [&] {
        a.resume();  // suspended inside its guard
        b.resume();
        store_through_null();  // the thread's own guard
      },
      &outer);
  EXPECT_FALSE(thread_returned);
  EXPECT_EQ(outer.signo, SIGSEGV);
  ASSERT_FALSE(a.finished());
  ASSERT_TRUE(b.finished());
  EXPECT_FALSE(sb.returned);
  EXPECT_EQ(sb.signo, SIGSEGV);
  a.resume();
  ASSERT_TRUE(a.finished());
  EXPECT_FALSE(sa.returned);
  EXPECT_EQ(sa.signo, SIGSEGV);
  EXPECT_FALSE(Fiber::inside());
}

#if !defined(__SANITIZE_ADDRESS__)  // ASan reports a stack overflow itself
__attribute__((noinline)) int recurse(volatile char* previous, int depth) {
  if (depth > (1 << 20)) return 0;  // 4 GiB of frames: far past the 8 MiB stack
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  frame[4095] = previous != nullptr ? previous[0] : 0;
  return recurse(frame, depth + 1) + frame[4095];
}

void overflow(void* arg) {
  auto* step = static_cast<GuardedStep*>(arg);
  FaultInfo fault;
  step->returned = guarded_call([] { (void)recurse(nullptr, 0); }, &fault);
  step->signo = fault.signo;
}

TEST(FiberFaultGuard, AStackOverflowInAFiberIsACaughtFault) {
  Fiber fiber;
  GuardedStep step;
  ASSERT_TRUE(fiber.prepare(&overflow, &step));
  fiber.resume();
  ASSERT_TRUE(fiber.finished());
  EXPECT_FALSE(step.returned);
  EXPECT_EQ(step.signo, SIGSEGV);
  // The stack is reused by the next start.
  GuardedStep again;
  ASSERT_TRUE(fiber.prepare(&guarded_fault, &again));
  fiber.resume();
  EXPECT_EQ(again.signo, SIGSEGV);
}
#endif

// ---- the switch itself ------------------------------------------------------------------

struct SwitchProbe {
  int rounding_inside = 0;
  bool blocked_inside = false;
};

void change_modes_and_yield(void* arg) {
  auto* probe = static_cast<SwitchProbe*>(arg);
  std::fesetround(FE_UPWARD);
  sigset_t usr2;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &usr2, nullptr);
  Fiber::yield();
  probe->rounding_inside = std::fegetround();
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, nullptr, &now);
  probe->blocked_inside = sigismember(&now, SIGUSR2) == 1;
  pthread_sigmask(SIG_UNBLOCK, &usr2, nullptr);
}

#if defined(__x86_64__)
// The x86-64 switch keeps each side's floating-point modes (as ucontext did) but not a
// signal mask: that is the thread's, one mask for all its fibers, and a switch makes no
// system call for it (ucontext's sigprocmask pair per switch cost ten a cluster task).
TEST(FiberSwitch, KeepsEachSidesRoundingModeAndLeavesTheSignalMaskToTheThread) {
  const int rounding = std::fegetround();
  Fiber fiber;
  SwitchProbe probe;
  ASSERT_TRUE(fiber.prepare(&change_modes_and_yield, &probe));
  fiber.resume();  // the fiber rounds upward and blocks SIGUSR2, then yields
  EXPECT_EQ(std::fegetround(), rounding) << "the fiber's rounding mode leaked to the thread";
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, nullptr, &now);
  EXPECT_EQ(sigismember(&now, SIGUSR2), 1) << "the switch restored a per-context signal mask";
  fiber.resume();
  ASSERT_TRUE(fiber.finished());
  EXPECT_EQ(probe.rounding_inside, FE_UPWARD) << "the fiber lost its rounding mode";
  EXPECT_TRUE(probe.blocked_inside);
  pthread_sigmask(SIG_SETMASK, nullptr, &now);
  EXPECT_EQ(sigismember(&now, SIGUSR2), 0);
  std::fesetround(rounding);
}
#endif

}  // namespace
}  // namespace simpler::rt::testing
