// Kernel mode through the C ABI without executing programs: the init check order, the
// current-device rule, the latch, one kernel context per device, committed memory,
// prepare/launch refusals, poisoning, and finalize (busy refusal is in the launch tests).
#include <cstdlib>
#include <thread>

#include "abi_test_support.h"

namespace simpler::test {
namespace {

class KernelLifecycle : public AbiTest {
 protected:
  const RuntimeAbi& tmr = tmr_library().abi();
  const RuntimeAbi& hbg = hbg_library().abi();
  SimplerCallConfig config = default_config();

  int init(const RuntimeAbi& abi, SimplerDeviceContext* ctx, int32_t device,
           uint64_t generation = 7) {
    return abi.kernel_init(ctx, device, nullptr, 0, nullptr, 0, &config, generation);
  }
};

TEST_F(KernelLifecycle, StructuralErrorsComeFirstOnBothBuilds) {
  for (const RuntimeAbi* abi : {&tmr, &hbg}) {
    Context ctx(*abi);
    uint8_t image = 1;
    constexpr int kBad = PTO_RUNTIME_ERR_INVALID_ARGUMENT;
    EXPECT_STATUS(kBad, abi->kernel_init(ctx, -1, nullptr, 0, nullptr, 0, &config, 1));
    EXPECT_STATUS(kBad, abi->kernel_init(ctx, 0, &image, 0, nullptr, 0, &config, 1));
    EXPECT_STATUS(kBad, abi->kernel_init(ctx, 0, nullptr, 4, nullptr, 0, &config, 1));
    EXPECT_STATUS(kBad, abi->kernel_init(ctx, 0, nullptr, 0, &image, 0, &config, 1));
    EXPECT_STATUS(kBad, abi->kernel_init(ctx, 0, nullptr, 0, nullptr, 4, &config, 1));
    EXPECT_STATUS(kBad, abi->kernel_init(ctx, 0, nullptr, 0, nullptr, 0, nullptr, 1));
    EXPECT_STATUS(kBad, abi->kernel_init(ctx, 0, nullptr, 0, nullptr, 0, &config, 0));
    EXPECT_NE(last_error(*abi, ctx).find("generation"), std::string::npos);
    SimplerCallConfig bad = default_config();
    bad.heap_ring_bytes = 100;  // below the minimum ring size
    EXPECT_STATUS(kBad, abi->kernel_init(ctx, 0, nullptr, 0, nullptr, 0, &bad, 1));
    // Structural checks precede the current-device check: none is current on this thread.
    std::thread([&] {
      EXPECT_STATUS(kBad, abi->kernel_init(ctx, -1, nullptr, 0, nullptr, 0, &config, 1));
    }).join();
    EXPECT_EQ(committed(*abi, ctx), 0u);
  }
}

TEST_F(KernelLifecycle, HostBuildGraphRefusesWithUnsupportedTakingNothing) {
  Context ctx(hbg);
  sim_reset_counters();
  EXPECT_STATUS(PTO_RUNTIME_ERR_UNSUPPORTED, init(hbg, ctx, 0));
  EXPECT_NE(last_error(hbg, ctx).find("kernel mode"), std::string::npos) << last_error(hbg, ctx);
  // Even with no device current / another device current: capability comes first.
  std::thread([&] { EXPECT_STATUS(PTO_RUNTIME_ERR_UNSUPPORTED, init(hbg, ctx, 0)); }).join();
  EXPECT_STATUS(PTO_RUNTIME_ERR_UNSUPPORTED, init(hbg, ctx, 3));
  EXPECT_EQ(committed(hbg, ctx), 0u);
  EXPECT_EQ(call_count("malloc"), 0u);
  EXPECT_EQ(call_count("set_device"), 0u);
  // Nothing latched: the context can still go to program mode.
  EXPECT_STATUS(SIMPLER_OK, hbg.init_device(ctx, 0, nullptr));
}

TEST_F(KernelLifecycle, HostBuildGraphPrepareAndLaunchAreInvalidStateAfterArgumentChecks) {
  Context ctx(hbg);
  std::vector<uint8_t> image = unloadable_callable({ArgDirection::IN});
  int64_t id = 5;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, hbg.kernel_prepare(ctx, nullptr, 0, &id));
  EXPECT_EQ(id, -1);
  id = 5;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE,
                hbg.kernel_prepare(ctx, image.data(), image.size(), &id));
  EXPECT_EQ(id, -1);
  ChipStorageTaskArgs args{};
  sim_stream_t stream = nullptr;
  ASSERT_STATUS(SIMPLER_OK, sim_stream_create(&stream));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, hbg.kernel_launch(ctx, 0, nullptr, stream));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, hbg.kernel_launch(ctx, 0, &args, nullptr));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, hbg.kernel_launch(ctx, -1, &args, stream));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, hbg.kernel_launch(ctx, 0, &args, stream));
  EXPECT_STATUS(SIMPLER_OK, sim_stream_synchronize(stream));
  EXPECT_STATUS(SIMPLER_OK, sim_stream_destroy(stream));
}

