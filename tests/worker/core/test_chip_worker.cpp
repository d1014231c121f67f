// ChipWorker: loading, lifecycle and program mode against the fake runtime build.
#include "simpler/worker/chip_worker.h"

#include <gtest/gtest.h>

#include <thread>

#include "fake_build.h"

namespace simpler {
namespace {

using testing::FakeBuild;
using testing::tiny_callable;

template <class Fn>
ChipWorkerError expect_chip_error(Fn&& fn) {
  try {
    fn();
  } catch (const ChipWorkerError& e) {
    return e;
  }
  ADD_FAILURE() << "expected ChipWorkerError";
  return ChipWorkerError(0, "none");
}

TEST(ChipWorkerLoad, UnloadableLibraryNamesPathAndDlerror) {
  RuntimeBins bins;
  bins.host_lib_path = "/nonexistent/libhost_runtime.so";
  ChipWorker w;
  auto e = expect_chip_error([&] { w.init(0, bins); });
  EXPECT_NE(std::string(e.what()).find("/nonexistent/libhost_runtime.so"), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("cannot open shared object"), std::string::npos) << e.what();
  EXPECT_EQ(w.state(), ChipWorkerState::NEW);
}

TEST(ChipWorkerLoad, MissingEntryIsNamedAndNothingStaysBound) {
  FakeBuild fake(FAKE_NO_LAUNCH_PATH);
  ChipWorker w;
  auto e = expect_chip_error([&] { w.kernel_init(0, fake.bins(), CallConfig{}); });
  EXPECT_NE(std::string(e.what()).find("'kernel_mode_launch'"), std::string::npos) << e.what();
  EXPECT_EQ(w.state(), ChipWorkerState::NEW);  // left uninitialized: retry allowed
  EXPECT_EQ(fake.live_contexts(), 0);
  EXPECT_EQ(fake.control().kernel_init_calls, 0);
  EXPECT_EQ(w.committed_device_memory(), 0u);
}

TEST(ChipWorkerLoad, ALibraryWithoutSimplerGetApiIsRefusedAsNotAV2Build) {
  // A C ABI 1 build (loose entries) or any other library: no simpler_get_api.
  RuntimeBins bins;
  bins.host_lib_path = std::string(FAKE_LIB_DIR) + "/libsimpler_sim.so";
  ChipWorker w;
  auto e = expect_chip_error([&] { w.init(0, bins); });
  EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(e.what()).find("does not export simpler_get_api"), std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("C ABI 1"), std::string::npos) << e.what();
  EXPECT_EQ(w.state(), ChipWorkerState::NEW);
}

TEST(ChipWorkerLoad, ATableOfAnotherMajorVersionIsRefused) {
  FakeBuild fake(FAKE_OLD_MAJOR_PATH);
  ChipWorker w;
  auto e = expect_chip_error([&] { w.init(0, fake.bins()); });
  EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(e.what()).find("table of version 1."), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("rebuild"), std::string::npos) << e.what();
  EXPECT_EQ(fake.live_contexts(), 0);
  EXPECT_EQ(w.state(), ChipWorkerState::NEW);
}

TEST(ChipWorkerProgram, TheRuntimesOwnMessageReachesTheError) {
  FakeBuild fake(FAKE_TMR_PATH);
  ChipWorker w;
  w.init(0, fake.bins());
  CallableHandle h = w.register_callable(tiny_callable());
  fake.control().run_status = SIMPLER_CHIP_ERR_ORCH_FATAL;
  ChipStorageTaskArgs args{};
  auto e = expect_chip_error([&] { w.run(h, args); });
  EXPECT_EQ(e.code(), SIMPLER_CHIP_ERR_ORCH_FATAL);
  EXPECT_NE(std::string(e.what()).find("fake runtime detail: run failed"), std::string::npos)
      << e.what();
  // submit + finalize_run report it too.
  const uint64_t run = w.submit(h, args);
  auto e2 = expect_chip_error([&] { w.finalize_run(run); });
  EXPECT_NE(std::string(e2.what()).find("fake runtime detail: run failed"), std::string::npos)
      << e2.what();
  fake.control().run_status = 0;
  w.finalize();
}

TEST(ChipWorkerLoad, RetryAfterMissingEntrySucceedsWithACompleteBuild) {
  FakeBuild broken(FAKE_NO_LAUNCH_PATH);
  FakeBuild good(FAKE_TMR_PATH);
  ChipWorker w;
  EXPECT_THROW(w.kernel_init(0, broken.bins(), CallConfig{}), ChipWorkerError);
  w.kernel_init(0, good.bins(), CallConfig{});
  EXPECT_EQ(w.state(), ChipWorkerState::INITIALIZED);
  w.finalize();
  EXPECT_EQ(good.live_contexts(), 0);
}

