// Faults and hangs of user code: a kernel or orchestration that raises a signal fails the
// run with a named error and poisons the engine (sticky, CUDA's model); a kernel or
// orchestration that never returns is timed out by the watchdog (off by default) within
// a bound, its thread abandoned. The process lives, release() is bounded, a fresh engine
// works.
#include <chrono>
#include <thread>
#include <vector>

#include "engine_test_support.h"

namespace simpler::rt::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kNullDeref = 0;
constexpr int64_t kAbort = 1;
constexpr int64_t kDivideByZero = 2;
constexpr int64_t kNeverReturn = 3;
constexpr uint64_t kKernel = 0;
constexpr uint64_t kOrchestration = 1;

class FaultsTest : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();  // the device must be current before the buffer is allocated
    x_ = std::make_unique<DeviceBuffer>(16 * 4);
  }

  // Runs crash() and returns the status; x starts at 0.
  int run_crash(Engine& e, int64_t how, uint64_t who, std::string* error,
                const SimplerCallConfig* run_config = nullptr) {
    x_->upload(std::vector<float>(16, 0.0f));
    return run(e, *program_, make_args({x_->tensor({16})}, {static_cast<uint64_t>(how), who}),
               error, run_config);
  }
  float x0() const { return x_->download<float>()[0]; }

  static void expect_fresh_engine_works() {
    auto e = make_engine();
    constexpr int64_t n = 64;
    DeviceBuffer a(n * 4), b(n * 4), c(n * 4);
    a.upload(std::vector<float>(n, 1.5f));
    b.upload(std::vector<float>(n, 2.0f));
    auto program = load(test_programs::vector_add());
    std::string error;
    ASSERT_EQ(run(*e, *program, make_args({a.tensor({n}), b.tensor({n}), c.tensor({n})}), &error),
              SIMPLER_OK)
        << error;
    EXPECT_EQ(c.download<float>(), std::vector<float>(n, 3.5f));
  }

  // The poisoned engine refuses the next run with the same status, and releases.
  void expect_sticky(Engine& e, int status) {
    std::string error;
    EXPECT_EQ(run_crash(e, 99, kKernel, &error), status);
    EXPECT_NE(error.find("failed earlier"), std::string::npos) << error;
    std::string sticky;
    EXPECT_EQ(e.sticky_error(&sticky), status);
    EXPECT_FALSE(sticky.empty());
    const auto start = Clock::now();
    EXPECT_EQ(e.release(&error), SIMPLER_OK) << error;
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(2)) << "release waited for a stuck thread";
    EXPECT_EQ(e.committed_bytes(), 0u);
  }

  // An abandoned thread still runs inside program_'s code: the program must never be
  // unloaded. It moves to a list that lives (reachable) until the process ends, which is
  // not a leak for LeakSanitizer (a released raw pointer would be reported as one).
  void keep_program_loaded_for_the_process() {
    static auto* const kept = new std::vector<std::unique_ptr<LoadedProgram>>();
    kept->push_back(std::move(program_));
  }

  std::unique_ptr<LoadedProgram> program_ = load(test_programs::crash());
  std::unique_ptr<DeviceBuffer> x_;
};

TEST_F(FaultsTest, NullDereferenceInAKernelFailsTheRunAndPoisonsTheEngine) {
  auto e = make_engine();
  std::string error;
  EXPECT_EQ(run_crash(*e, kNullDeref, kKernel, &error), SIMPLER_CHIP_ERR_KERNEL_FAULT);
  for (const char* part : {"SIGSEGV", "address 0x0", "kernel func_id 0",
                           "task 1 (the 2nd task the orchestration submitted)", "AIV core"}) {
    EXPECT_NE(error.find(part), std::string::npos) << part << " missing in: " << error;
  }
  EXPECT_EQ(x0(), 1.0f) << "the task before the fault ran, the one after it was skipped";
  expect_sticky(*e, SIMPLER_CHIP_ERR_KERNEL_FAULT);
  expect_fresh_engine_works();
}

TEST_F(FaultsTest, AbortInAKernelIsCaught) {
  auto e = make_engine();
  std::string error;
  EXPECT_EQ(run_crash(*e, kAbort, kKernel, &error), SIMPLER_CHIP_ERR_KERNEL_FAULT);
  EXPECT_NE(error.find("SIGABRT"), std::string::npos) << error;
  expect_sticky(*e, SIMPLER_CHIP_ERR_KERNEL_FAULT);
  expect_fresh_engine_works();
}