TEST_F(KernelLifecycle, TheDeviceMustAlreadyBeCurrentAndIsNeverChanged) {
  Context ctx(tmr);
  std::thread([&] {
    sim_reset_counters();
    EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, init(tmr, ctx, 0));  // none current on this thread
    EXPECT_NE(last_error(tmr, ctx).find("no device is current"), std::string::npos)
        << last_error(tmr, ctx);
    int32_t current = -1;
    EXPECT_STATUS(SIM_ERR_NO_DEVICE, sim_get_device(&current));  // still none
    EXPECT_EQ(call_count("set_device"), 0u);
  }).join();
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(1));
  sim_reset_counters();
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, init(tmr, ctx, 0));  // device 1 is current, not 0
  int32_t current = -1;
  ASSERT_STATUS(SIMPLER_OK, sim_get_device(&current));
  EXPECT_EQ(current, 1);
  EXPECT_EQ(call_count("set_device"), 0u);
  EXPECT_EQ(committed(tmr, ctx), 0u);
  // Refusals took nothing and latched nothing: the right device now works.
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(0));
  EXPECT_STATUS(SIMPLER_OK, init(tmr, ctx, 0));
  EXPECT_EQ(call_count("set_device"), 1u);  // only our own sim_set_device(0) above
}

TEST_F(KernelLifecycle, InitCommitsResourcesAndFinalizeReleasesOnlyThem) {
  Context ctx(tmr);
  sim_reset_counters();
  ASSERT_STATUS(SIMPLER_OK, init(tmr, ctx, 0));
  const uint64_t bytes = committed(tmr, ctx);
  EXPECT_GT(bytes, 0u);
  EXPECT_GE(call_count("malloc"), 1u);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE,
                tmr.destroy(ctx));  // unclosed: refused, still usable
  EXPECT_EQ(committed(tmr, ctx), bytes);
  ASSERT_STATUS(SIMPLER_OK, tmr.finalize(ctx));
  EXPECT_EQ(committed(tmr, ctx), 0u);
  EXPECT_EQ(call_count("stream_synchronize"), 0u);
  EXPECT_EQ(call_count("device_reset"), 0u);
  EXPECT_EQ(call_count("set_device"), 0u);
  EXPECT_STATUS(SIMPLER_OK, tmr.finalize(ctx));  // idempotent
  std::vector<uint8_t> image = unloadable_callable({ArgDirection::IN});
  int64_t id = 9;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE,
                tmr.kernel_prepare(ctx, image.data(), image.size(), &id));
  EXPECT_EQ(id, -1);
  ChipStorageTaskArgs args{};
  uint8_t fake_stream = 0;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, tmr.kernel_launch(ctx, 0, &args, &fake_stream));
}

TEST_F(KernelLifecycle, ModeLatchAndOneKernelContextPerDevice) {
  Context first(tmr);
  Context second(tmr);
  Context program(tmr);
  ASSERT_STATUS(SIMPLER_OK, init(tmr, first, 0));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, init(tmr, first, 0));  // latched
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, tmr.init_device(first, 1, nullptr));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE,
                init(tmr, second, 0));  // device 0 has a live kernel context
  EXPECT_NE(last_error(tmr, second).find("live kernel-mode context"), std::string::npos);
  // A program-mode context cannot become a kernel context either.
  ASSERT_STATUS(SIMPLER_OK, tmr.init_device(program, 2, nullptr));
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(0));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, init(tmr, program, 0));
  // Program-mode entries are refused on a kernel context.
  uint64_t u = 0;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, tmr.malloc(first, 64, &u));
  EXPECT_NE(last_error(tmr, first).find("kernel-mode context"), std::string::npos);
  ASSERT_STATUS(SIMPLER_OK, tmr.finalize(first));
  EXPECT_STATUS(SIMPLER_OK, init(tmr, second, 0));  // the successor
}

