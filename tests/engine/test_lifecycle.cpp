// Engine lifecycle: creation rules, reuse across runs, idle threads parked, device
// memory accounting, release with a failing free.
#include <dirent.h>

#include <time.h>
#include <fstream>
#include <string>

#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "engine_test_support.h"

namespace simpler::rt::testing {
namespace {

using LifecycleTest = EngineTest;

// Every thread of this process.
int total_thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

// Engine scheduler threads ("simpler-sched") alive in this process. Counted by name:
// sanitizers and the sim driver start threads of their own.
int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
      std::string name;
      std::getline(comm, name);
      n += name == "simpler-sched";
    }
    closedir(d);
  }
  return n;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

TEST_F(LifecycleTest, CreateRequiresTheDeviceToBeCurrent) {
  ASSERT_EQ(sim_set_device(1), SIMPLER_OK);
  EngineOptions options;
  options.device = 0;
  std::unique_ptr<Engine> engine;
  std::string error;
  EXPECT_EQ(Engine::create(options, &engine, &error), PTO_RUNTIME_ERR_INVALID_STATE);
  EXPECT_EQ(engine, nullptr);
  EXPECT_NE(error.find("current"), std::string::npos) << error;
  ASSERT_EQ(sim_set_device(0), SIMPLER_OK);
}

TEST_F(LifecycleTest, CreateRefusesAnInvalidConfig) {
  EngineOptions options;
  options.config = default_config();
  options.config.task_window_size = 6;  // not a power of two
  std::unique_ptr<Engine> engine;
  std::string error;
  EXPECT_EQ(Engine::create(options, &engine, &error), PTO_RUNTIME_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine, nullptr);
  EXPECT_NE(error.find("task_window_size"), std::string::npos) << error;
}

TEST_F(LifecycleTest, CommittedBytesAreTheHeapRingOnTheDevice) {
  size_t free_before = 0, total = 0;
  ASSERT_EQ(sim_mem_get_info(&free_before, &total), SIMPLER_OK);
  SimplerCallConfig config = default_config();
  config.heap_ring_bytes = 1 << 20;
  {
    auto e = make_engine(config);
    EXPECT_EQ(e->committed_bytes(), uint64_t{1} << 20);
    EXPECT_EQ(e->device(), kDevice);
    size_t free_during = 0;
    ASSERT_EQ(sim_mem_get_info(&free_during, &total), SIMPLER_OK);
    EXPECT_GE(free_before - free_during, size_t{1} << 20);
  }
  size_t free_after = 0;
  ASSERT_EQ(sim_mem_get_info(&free_after, &total), SIMPLER_OK);
  EXPECT_EQ(free_after, free_before);
}

TEST_F(LifecycleTest, ReleaseRetriesAFailedFreeThenRefusesRuns) {
  auto e = make_engine();
  const uint64_t committed = e->committed_bytes();
  ASSERT_GT(committed, 0u);
  ASSERT_EQ(sim_inject_fault("free", 1, 0), SIMPLER_OK);
  std::string error;
  EXPECT_EQ(e->release(&error), SIM_ERR_INJECTED_FAULT);
  EXPECT_NE(error.find("heap ring"), std::string::npos) << error;
  EXPECT_EQ(e->committed_bytes(), committed);
  EXPECT_EQ(e->release(&error), SIMPLER_OK) << error;
  EXPECT_EQ(e->committed_bytes(), 0u);
  EXPECT_EQ(e->release(&error), SIMPLER_OK);  // idempotent
  auto program = load(test_programs::vector_add());
  DeviceBuffer a(64), b(64), c(64);
  EXPECT_EQ(run(*e, *program, make_args({a.tensor({16}), b.tensor({16}), c.tensor({16})}), &error),
            PTO_RUNTIME_ERR_INVALID_STATE);
}

TEST_F(LifecycleTest, BackToBackRunsReuseTheThreads) {
  auto e = make_engine();
  auto vadd = load(test_programs::vector_add());
  auto nested = load(test_programs::nested_scopes());
  constexpr int64_t n = 512;
  DeviceBuffer a(n * 4), b(n * 4), c(n * 4);
  a.upload(std::vector<float>(n, 1.0f));
  b.upload(std::vector<float>(n, 0.5f));
  const int threads = total_thread_count();
  std::string error;
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(run(*e, *vadd, make_args({a.tensor({n}), b.tensor({n}), c.tensor({n})}), &error),
              SIMPLER_OK)
        << error;
    ASSERT_EQ(c.download<float>()[n - 1], 1.5f);
    c.upload(std::vector<float>(n, 0.0f));
    ASSERT_EQ(run(*e, *nested, make_args({c.tensor({n})}, {1, 1}), &error), SIMPLER_OK) << error;
    ASSERT_EQ(c.download<float>()[0], 2.0f);
  }
  EXPECT_EQ(total_thread_count(), threads) << "execute() must not create threads";
}