TEST_F(FaultsTest, DivisionByZeroInAKernelIsCaught) {
  auto e = make_engine();
  std::string error;
  EXPECT_EQ(run_crash(*e, kDivideByZero, kKernel, &error), SIMPLER_CHIP_ERR_KERNEL_FAULT);
  EXPECT_NE(error.find("SIGFPE"), std::string::npos) << error;
  expect_sticky(*e, SIMPLER_CHIP_ERR_KERNEL_FAULT);
}

TEST_F(FaultsTest, FaultsOfTheOrchestrationAreCaught) {
  for (int64_t how : {kNullDeref, kAbort}) {
    auto e = make_engine();
    std::string error;
    EXPECT_EQ(run_crash(*e, how, kOrchestration, &error), SIMPLER_CHIP_ERR_ORCH_FATAL);
    EXPECT_NE(error.find(how == kAbort ? "SIGABRT" : "SIGSEGV"), std::string::npos) << error;
    EXPECT_NE(error.find("orch_crash"), std::string::npos) << error;
    expect_sticky(*e, SIMPLER_CHIP_ERR_ORCH_FATAL);
  }
  expect_fresh_engine_works();
}

TEST_F(FaultsTest, FaultsOnOtherThreadsStillEndTheProcess) {
  // Install the handlers (a guarded run), then fault on a thread with no guard: the
  // previous (default) action applies, exactly as without simpler.
  auto e = make_engine();
  std::string error;
  ASSERT_EQ(run_crash(*e, 99, kKernel, &error), SIMPLER_OK) << error;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        int* volatile null = nullptr;
        *null = 1;
      },
      "");
  EXPECT_DEATH(std::abort(), "");
}

TEST_F(FaultsTest, WatchdogTimesOutAKernelThatNeverReturns) {
  auto e = make_engine();
  SimplerCallConfig config = default_config();
  config.watchdog_timeout_ms = 200;
  std::string error;
  const auto start = Clock::now();
  EXPECT_EQ(run_crash(*e, kNeverReturn, kKernel, &error, &config),
            SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3)) << "the timeout is not bounded";
  for (const char* part : {"watchdog", "kernel func_id 0", "task 1 (the 2nd", "AIV core",
                           "watchdog_timeout_ms=200", "close it"}) {
    EXPECT_NE(error.find(part), std::string::npos) << part << " missing in: " << error;
  }
  EXPECT_TRUE(e->abandoned());
  expect_sticky(*e, SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT);
  e.reset();  // the stuck thread is detached, not joined
  expect_fresh_engine_works();
  // The stuck kernel still sleeps inside the program's code: it stays loaded.
  keep_program_loaded_for_the_process();
}

TEST_F(FaultsTest, WatchdogTimesOutAnOrchestrationThatNeverReturns) {
  for (bool build_graph_first : {false, true}) {
    SimplerCallConfig config = default_config();
    config.watchdog_timeout_ms = 150;  // from the engine's config: every run is watched
    auto e = make_engine(config, build_graph_first);
    std::string error;
    EXPECT_EQ(run_crash(*e, kNeverReturn, kOrchestration, &error),
              SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT);
    EXPECT_NE(error.find("the orchestration 'orch_crash' made no runtime call"), std::string::npos)
        << error;
    expect_sticky(*e, SIMPLER_CHIP_ERR_SCHEDULER_TIMEOUT);
  }
  // An abandoned thread still runs the program's code (it sleeps inside it): unloading it
  // would pull the code from under that thread, as the engine's contract says.
  keep_program_loaded_for_the_process();
}

TEST_F(FaultsTest, WatchedRunsThatFinishLeaveTheEngineHealthy) {
  auto e = make_engine();
  SimplerCallConfig config = default_config();
  config.watchdog_timeout_ms = 5000;
  std::string error;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(run_crash(*e, 99, kKernel, &error, &config), SIMPLER_OK) << error;
    EXPECT_EQ(x0(), 3.0f);
  }
  EXPECT_FALSE(e->abandoned());
  EXPECT_EQ(e->sticky_error(nullptr), SIMPLER_OK);
}

TEST_F(FaultsTest, TheWatchdogIsOffByDefault) {
  // A kernel slower than any plausible default timeout would still finish... kept short:
  // the engine's defaults arm no watchdog, so nothing is tracked and no thread is handed
  // the run (a default run never reports a timeout however long a kernel takes).
  auto e = make_engine();
  auto sleep = load(test_programs::sleep());
  std::string error;
  EXPECT_EQ(run(*e, *sleep, make_args({x_->tensor({16})}, {50}), &error), SIMPLER_OK) << error;
}

}  // namespace
}  // namespace simpler::rt::testing
