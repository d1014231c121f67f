// ChipWorker kernel mode and the static probe, against the fake runtime build.
#include <gtest/gtest.h>

#include "fake_build.h"
#include "simpler/worker/chip_worker.h"

namespace simpler {
namespace {

using testing::FakeBuild;
using testing::tiny_callable;

void* const kStream = reinterpret_cast<void*>(0x1234);

template <class E, class Fn>
E expect_throw(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e;
  }
  ADD_FAILURE() << "expected exception not thrown";
  throw std::logic_error("unreachable");
}

TEST(ChipWorkerKernel, InitPrepareLaunchFinalize) {
  FakeBuild fake(FAKE_TMR_PATH);
  ChipWorker w;
  EXPECT_FALSE(w.kernel_mode_supported());  // nothing bound: false, no throw
  w.kernel_init(0, fake.bins(), CallConfig{});
  EXPECT_TRUE(w.kernel_mode_supported());
  EXPECT_EQ(w.mode(), ChipWorkerMode::KERNEL);
  EXPECT_EQ(w.committed_device_memory(), 4096u);
  const int64_t a = w.kernel_prepare_callable(tiny_callable());
  const int64_t b = w.kernel_prepare_callable(tiny_callable());
  EXPECT_NE(a, b);  // runtime-minted, no dedup
  EXPECT_EQ(w.prepared_image_count(), 2u);
  ChipStorageTaskArgs args{};
  w.kernel_launch(b, args, kStream);
  EXPECT_EQ(fake.control().last_launch_stream, kStream);
  w.finalize();
  EXPECT_EQ(w.state(), ChipWorkerState::CLOSED);
  EXPECT_EQ(w.prepared_image_count(), 0u);
  EXPECT_EQ(w.committed_device_memory(), 0u);
  EXPECT_EQ(fake.live_contexts(), 0);
}

TEST(ChipWorkerKernel, GenerationIsNonzeroStrictlyIncreasingAndPassedToInit) {
  FakeBuild fake(FAKE_TMR_PATH);
  ChipWorker first, second;
  first.kernel_init(0, fake.bins(), CallConfig{});
  EXPECT_NE(first.generation(), 0u);
  EXPECT_EQ(fake.control().last_generation, first.generation());
  first.finalize();
  second.kernel_init(0, fake.bins(), CallConfig{});
  EXPECT_GT(second.generation(), first.generation());
  EXPECT_EQ(fake.control().last_generation, second.generation());
  EXPECT_EQ(ChipWorker::last_generation(), second.generation());
  second.finalize();
}

TEST(ChipWorkerKernel, UnsupportedBuildRefusesBeforeResolvingOtherKernelEntries) {
  // The no-launch build lacks a kernel entry: if it were resolved first, the error would
  // name the symbol instead of being UNSUPPORTED.
  FakeBuild fake(FAKE_NO_LAUNCH_PATH);
  fake.control().supported = 0;
  ChipWorker w;
  auto e = expect_throw<UnsupportedRuntimeOperation>(
      [&] { w.kernel_init(0, fake.bins(), CallConfig{}); });
  EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(e.what()).find("kernel mode"), std::string::npos);
  EXPECT_EQ(fake.control().kernel_init_calls, 0);
  EXPECT_EQ(fake.live_contexts(), 0);
  EXPECT_EQ(w.state(), ChipWorkerState::FAILED);
  EXPECT_FALSE(w.kernel_mode_supported());
}

TEST(ChipWorkerKernel, InvalidArgumentInitSkipsTeardown) {
  FakeBuild fake(FAKE_TMR_PATH);
  fake.control().kernel_init_status = PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  ChipWorker w;
  auto e = expect_throw<ChipWorkerError>([&] { w.kernel_init(0, fake.bins(), CallConfig{}); });
  EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(fake.control().finalize_calls, 0);
  EXPECT_EQ(fake.live_contexts(), 0);
  EXPECT_EQ(w.state(), ChipWorkerState::FAILED);
}

TEST(ChipWorkerKernel, OtherInitFailureRunsTeardown) {
  FakeBuild fake(FAKE_TMR_PATH);
  fake.control().kernel_init_status = PTO_RUNTIME_ERR_INVALID_STATE;
  ChipWorker w;
  auto e = expect_throw<ChipWorkerError>([&] { w.kernel_init(0, fake.bins(), CallConfig{}); });
  EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_INVALID_STATE);
  EXPECT_EQ(fake.control().finalize_calls, 1);
  EXPECT_EQ(fake.live_contexts(), 0);
  EXPECT_FALSE(w.teardown_owed());
  fake.control().kernel_init_status = 0;
  w.kernel_init(0, fake.bins(), CallConfig{});  // a FAILED worker may init again
  w.finalize();
}

TEST(ChipWorkerKernel, FailedTeardownAfterFailedInitIsOwed) {
  FakeBuild fake(FAKE_TMR_PATH);
  fake.control().kernel_init_status = PTO_RUNTIME_ERR_INTERNAL;
  fake.control().finalize_failures = 1;
  ChipWorker w;
  auto e = expect_throw<ChipWorkerError>([&] { w.kernel_init(0, fake.bins(), CallConfig{}); });
  EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_INTERNAL);  // the init status, not the teardown's
  EXPECT_TRUE(w.teardown_owed());
  EXPECT_EQ(fake.live_contexts(), 1);
  fake.control().kernel_init_status = 0;
  auto owed = expect_throw<ChipWorkerError>([&] { w.kernel_init(0, fake.bins(), CallConfig{}); });
  EXPECT_EQ(owed.code(), PTO_RUNTIME_ERR_INVALID_STATE);
  EXPECT_EQ(fake.control().kernel_init_calls, 1);
  w.finalize();  // pays the teardown
  EXPECT_FALSE(w.teardown_owed());
  EXPECT_EQ(fake.live_contexts(), 0);
  w.kernel_init(0, fake.bins(), CallConfig{});
  EXPECT_EQ(w.state(), ChipWorkerState::INITIALIZED);
  w.finalize();
}

