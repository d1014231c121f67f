// simpler::Worker in kernel mode against the fake runtime build (spec/kernel-mode.md).
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "../../../src/worker/process_guards.h"
#include "fake_build.h"
#include "simpler/worker/worker.h"

namespace simpler {
namespace {

using testing::FakeBuild;
using testing::tiny_callable;

void* const kStream = reinterpret_cast<void*>(0x5678);

WorkerOptions kernel_options(const char* runtime = "tensormap_and_ringbuffer") {
  WorkerOptions o;
  o.execution_mode = "kernel";
  o.runtime = runtime;
  o.lib_dir = FAKE_LIB_DIR;
  return o;
}

template <class E, class Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected exception not thrown";
  return {};
}

TEST(WorkerConstruction, ValidatesWithoutTouchingTheRuntime) {
  FakeBuild fake(FAKE_TMR_PATH);
  WorkerOptions o = kernel_options();
  o.level = 3;  // kernel mode is level 2 only: a ValueError, not "not implemented"
  EXPECT_THROW(Worker{o}, std::invalid_argument);
  o.execution_mode = "program";
  EXPECT_THROW(Worker{o}, NotImplementedYet);  // C++ is level 2; level 3 is simpler.host
  o = kernel_options();
  o.level = 1;
  EXPECT_THROW(Worker{o}, std::invalid_argument);
  o = kernel_options();
  o.execution_mode = "graph";
  EXPECT_NE(message_of<std::invalid_argument>([&] { Worker w(o); }).find("execution_mode"),
            std::string::npos);
  o = kernel_options();
  o.enable_sdma = true;
  EXPECT_NE(message_of<std::invalid_argument>([&] { Worker w(o); }).find("enable_sdma"),
            std::string::npos);
  Worker w(kernel_options());
  EXPECT_EQ(w.state(), WorkerState::NEW);
  EXPECT_EQ(w.execution_mode(), ExecutionMode::KERNEL);
  EXPECT_EQ(fake.control().contexts_created, 0);
}

TEST(WorkerKernelSupported, ProbesOnceBeforeInitAndCaches) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(kernel_options());
  EXPECT_TRUE(w.kernel_mode_supported());
  EXPECT_TRUE(w.kernel_mode_supported());
  EXPECT_EQ(fake.control().contexts_created, 1);  // cached: one probe
  EXPECT_EQ(fake.live_contexts(), 0);
  EXPECT_EQ(w.state(), WorkerState::NEW);
  EXPECT_EQ(fake.control().kernel_init_calls, 0);
}

TEST(WorkerKernelSupported, HbgAnswersFalseAndProgramWorkerProbesToo) {
  FakeBuild hbg(FAKE_HBG_PATH);
  Worker w(kernel_options("host_build_graph"));
  EXPECT_FALSE(w.kernel_mode_supported());
  WorkerOptions p = kernel_options("host_build_graph");
  p.execution_mode = "program";
  Worker program(p);
  EXPECT_FALSE(program.kernel_mode_supported());
  EXPECT_EQ(hbg.control().contexts_created, 2);
}

TEST(WorkerKernelSupported, MissingBuildRaisesAndIsNotCached) {
  FakeBuild fake(FAKE_TMR_PATH);
  const auto dir =
      std::filesystem::path(::testing::TempDir()) / ("simpler_probe_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  WorkerOptions o = kernel_options();
  o.lib_dir = dir.string();
  Worker w(o);
  const std::string msg = message_of<RuntimeBuildNotFound>([&] { w.kernel_mode_supported(); });
  EXPECT_NE(msg.find(dir.string()), std::string::npos) << msg;
  // The build appears: the next call probes instead of repeating the cached error.
  const auto rt = dir / "runtimes" / "a2a3sim" / "tensormap_and_ringbuffer";
  std::filesystem::create_directories(rt);
  std::filesystem::create_symlink(FAKE_TMR_PATH, rt / "libhost_runtime.so");
  std::filesystem::create_symlink(std::filesystem::path(FAKE_LIB_DIR) / "libsimpler_sim.so",
                                  dir / "libsimpler_sim.so");
  EXPECT_TRUE(w.kernel_mode_supported());
  std::filesystem::remove_all(dir);
}

TEST(WorkerKernelInit, ConfigRulesEachLeaveNewAndCreateNothing) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(kernel_options());
  EXPECT_NE(message_of<std::invalid_argument>([&] { w.init(); }).find("config=CallConfig(...)"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] { w.init(CallConfig{}); }).find("prewarm_config"),
            std::string::npos);
  EXPECT_THROW(w.init(CallConfig{}, CallConfig{}), std::invalid_argument);
  CallConfig bad;
  bad.enable_swimlane = true;  // needs an output_prefix
  EXPECT_THROW(w.init(std::nullopt, bad), TaskInterfaceError);
  EXPECT_EQ(w.state(), WorkerState::NEW);
  EXPECT_EQ(fake.control().contexts_created, 0);
  w.init(std::nullopt, CallConfig{});
  EXPECT_EQ(w.state(), WorkerState::READY);
  EXPECT_GT(w.committed_device_memory(), 0u);
  EXPECT_TRUE(w.kernel_mode_supported());
  EXPECT_EQ(fake.control().contexts_created, 1);  // READY: answered without probing
  w.close();
  EXPECT_EQ(w.committed_device_memory(), 0u);
}

