// Context lifecycle: create/destroy, the mode latch, device ownership, finalize, null
// pointers and the last-error text, on both builds (program mode).
#include <thread>

#include "abi_test_support.h"

namespace simpler::test {
namespace {

using ContextLifecycle = BothBuilds;

TEST_P(ContextLifecycle, CreateAndDestroyAFreshContext) {
  SimplerDeviceContext* ctx = nullptr;
  ASSERT_STATUS(SIMPLER_OK, abi().create(&ctx));
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(committed(abi(), ctx), 0u);
  EXPECT_STATUS(SIMPLER_OK, abi().finalize(ctx));  // nothing to release
  EXPECT_STATUS(SIMPLER_OK, abi().destroy(ctx));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().create(nullptr));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().destroy(nullptr));
}

TEST_P(ContextLifecycle, EveryEntryRefusesNullPointers) {
  const RuntimeAbi& a = abi();
  ChipStorageTaskArgs args{};
  SimplerCallConfig config = default_config();
  uint64_t u = 0;
  int64_t id = 0;
  int32_t done = 0;
  const char* text = nullptr;
  uint8_t byte = 0;
  constexpr int kBad = PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  EXPECT_STATUS(kBad, a.init_device(nullptr, 0, nullptr));
  EXPECT_STATUS(kBad, a.register_callable(nullptr, &byte, 1, &id));
  EXPECT_EQ(id, -1);
  EXPECT_STATUS(kBad, a.unregister_callable(nullptr, 0));
  EXPECT_STATUS(kBad, a.prepare_run(nullptr, 0, &args, nullptr, &u));
  EXPECT_STATUS(kBad, a.launch_run(nullptr, 1));
  EXPECT_STATUS(kBad, a.poll_run(nullptr, 1, &done));
  EXPECT_STATUS(kBad, a.wait_run(nullptr, 1, 0));
  EXPECT_STATUS(kBad, a.finalize_run(nullptr, 1));
  EXPECT_STATUS(kBad, a.run(nullptr, 0, &args, nullptr));
  EXPECT_STATUS(kBad, a.malloc(nullptr, 16, &u));
  EXPECT_STATUS(kBad, a.free(nullptr, 16));
  EXPECT_STATUS(kBad, a.copy_to(nullptr, 16, &byte, 1));
  EXPECT_STATUS(kBad, a.copy_from(nullptr, &byte, 16, 1));
  EXPECT_STATUS(kBad, a.memory_info(nullptr, &u, &u));
  EXPECT_STATUS(kBad, a.kernel_init(nullptr, 0, nullptr, 0, nullptr, 0, &config, 1));
  EXPECT_STATUS(kBad, a.kernel_prepare(nullptr, &byte, 1, &id));
  EXPECT_STATUS(kBad, a.kernel_launch(nullptr, 0, &args, &byte));
  EXPECT_STATUS(kBad, a.committed(nullptr, &u));
  EXPECT_STATUS(kBad, a.finalize(nullptr));
  EXPECT_STATUS(kBad, a.last_error(nullptr, &text));

  Context ctx(a);
  ASSERT_STATUS(SIMPLER_OK, a.init_device(ctx, 0, nullptr));
  EXPECT_STATUS(kBad, a.register_callable(ctx, nullptr, 16, &id));
  EXPECT_STATUS(kBad, a.register_callable(ctx, &byte, 0, &id));
  EXPECT_STATUS(kBad, a.register_callable(ctx, &byte, 1, nullptr));
  EXPECT_STATUS(kBad, a.prepare_run(ctx, 0, nullptr, nullptr, &u));
  EXPECT_STATUS(kBad, a.prepare_run(ctx, 0, &args, nullptr, nullptr));
  EXPECT_STATUS(kBad, a.run(ctx, 0, nullptr, nullptr));
  EXPECT_STATUS(kBad, a.poll_run(ctx, 1, nullptr));
  EXPECT_STATUS(kBad, a.malloc(ctx, 16, nullptr));
  EXPECT_STATUS(kBad, a.copy_to(ctx, 16, nullptr, 4));
  EXPECT_STATUS(kBad, a.copy_from(ctx, nullptr, 16, 4));
  EXPECT_STATUS(kBad, a.memory_info(ctx, nullptr, &u));
  EXPECT_STATUS(kBad, a.memory_info(ctx, &u, nullptr));
  EXPECT_STATUS(kBad, a.committed(ctx, nullptr));
  EXPECT_STATUS(kBad, a.last_error(ctx, nullptr));
}

TEST_P(ContextLifecycle, InitMakesTheDeviceCurrentOnTheCallingThread) {
  Context ctx(abi());
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(ctx, 2, nullptr));
  int32_t current = -1;
  ASSERT_STATUS(SIMPLER_OK, sim_get_device(&current));
  EXPECT_EQ(current, 2);
}