TEST(ChipWorkerKernel, PrepareErrorsCarryCodesAndKeepImages) {
  FakeBuild fake(FAKE_TMR_PATH);
  ChipWorker w;
  w.kernel_init(0, fake.bins(), CallConfig{});
  fake.control().prepare_status = PTO_RUNTIME_ERR_CALLABLE_COUNT_EXCEEDED;
  auto e = expect_throw<ChipWorkerError>([&] { w.kernel_prepare_callable(tiny_callable()); });
  EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_CALLABLE_COUNT_EXCEEDED);
  fake.control().prepare_status = 0;
  fake.control().prepare_id_mode = 1;  // success without an id
  auto no_id = expect_throw<ChipWorkerError>([&] { w.kernel_prepare_callable(tiny_callable()); });
  EXPECT_EQ(no_id.code(), PTO_RUNTIME_ERR_INTERNAL);
  fake.control().prepare_id_mode = 2;  // success with a negative id
  auto negative =
      expect_throw<ChipWorkerError>([&] { w.kernel_prepare_callable(tiny_callable()); });
  EXPECT_EQ(negative.code(), PTO_RUNTIME_ERR_INTERNAL);
  EXPECT_EQ(w.prepared_image_count(), 3u);  // the registry keeps every image handed down
  w.finalize();
}

TEST(ChipWorkerKernel, LaunchRefusesNullStreamBeforeTheEntry) {
  FakeBuild fake(FAKE_TMR_PATH);
  ChipWorker w;
  w.kernel_init(0, fake.bins(), CallConfig{});
  const int64_t id = w.kernel_prepare_callable(tiny_callable());
  ChipStorageTaskArgs args{};
  auto e = expect_throw<ChipWorkerError>([&] { w.kernel_launch(id, args, nullptr); });
  EXPECT_EQ(e.code(), PTO_RUNTIME_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.what()).find("caller_stream"), std::string::npos);
  EXPECT_EQ(fake.control().launch_calls, 0);
  fake.control().launch_status = PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT;
  auto nr = expect_throw<ChipWorkerError>([&] { w.kernel_launch(id, args, kStream); });
  EXPECT_EQ(nr.code(), PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT);
  w.finalize();
}

TEST(ChipWorkerKernel, FailedFinalizeKeepsEverythingForRetry) {
  FakeBuild fake(FAKE_TMR_PATH);
  ChipWorker w;
  w.kernel_init(0, fake.bins(), CallConfig{});
  w.kernel_prepare_callable(tiny_callable());
  fake.control().finalize_failures = 1;
  fake.control().finalize_failure_status = SIM_ERR_INJECTED_FAULT;
  auto e = expect_throw<ChipWorkerError>([&] { w.finalize(); });
  EXPECT_EQ(e.code(), SIM_ERR_INJECTED_FAULT);
  EXPECT_EQ(w.state(), ChipWorkerState::INITIALIZED);
  EXPECT_EQ(w.prepared_image_count(), 1u);  // registry survives until a finalize succeeds
  EXPECT_EQ(fake.live_contexts(), 1);
  w.finalize();
  EXPECT_EQ(w.state(), ChipWorkerState::CLOSED);
  EXPECT_EQ(w.prepared_image_count(), 0u);
  EXPECT_EQ(fake.live_contexts(), 0);
}

TEST(ChipWorkerProbe, CreatesExactlyOneContextAndDestroysIt) {
  FakeBuild tmr(FAKE_TMR_PATH);
  EXPECT_TRUE(ChipWorker::probe_kernel_mode_supported(tmr.bins()));
  EXPECT_EQ(tmr.control().contexts_created, 1);
  EXPECT_EQ(tmr.control().contexts_destroyed, 1);
  EXPECT_EQ(tmr.control().kernel_init_calls + tmr.control().init_device_calls, 0);
  FakeBuild hbg(FAKE_HBG_PATH);
  EXPECT_FALSE(ChipWorker::probe_kernel_mode_supported(hbg.bins("host_build_graph")));
  EXPECT_EQ(hbg.live_contexts(), 0);
}

TEST(ChipWorkerProbe, MissingSupportedEntryCreatesNoContext) {
  FakeBuild fake(FAKE_NO_SUPPORTED_PATH);
  auto e =
      expect_throw<ChipWorkerError>([&] { ChipWorker::probe_kernel_mode_supported(fake.bins()); });
  EXPECT_NE(std::string(e.what()).find("'kernel_mode_supported'"), std::string::npos);
  EXPECT_EQ(fake.control().contexts_created, 0);
}

TEST(ChipWorkerProbe, UnloadableBuildRaises) {
  RuntimeBins bins;
  bins.host_lib_path = "/nonexistent/probe/libhost_runtime.so";
  EXPECT_THROW(ChipWorker::probe_kernel_mode_supported(bins), ChipWorkerError);
}

}  // namespace
}  // namespace simpler