TEST(WorkerKernelInit, FailureRollsBackOnceAndCloseDoesNotFinalizeAgain) {
  FakeBuild fake(FAKE_TMR_PATH);
  fake.control().kernel_init_status = PTO_RUNTIME_ERR_INVALID_STATE;
  const size_t pinned_before = pinned_chip_worker_count();
  Worker w(kernel_options());
  try {
    w.init(std::nullopt, CallConfig{});
    FAIL() << "init should fail";
  } catch (const ChipWorkerError& e) {
    EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_INVALID_STATE);
  }
  EXPECT_EQ(w.state(), WorkerState::FAILED);
  EXPECT_EQ(fake.control().finalize_calls, 1);
  EXPECT_EQ(fake.live_contexts(), 0);
  EXPECT_FALSE(w.holds_native_context());
  w.close();
  EXPECT_EQ(w.state(), WorkerState::CLOSED);
  EXPECT_EQ(fake.control().finalize_calls, 1);
  EXPECT_THROW(w.init(std::nullopt, CallConfig{}), std::runtime_error);
  EXPECT_EQ(pinned_chip_worker_count(), pinned_before);
}

TEST(WorkerKernelInit, UnsupportedRuntimeSaysKernelMode) {
  FakeBuild hbg(FAKE_HBG_PATH);
  Worker w(kernel_options("host_build_graph"));
  const std::string msg =
      message_of<UnsupportedRuntimeOperation>([&] { w.init(std::nullopt, CallConfig{}); });
  EXPECT_NE(msg.find("kernel mode"), std::string::npos);
  EXPECT_EQ(w.state(), WorkerState::FAILED);
  EXPECT_EQ(hbg.live_contexts(), 0);
}

TEST(WorkerKernelCalls, RefusalsBeforeTheNativeCall) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(kernel_options());
  EXPECT_NE(message_of<std::runtime_error>([&] {
              w.kernel_prepare_callable(tiny_callable());
            }).find("requires an initialized (READY) worker"),
            std::string::npos);
  ChipStorageTaskArgs args{};
  EXPECT_THROW(w.kernel_launch(0, args, kStream), std::runtime_error);
  w.init(std::nullopt, CallConfig{});
  const int64_t id = w.kernel_prepare_callable(tiny_callable());
  const int64_t id2 = w.kernel_prepare_callable(tiny_callable());
  EXPECT_NE(id, id2);
  EXPECT_THROW(w.kernel_launch(id, args, nullptr), std::invalid_argument);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              w.kernel_launch(id2 + 100, args, kStream);
            }).find("not returned by this Worker"),
            std::string::npos);
  EXPECT_EQ(fake.control().launch_calls, 0);
  const uint64_t committed = w.committed_device_memory();
  w.kernel_launch(id2, args, kStream);
  w.kernel_launch(id, args, kStream);
  EXPECT_EQ(fake.control().launch_calls, 2);
  EXPECT_EQ(w.committed_device_memory(), committed);
  w.close();
  EXPECT_THROW(w.kernel_launch(id, args, kStream), std::runtime_error);  // ids void after close
  EXPECT_EQ(fake.control().launch_calls, 2);
}

TEST(WorkerKernelCalls, NegativeIdFromBelowIsAnErrorAndNotLaunchable) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(kernel_options());
  w.init(std::nullopt, CallConfig{});
  fake.control().prepare_id_mode = 2;
  EXPECT_THROW(w.kernel_prepare_callable(tiny_callable()), std::runtime_error);
  ChipStorageTaskArgs args{};
  EXPECT_THROW(w.kernel_launch(-5, args, kStream), std::invalid_argument);
  EXPECT_EQ(fake.control().launch_calls, 0);
  w.close();
}