TEST_F(KernelLifecycle, FailedReleaseKeepsTheClaimAndRetrySucceeds) {
  Context ctx(tmr);
  ASSERT_STATUS(SIMPLER_OK, init(tmr, ctx, 0));
  const uint64_t bytes = committed(tmr, ctx);
  ASSERT_STATUS(SIMPLER_OK, sim_inject_fault("free", 1, 0));
  EXPECT_STATUS(SIM_ERR_INJECTED_FAULT, tmr.finalize(ctx));
  EXPECT_EQ(committed(tmr, ctx), bytes);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, tmr.destroy(ctx));
  Context rival(tmr);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, init(tmr, rival, 0));  // claim kept
  EXPECT_STATUS(SIMPLER_OK, tmr.finalize(ctx));
  EXPECT_EQ(committed(tmr, ctx), 0u);
  EXPECT_STATUS(SIMPLER_OK, init(tmr, rival, 0));
}

TEST_F(KernelLifecycle, PrepareRefusesBadImagesWithMinusOneAndKeepsTheContextUsable) {
  Context ctx(tmr);
  ASSERT_STATUS(SIMPLER_OK, init(tmr, ctx, 0));
  std::vector<uint8_t> image = unloadable_callable({ArgDirection::IN, ArgDirection::OUT});
  int64_t id = 3;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                tmr.kernel_prepare(ctx, image.data(), image.size() - 1, &id));
  EXPECT_EQ(id, -1);
  EXPECT_NE(last_error(tmr, ctx).find("invalid ChipCallable image"), std::string::npos)
      << last_error(tmr, ctx);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, tmr.kernel_prepare(ctx, nullptr, 16, &id));
  EXPECT_EQ(id, -1);
  // Launching before anything is resident.
  ChipStorageTaskArgs args{};
  sim_stream_t stream = nullptr;
  ASSERT_STATUS(SIMPLER_OK, sim_stream_create(&stream));
  EXPECT_STATUS(PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT, tmr.kernel_launch(ctx, 0, &args, stream));
  EXPECT_STATUS(PTO_RUNTIME_ERR_CALLABLE_NOT_RESIDENT, tmr.kernel_launch(ctx, 255, &args, stream));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, tmr.kernel_launch(ctx, 8192, &args, stream));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, tmr.kernel_launch(ctx, -1, &args, stream));
  EXPECT_STATUS(SIMPLER_OK, sim_stream_destroy(stream));
}

TEST_F(KernelLifecycle, AnImageLargerThanTheArenaIsBytesExceededWithoutPoisoning) {
  ASSERT_EQ(setenv("SIMPLER_KERNEL_CODE_ARENA_BYTES", "8192", 1), 0);
  Context ctx(tmr);
  const int status = init(tmr, ctx, 0);
  unsetenv("SIMPLER_KERNEL_CODE_ARENA_BYTES");
  ASSERT_STATUS(SIMPLER_OK, status);
  std::vector<uint8_t> big = unloadable_callable({ArgDirection::IN}, 9000);
  int64_t id = 3;
  EXPECT_STATUS(PTO_RUNTIME_ERR_CALLABLE_BYTES_EXCEEDED,
                tmr.kernel_prepare(ctx, big.data(), big.size(), &id));
  EXPECT_EQ(id, -1);
  EXPECT_NE(last_error(tmr, ctx).find("SIMPLER_KERNEL_CODE_ARENA_BYTES"), std::string::npos);
  // Not poisoned: the next (unloadable) image reaches the loader and poisons only then.
  std::vector<uint8_t> small = unloadable_callable({ArgDirection::IN}, 100);
  EXPECT_NE(tmr.kernel_prepare(ctx, small.data(), small.size(), &id),
            PTO_RUNTIME_ERR_INVALID_STATE);
}