TEST(ChipWorkerProgram, LifecycleNewInitializedClosed) {
  FakeBuild fake(FAKE_TMR_PATH);
  ChipWorker w;
  EXPECT_EQ(w.state(), ChipWorkerState::NEW);
  w.init(1, fake.bins());
  EXPECT_EQ(w.state(), ChipWorkerState::INITIALIZED);
  EXPECT_EQ(w.mode(), ChipWorkerMode::PROGRAM);
  EXPECT_EQ(w.device_id(), 1);
  w.finalize();
  EXPECT_EQ(w.state(), ChipWorkerState::CLOSED);
  w.finalize();  // idempotent
  EXPECT_EQ(fake.control().finalize_calls, 1);
  EXPECT_EQ(fake.live_contexts(), 0);
  auto e = expect_chip_error([&] { w.init(1, fake.bins()); });
  EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_INVALID_STATE);
}

TEST(ChipWorkerProgram, FailedInitRollsBackAndAllowsRetry) {
  FakeBuild fake(FAKE_TMR_PATH);
  fake.control().init_device_status = PTO_RUNTIME_ERR_INVALID_STATE;
  ChipWorker w;
  auto e = expect_chip_error([&] { w.init(0, fake.bins()); });
  EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_INVALID_STATE);
  EXPECT_NE(std::string(e.what()).find("PTO_RUNTIME_ERR_INVALID_STATE"), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("fake runtime detail"),
            std::string::npos);  // the runtime's last_error
  EXPECT_EQ(w.state(), ChipWorkerState::FAILED);
  EXPECT_EQ(fake.control().finalize_calls, 1);
  EXPECT_EQ(fake.live_contexts(), 0);  // nothing leaked
  fake.control().init_device_status = 0;
  w.init(0, fake.bins());
  EXPECT_EQ(w.state(), ChipWorkerState::INITIALIZED);
  w.finalize();
}

TEST(ChipWorkerProgram, RegisterRunSubmitAndMemory) {
  FakeBuild fake(FAKE_TMR_PATH);
  ChipWorker w;
  w.init(0, fake.bins());
  CallableHandle h = w.register_callable(tiny_callable());
  ChipStorageTaskArgs args{};
  w.run(h, args);
  fake.control().run_status = SIMPLER_CHIP_ERR_ORCH_FATAL;
  auto e = expect_chip_error([&] { w.run(h, args); });
  EXPECT_EQ(e.code(), SIMPLER_CHIP_ERR_ORCH_FATAL);
  EXPECT_NE(std::string(e.what()).find("SIMPLER_CHIP_ERR_ORCH_FATAL"), std::string::npos);
  fake.control().run_status = 0;

  fake.set("runs_blocked", 1);
  uint64_t run = w.submit(h, args);
  EXPECT_FALSE(w.poll(run));
  EXPECT_FALSE(w.wait(run, std::chrono::microseconds(1000)));
  fake.set("runs_blocked", 0);
  EXPECT_TRUE(w.wait(run, std::nullopt));
  w.finalize_run(run);

  uint64_t p = w.malloc(64);
  EXPECT_EQ(w.committed_device_memory(), 64u);
  const char src[8] = "abcdefg";
  char dst[8] = {};
  w.copy_to(p, src, 8);
  w.copy_from(dst, p, 8);
  EXPECT_STREQ(dst, "abcdefg");
  w.free(p);
  EXPECT_EQ(w.committed_device_memory(), 0u);
  EXPECT_EQ(w.device_memory_info().total_bytes, 1u << 21);

  w.unregister_callable(h);
  auto stale = expect_chip_error([&] { w.run(h, args); });
  EXPECT_EQ(stale.code(), PTO_RUNTIME_ERR_INVALID_ARGUMENT);
  w.finalize();
}

TEST(ChipWorkerProgram, KernelApisRefusedOnProgramContext) {
  FakeBuild fake(FAKE_TMR_PATH);
  ChipWorker w;
  w.init(0, fake.bins());
  auto e = expect_chip_error([&] { w.kernel_prepare_callable(tiny_callable()); });
  EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_INVALID_STATE);
  EXPECT_EQ(fake.control().prepare_calls, 0);
  w.finalize();
}

TEST(ChipWorkerProgram, FinalizeOnlyFromInitThread) {
  FakeBuild fake(FAKE_TMR_PATH);
  ChipWorker w;
  w.init(0, fake.bins());
  std::thread other([&] {
    auto e = expect_chip_error([&] { w.finalize(); });
    EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_INVALID_STATE);
  });
  other.join();
  EXPECT_EQ(w.state(), ChipWorkerState::INITIALIZED);
  EXPECT_EQ(fake.control().finalize_calls, 0);
  w.finalize();
  EXPECT_EQ(w.state(), ChipWorkerState::CLOSED);
}

TEST(ChipWorkerProgram, DestructorFinalizesOnInitThread) {
  FakeBuild fake(FAKE_TMR_PATH);
  {
    ChipWorker w;
    w.init(0, fake.bins());
  }
  EXPECT_EQ(fake.control().finalize_calls, 1);
  EXPECT_EQ(fake.live_contexts(), 0);
}

}  // namespace
}  // namespace simpler