TEST(WorkerModeExclusion, KernelWorkerRefusesProgramApis) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(kernel_options());
  auto expect_refused = [&](const char* api, auto&& call) {
    EXPECT_EQ(message_of<std::runtime_error>(call),
              std::string("Worker.") + api + ": requires execution_mode='program'");
  };
  ChipStorageTaskArgs args{};
  const int64_t shape[] = {4};
  char host[16];
  HostBuffer buffer(16);
  expect_refused("register", [&] { w.register_callable(tiny_callable()); });  // already at NEW
  w.init(std::nullopt, CallConfig{});
  expect_refused("unregister", [&] { w.unregister_callable(CallableHandle{1}); });
  expect_refused("submit", [&] { w.submit(CallableHandle{1}, args); });
  expect_refused("run", [&] { w.run(CallableHandle{1}, args); });
  expect_refused("malloc", [&] { w.malloc(16); });
  expect_refused("free", [&] { w.free(16); });
  expect_refused("copy_to", [&] { w.copy_to(16, host, 16); });
  expect_refused("copy_from", [&] { w.copy_from(host, 16, 16); });
  expect_refused("create_buffer", [&] { w.create_buffer(16); });
  expect_refused("make_tensor_arg",
                 [&] { w.make_tensor_arg(buffer.address(), 16, shape, DataType::FLOAT32); });
  expect_refused("release_buffer", [&] { w.release_buffer(buffer); });
  expect_refused("device_memory_info", [&] { w.device_memory_info(); });
  EXPECT_GT(w.committed_device_memory(), 0u);  // stays available
  w.close();
}

TEST(WorkerModeExclusion, ProgramWorkerRefusesKernelApis) {
  FakeBuild fake(FAKE_TMR_PATH);
  WorkerOptions o = kernel_options();
  o.execution_mode = "program";
  Worker w(o);
  ChipStorageTaskArgs args{};
  for (int round = 0; round < 2; ++round) {  // NEW, then READY
    EXPECT_EQ(message_of<std::runtime_error>([&] { w.kernel_prepare_callable(tiny_callable()); }),
              "Worker.kernel_prepare_callable: requires execution_mode='kernel'");
    EXPECT_EQ(message_of<std::runtime_error>([&] { w.kernel_launch(0, args, kStream); }),
              "Worker.kernel_launch: requires execution_mode='kernel'");
    if (round == 0) w.init();
  }
  EXPECT_THROW(w.init(std::nullopt, CallConfig{}), std::runtime_error);  // already READY
  w.close();
}

TEST(WorkerProgramInit, RefusesKernelConfig) {
  FakeBuild fake(FAKE_TMR_PATH);
  WorkerOptions o = kernel_options();
  o.execution_mode = "program";
  Worker w(o);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              w.init(std::nullopt, CallConfig{});
            }).find("config="),
            std::string::npos);
  EXPECT_EQ(w.state(), WorkerState::NEW);
}

struct BlockedLaunch {
  FakeBuild& fake;
  Worker& worker;
  int64_t id;
  std::thread thread;
  std::atomic<bool> ok{false};
  BlockedLaunch(FakeBuild& f, Worker& w, int64_t i) : fake(f), worker(w), id(i) {
    fake.set("launches_blocked", 1);
    thread = std::thread([this] {
      ChipStorageTaskArgs args{};
      worker.kernel_launch(id, args, kStream);
      ok = true;
    });
    EXPECT_TRUE(fake.wait_launch_in_progress());
  }
  void release() {
    fake.set("launches_blocked", 0);
    thread.join();
  }
};

TEST(WorkerKernelConcurrency, OverlappingLaunchFailsFastAndClosePastGraceTimesOut) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(kernel_options());
  w.init(std::nullopt, CallConfig{});
  const int64_t id = w.kernel_prepare_callable(tiny_callable());
  BlockedLaunch blocked(fake, w, id);
  ChipStorageTaskArgs args{};
  EXPECT_NE(message_of<std::runtime_error>([&] {
              w.kernel_launch(id, args, kStream);
            }).find("a kernel prepare/launch/close is in progress"),
            std::string::npos);
  w.set_close_grace(std::chrono::milliseconds(20));
  EXPECT_THROW(w.close(), WorkerTimeoutError);
  EXPECT_EQ(w.state(), WorkerState::CLOSED);  // published before the lock
  EXPECT_TRUE(w.holds_native_context());      // context kept
  EXPECT_EQ(fake.control().finalize_calls, 0);
  blocked.release();
  EXPECT_TRUE(blocked.ok);
  w.close();  // called again: now finalizes
  EXPECT_EQ(fake.control().finalize_calls, 1);
  EXPECT_FALSE(w.holds_native_context());
}