// The orchestrator is the thread calling execute(); only the schedulers are own threads.
TEST_F(LifecycleTest, ThreadsAreTheSchedulersOnly) {
  const int before = thread_count();
  {
    SimplerCallConfig config = default_config();
    config.aicpu_thread_num = 3;  // the caller as orchestrator + 2 schedulers
    auto e = make_engine(config);
    EXPECT_EQ(thread_count(), before + 2);
  }
  EXPECT_EQ(thread_count(), before) << "threads must be joined on destruction";
  auto e = make_engine();  // default: 4 AICPU threads
  EXPECT_EQ(thread_count(), before + 3);
}

TEST_F(LifecycleTest, IdleEngineThreadsPark) {
  auto e = make_engine();
  auto program = load(test_programs::bench());
  DeviceBuffer scratch(4096 * 4);
  std::string error;
  ASSERT_EQ(run(*e, *program, make_args({scratch.tensor({4096})}, {2, 5000, 8}), &error),
            SIMPLER_OK)
      << error;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the bounded spin
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double used = process_cpu_seconds() - before;
  // Four spinning threads would burn ~300 ms per thread; parked ones burn ~nothing.
  EXPECT_LT(used, 0.05) << "engine threads use CPU while idle: " << used << " s in 300 ms";
}

// With every scheduler parked, a submit does not wake one per task: the orchestrator runs
// ready blocks itself while it waits. Every block must still run once, with its own
// block_idx (each writes its index into its slice), on both core types.
TEST_F(LifecycleTest, RunsCompleteWhileSchedulersAreParked) {
  auto e = make_engine();
  auto program = load(test_programs::spmd());
  for (const auto& [blocks, core] :
       std::vector<std::pair<uint32_t, uint32_t>>{{1, SIMPLER_CORE_AIV},
                                                  {48, SIMPLER_CORE_AIV},
                                                  {1, SIMPLER_CORE_AIC},
                                                  {20, SIMPLER_CORE_AIC}}) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the bounded spin: parked
    expect_spmd_blocks(*e, *program, blocks, core);
    if (HasFatalFailure()) return;
  }
}

TEST_F(LifecycleTest, EnginesOnTwoDevicesRunConcurrently) {
  auto worker = [](int32_t device, float value, std::string* failure) {
    if (sim_set_device(device) != SIMPLER_OK) return (void)(*failure = "set_device");
    EngineOptions options;
    options.device = device;
    std::unique_ptr<Engine> engine;
    std::string error;
    if (Engine::create(options, &engine, &error) != SIMPLER_OK) return (void)(*failure = error);
    auto program = load(test_programs::dag());
    constexpr int64_t n = 2048;
    DeviceBuffer a(n * 4), b(n * 4), f(n * 4);
    a.upload(std::vector<float>(n, value));
    b.upload(std::vector<float>(n, 0.0f));
    for (int i = 0; i < 10; ++i) {
      if (run(*engine, *program, make_args({a.tensor({n}), b.tensor({n}), f.tensor({n})}),
              &error) != SIMPLER_OK) {
        return (void)(*failure = error);
      }
      if (f.download<float>()[n - 1] != (value + 1) * (value + 2) + value)
        return (void)(*failure = "wrong result");
    }
  };
  std::string f0, f1;
  std::thread t0(worker, 0, 1.0f, &f0);
  std::thread t1(worker, 1, 3.0f, &f1);
  t0.join();
  t1.join();
  EXPECT_EQ(f0, "");
  EXPECT_EQ(f1, "");
}

TEST_F(LifecycleTest, TwoAicpuThreadsMeanOneScheduler) {
  SimplerCallConfig config = default_config();
  config.aicpu_thread_num = 2;
  auto e = make_engine(config);
  auto program = load(test_programs::matmul());
  DeviceBuffer a(128 * 128 * 4), b(128 * 128 * 4), c(128 * 128 * 4);
  a.upload(std::vector<float>(128 * 128, 1.0f));
  b.upload(std::vector<float>(128 * 128, 2.0f));
  std::string error;
  ASSERT_EQ(
      run(*e, *program,
          make_args({a.tensor({128, 128}), b.tensor({128, 128}), c.tensor({128, 128})}), &error),
      SIMPLER_OK)
      << error;
  EXPECT_EQ(c.download<float>(), std::vector<float>(128 * 128, 256.0f));
}

}  // namespace
}  // namespace simpler::rt::testing