TEST_F(KernelLifecycle, ABadArenaSizeVariableIsAStructuralError) {
  ASSERT_EQ(setenv("SIMPLER_KERNEL_CODE_ARENA_BYTES", "12abc", 1), 0);
  Context ctx(tmr);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, init(tmr, ctx, 0));
  unsetenv("SIMPLER_KERNEL_CODE_ARENA_BYTES");
  EXPECT_EQ(committed(tmr, ctx), 0u);
  EXPECT_STATUS(SIMPLER_OK, init(tmr, ctx, 0));
}

// A number too large for 64 bits (or for any device) is an invalid value, not a request
// that fails later as out of memory.
TEST_F(KernelLifecycle, AnOverflowingArenaSizeVariableIsAnInvalidValue) {
  for (const char* value : {"99999999999999999999999", "18446744073709551615", "2199023255553"}) {
    ASSERT_EQ(setenv("SIMPLER_KERNEL_CODE_ARENA_BYTES", value, 1), 0);
    Context ctx(tmr);
    EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, init(tmr, ctx, 0)) << value;
    unsetenv("SIMPLER_KERNEL_CODE_ARENA_BYTES");
    EXPECT_NE(last_error(tmr, ctx).find("is not a byte count in [4096, 1099511627776]"),
              std::string::npos)
        << last_error(tmr, ctx);
    EXPECT_EQ(committed(tmr, ctx), 0u);
  }
}

TEST_F(KernelLifecycle, AnUnloadableOrchestrationFailsPrepareAndPoisonsTheContext) {
  Context ctx(tmr);
  ASSERT_STATUS(SIMPLER_OK, init(tmr, ctx, 0));
  std::vector<uint8_t> image = unloadable_callable({ArgDirection::IN});
  int64_t id = 3;
  const int status = tmr.kernel_prepare(ctx, image.data(), image.size(), &id);
  EXPECT_NE(status, SIMPLER_OK);
  EXPECT_NE(status, PTO_RUNTIME_ERR_INVALID_STATE);
  EXPECT_EQ(id, -1);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE,
                tmr.kernel_prepare(ctx, image.data(), image.size(), &id));
  EXPECT_NE(last_error(tmr, ctx).find("poisoned"), std::string::npos) << last_error(tmr, ctx);
  ChipStorageTaskArgs args{};
  sim_stream_t stream = nullptr;
  ASSERT_STATUS(SIMPLER_OK, sim_stream_create(&stream));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, tmr.kernel_launch(ctx, 0, &args, stream));
  EXPECT_STATUS(SIMPLER_OK, sim_stream_destroy(stream));
  EXPECT_STATUS(SIMPLER_OK, tmr.finalize(ctx));  // close still works
  EXPECT_EQ(committed(tmr, ctx), 0u);
}

}  // namespace
}  // namespace simpler::test

namespace simpler::test {
namespace {

TEST_F(KernelLifecycle, AFailedCommitRollsBackAndReleasesTheClaim) {
  Context ctx(tmr);
  ASSERT_STATUS(SIMPLER_OK, sim_inject_fault("malloc", 1, 0));  // the code arena
  EXPECT_STATUS(SIM_ERR_INJECTED_FAULT, init(tmr, ctx, 0));
  EXPECT_NE(last_error(tmr, ctx).find("code arena"), std::string::npos) << last_error(tmr, ctx);
  EXPECT_EQ(committed(tmr, ctx), 0u);
  EXPECT_STATUS(SIMPLER_OK, tmr.finalize(ctx));  // what the caller does after such a failure
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, init(tmr, ctx, 0));  // latched
  Context successor(tmr);
  EXPECT_STATUS(SIMPLER_OK, init(tmr, successor, 0));  // the claim was released
}

TEST_F(KernelLifecycle, TwoDevicesHaveIndependentKernelContexts) {
  Context on0(tmr);
  Context on1(tmr);
  ASSERT_STATUS(SIMPLER_OK, init(tmr, on0, 0));
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(1));
  EXPECT_STATUS(SIMPLER_OK, init(tmr, on1, 1));
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(0));
  EXPECT_GT(committed(tmr, on1), 0u);
}

}  // namespace
}  // namespace simpler::test