TEST_P(ContextLifecycle, InitRefusesBadArgumentsAndStaysFresh) {
  Context ctx(abi());
  int32_t devices = 0;
  ASSERT_STATUS(SIMPLER_OK, sim_get_device_count(&devices));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().init_device(ctx, -1, nullptr));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().init_device(ctx, devices, nullptr));
  EXPECT_NE(last_error(abi(), ctx).find("device_id"), std::string::npos) << last_error(abi(), ctx);
  SimplerCallConfig bad = default_config();
  bad.task_window_size = 3;  // not a power of two
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().init_device(ctx, 0, &bad));
  EXPECT_NE(last_error(abi(), ctx).find("prewarm"), std::string::npos) << last_error(abi(), ctx);
  EXPECT_EQ(committed(abi(), ctx), 0u);
  EXPECT_STATUS(SIMPLER_OK, abi().init_device(ctx, 0, nullptr));  // not latched by refusals
}

TEST_P(ContextLifecycle, ModeIsLatchedForLife) {
  Context ctx(abi());
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(ctx, 0, nullptr));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().init_device(ctx, 1, nullptr));
  EXPECT_NE(last_error(abi(), ctx).find("latched"), std::string::npos) << last_error(abi(), ctx);
  SimplerCallConfig config = default_config();
  const int kernel_status = abi().kernel_init(ctx, 0, nullptr, 0, nullptr, 0, &config, 1);
  EXPECT_STATUS(
      GetParam().kernel_mode ? PTO_RUNTIME_ERR_INVALID_STATE : PTO_RUNTIME_ERR_UNSUPPORTED,
      kernel_status);
  ASSERT_STATUS(SIMPLER_OK, abi().finalize(ctx));
  // Finalized is still latched.
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().init_device(ctx, 0, nullptr));
}

TEST_P(ContextLifecycle, ADeviceHasOneProgramOwnerUntilItFinalizes) {
  Context first(abi());
  Context second(abi());
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(first, 1, nullptr));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().init_device(second, 1, nullptr));
  EXPECT_NE(last_error(abi(), second).find("already owned"), std::string::npos)
      << last_error(abi(), second);
  ASSERT_STATUS(SIMPLER_OK, abi().finalize(first));
  EXPECT_STATUS(SIMPLER_OK, abi().init_device(second, 1, nullptr));
}

TEST_P(ContextLifecycle, DestroyRefusesWhileInitializedAndLeavesTheContextUsable) {
  SimplerDeviceContext* ctx = nullptr;
  ASSERT_STATUS(SIMPLER_OK, abi().create(&ctx));
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(ctx, 0, nullptr));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().destroy(ctx));
  EXPECT_NE(last_error(abi(), ctx).find("finalize_device"), std::string::npos);
  uint64_t ptr = 0;
  EXPECT_STATUS(SIMPLER_OK, abi().malloc(ctx, 4096, &ptr));  // still usable
  EXPECT_STATUS(SIMPLER_OK, abi().finalize(ctx));
  EXPECT_STATUS(SIMPLER_OK, abi().finalize(ctx));  // idempotent
  EXPECT_EQ(committed(abi(), ctx), 0u);
  EXPECT_STATUS(SIMPLER_OK, abi().destroy(ctx));
}

TEST_P(ContextLifecycle, EntriesOfAnUninitializedOrFinalizedContextAreInvalidState) {
  Context ctx(abi());
  uint64_t u = 0;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().malloc(ctx, 16, &u));
  EXPECT_NE(last_error(abi(), ctx).find("simpler_init_device"), std::string::npos);
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(ctx, 0, nullptr));
  ASSERT_STATUS(SIMPLER_OK, abi().finalize(ctx));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().malloc(ctx, 16, &u));
  std::vector<uint8_t> image = unloadable_callable({ArgDirection::IN});
  int64_t id = 0;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE,
                abi().register_callable(ctx, image.data(), image.size(), &id));
  EXPECT_EQ(id, -1);
}

TEST_P(ContextLifecycle, LastErrorIsPerContextAndCopiedPerThread) {
  Context a(abi());
  Context b(abi());
  uint64_t u = 0;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().malloc(a, 16, &u));
  EXPECT_NE(last_error(abi(), a).find("simpler_device_malloc"), std::string::npos);
  EXPECT_EQ(last_error(abi(), b), "");
  std::string seen_elsewhere;
  std::thread([&] { seen_elsewhere = last_error(abi(), a); }).join();
  EXPECT_EQ(seen_elsewhere, last_error(abi(), a));
}

INSTANTIATE_FOR_BOTH_BUILDS(ContextLifecycle);

}  // namespace
}  // namespace simpler::test

namespace simpler::test {
namespace {

using ProgramInitFailure = BothBuilds;

TEST_P(ProgramInitFailure, AFailedInitAfterTheClaimRollsBack) {
  for (const char* op : {"stream_create", "malloc"}) {
    SCOPED_TRACE(op);
    Context ctx(abi());
    SimplerCallConfig prewarm = default_config();  // the engine allocates at init
    ASSERT_STATUS(SIMPLER_OK, sim_inject_fault(op, 1, 0));
    EXPECT_STATUS(SIM_ERR_INJECTED_FAULT, abi().init_device(ctx, 0, &prewarm));
    sim_clear_faults();
    EXPECT_EQ(committed(abi(), ctx), 0u);
    EXPECT_STATUS(SIMPLER_OK, abi().finalize(ctx));
    Context successor(abi());
    EXPECT_STATUS(SIMPLER_OK, abi().init_device(successor, 0, &prewarm));
  }
}

INSTANTIATE_FOR_BOTH_BUILDS(ProgramInitFailure);

}  // namespace
}  // namespace simpler::test