TEST(WorkerKernelConcurrency, CloseWaitsForABlockedLaunchThenFinalizes) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(kernel_options());
  w.init(std::nullopt, CallConfig{});
  const int64_t id = w.kernel_prepare_callable(tiny_callable());
  BlockedLaunch blocked(fake, w, id);
  std::thread releaser([&] {
    while (w.state() != WorkerState::CLOSED)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    fake.set("launches_blocked", 0);
  });
  w.close();  // default 10 s grace; returns once the launch released the lock
  releaser.join();
  blocked.thread.join();
  EXPECT_TRUE(blocked.ok);
  EXPECT_EQ(fake.control().finalize_calls, 1);
}

TEST(WorkerKernelClose, OnlyOnTheInitThread) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(kernel_options());
  w.init(std::nullopt, CallConfig{});
  std::thread other([&] { EXPECT_THROW(w.close(), std::runtime_error); });
  other.join();
  EXPECT_EQ(w.state(), WorkerState::READY);
  EXPECT_EQ(fake.control().finalize_calls, 0);
  w.close();
  w.close();  // idempotent
  EXPECT_EQ(fake.control().finalize_calls, 1);
}

TEST(WorkerKernelClose, TeardownFailureKeepsContextAndRetries) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(kernel_options());
  w.init(std::nullopt, CallConfig{});
  const int64_t id = w.kernel_prepare_callable(tiny_callable());
  fake.control().finalize_failures = 1;
  fake.control().finalize_failure_status = SIM_ERR_INJECTED_FAULT;
  try {
    w.close();
    FAIL() << "close should fail";
  } catch (const ChipWorkerError& e) {
    EXPECT_EQ(e.code(), SIM_ERR_INJECTED_FAULT);
  }
  EXPECT_EQ(w.state(), WorkerState::CLOSED);
  EXPECT_TRUE(w.holds_native_context());
  EXPECT_GT(w.committed_device_memory(), 0u);
  ChipStorageTaskArgs args{};
  EXPECT_THROW(w.kernel_launch(id, args, kStream), std::runtime_error);
  EXPECT_THROW(w.kernel_prepare_callable(tiny_callable()), std::runtime_error);
  w.close();
  EXPECT_FALSE(w.holds_native_context());
  EXPECT_EQ(w.committed_device_memory(), 0u);
  EXPECT_EQ(fake.live_contexts(), 0);
}

TEST(WorkerKernelLifetime, DestroyingAnUnclosedWorkerPinsItsChipWorker) {
  FakeBuild fake(FAKE_TMR_PATH);
  const size_t before = pinned_chip_worker_count();
  {
    Worker w(kernel_options());
    w.init(std::nullopt, CallConfig{});
  }
  EXPECT_EQ(pinned_chip_worker_count(), before + 1);
  EXPECT_EQ(fake.control().finalize_calls, 0);  // never finalized on the destroying thread
  EXPECT_EQ(fake.live_contexts(), 1);
}

TEST(WorkerKernelFork, ChildIsRefusedWithoutNativeCallsParentCarriesOn) {
  FakeBuild fake(FAKE_TMR_PATH);
  Worker w(kernel_options());
  w.init(std::nullopt, CallConfig{});
  const int64_t id = w.kernel_prepare_callable(tiny_callable());
  const pid_t child = fork();
  if (child == 0) {
    int failures = 0;
    ChipStorageTaskArgs args{};
    const int calls_before =
        fake.control().prepare_calls + fake.control().launch_calls + fake.control().finalize_calls;
    auto refused = [&](auto&& fn) {
      try {
        fn();
      } catch (const std::runtime_error& e) {
        return std::string(e.what()).find("must not drive or tear it down") != std::string::npos;
      }
      return false;
    };
    failures += !refused([&] { w.kernel_launch(id, args, kStream); });
    failures += !refused([&] { w.kernel_prepare_callable(tiny_callable()); });
    failures += !refused([&] { w.close(); });
    failures += (fake.control().prepare_calls + fake.control().launch_calls +
                 fake.control().finalize_calls) != calls_before;
    _exit(failures);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ChipStorageTaskArgs args{};
  w.kernel_launch(id, args, kStream);
  w.close();
  EXPECT_EQ(fake.control().finalize_calls, 1);
}

}  // namespace
}  // namespace simpler
