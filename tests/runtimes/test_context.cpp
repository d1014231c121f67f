// Context lifecycle: create/destroy, the mode latch, device ownership, finalize, null
// pointers and the last-error text, on both builds (program mode).
#include <atomic>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "abi_test_support.h"

namespace simpler::test {
namespace {

// Allocations made on this thread while one lives are never reported as leaks (ASan
// builds); nothing elsewhere.
// The abandoned context's exit-time teardown allocates too (from exit handlers on this
// thread): leak checking stays off for the rest of the process once one was made.
#if defined(__SANITIZE_ADDRESS__)
struct LeakCheckOff {
  LeakCheckOff() {
    std::atexit([] { __lsan_disable(); });
  }
  __lsan::ScopedDisabler scope;
};
#else
struct LeakCheckOff {};
#endif

using ContextLifecycle = BothBuilds;

TEST_P(ContextLifecycle, CreateAndDestroyAFreshContext) {
  SimplerDeviceContext* ctx = nullptr;
  ASSERT_STATUS(SIMPLER_OK, abi().create(&ctx));
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(committed(abi(), ctx), 0u);
  EXPECT_STATUS(SIMPLER_OK, abi().finalize(ctx));  // nothing to release
  EXPECT_STATUS(SIMPLER_OK, abi().destroy(ctx));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().destroy(nullptr));
}

// Calls every context entry with `ctx`, expecting `expected` from each.
void expect_every_entry(const RuntimeAbi& a, SimplerDeviceContext* ctx, int expected) {
  ChipStorageTaskArgs args{};
  SimplerCallConfig config = default_config();
  uint64_t u = 0;
  int64_t id = 0;
  int32_t done = 0;
  uint8_t byte = 0;
  EXPECT_STATUS(expected, a.init_device(ctx, 0, nullptr));
  EXPECT_STATUS(expected, a.register_callable(ctx, &byte, 1, &id));
  EXPECT_EQ(id, -1);
  EXPECT_STATUS(expected, a.unregister_callable(ctx, 0));
  EXPECT_STATUS(expected, a.prepare_run(ctx, 0, &args, nullptr, &u));
  EXPECT_STATUS(expected, a.launch_run(ctx, 1));
  EXPECT_STATUS(expected, a.poll_run(ctx, 1, &done));
  EXPECT_STATUS(expected, a.wait_run(ctx, 1, 0));
  EXPECT_STATUS(expected, a.finalize_run(ctx, 1));
  EXPECT_STATUS(expected, a.run(ctx, 0, &args, nullptr));
  EXPECT_STATUS(expected, a.malloc(ctx, 16, &u));
  EXPECT_STATUS(expected, a.free(ctx, 16));
  EXPECT_STATUS(expected, a.copy_to(ctx, 16, &byte, 1));
  EXPECT_STATUS(expected, a.copy_from(ctx, &byte, 16, 1));
  EXPECT_STATUS(expected, a.memory_info(ctx, &u, &u));
  EXPECT_STATUS(expected, a.kernel_supported(ctx));
  EXPECT_STATUS(expected, a.kernel_init(ctx, 0, nullptr, 0, nullptr, 0, &config, 1));
  EXPECT_STATUS(expected, a.kernel_prepare(ctx, &byte, 1, &id));
  EXPECT_STATUS(expected, a.kernel_launch(ctx, 0, &args, &byte));
  SimplerKernelModeLaunchErrorArgs launch_error{.struct_size = sizeof launch_error, .ctx = ctx};
  EXPECT_STATUS(expected, a.table().kernel_mode_launch_error(&launch_error));
  EXPECT_STATUS(expected, a.committed(ctx, &u));
  EXPECT_STATUS(expected, a.abandon(ctx));
  EXPECT_STATUS(expected, a.finalize(ctx));
  EXPECT_STATUS(expected, a.destroy(ctx));
}

TEST_P(ContextLifecycle, EveryEntryRefusesANullContext) {
  expect_every_entry(abi(), nullptr, PTO_RUNTIME_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error(abi(), nullptr).find("ctx is NULL"), std::string::npos);
}

TEST_P(ContextLifecycle, DestroyedForeignAndGarbageContextsAreRefusedNotDereferenced) {
  SimplerDeviceContext* ctx = nullptr;
  ASSERT_STATUS(SIMPLER_OK, abi().create(&ctx));
  ASSERT_STATUS(SIMPLER_OK, abi().destroy(ctx));
  // Destroying twice, and every entry on the destroyed handle.
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().destroy(ctx));
  EXPECT_NE(last_error(abi(), ctx).find("not a live context"), std::string::npos)
      << last_error(abi(), ctx);
  expect_every_entry(abi(), ctx, PTO_RUNTIME_ERR_INVALID_ARGUMENT);
  // Pointers that were never contexts: unmapped, misaligned, pointing into the stack.
  uint64_t stack_word = 0;
  for (uintptr_t bits : {uintptr_t{0x10}, uintptr_t{0xdeadbeef}, ~uintptr_t{0} - 7,
                         reinterpret_cast<uintptr_t>(&stack_word)}) {
    SCOPED_TRACE(bits);
    expect_every_entry(abi(), reinterpret_cast<SimplerDeviceContext*>(bits),
                       PTO_RUNTIME_ERR_INVALID_ARGUMENT);
  }
  // A context of the other build is foreign here.
  const RuntimeAbi& other = GetParam().kernel_mode ? hbg_library().abi() : tmr_library().abi();
  Context foreign(other);
  expect_every_entry(abi(), foreign, PTO_RUNTIME_ERR_INVALID_ARGUMENT);
}

TEST_P(ContextLifecycle, ConcurrentDestroysOfOneContextSucceedOnce) {
  for (int round = 0; round < 20; ++round) {
    SimplerDeviceContext* ctx = nullptr;
    ASSERT_STATUS(SIMPLER_OK, abi().create(&ctx));
    std::atomic<int> ok{0};
    std::atomic<int> refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        uint64_t bytes = 0;
        (void)abi().committed(ctx, &bytes);  // racing users of the handle are fine too
        const int st = abi().destroy(ctx);
        (st == SIMPLER_OK ? ok : refused).fetch_add(1);
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(ok.load(), 1);
    EXPECT_EQ(refused.load(), 3);
  }
}

TEST_P(ContextLifecycle, EntriesRefuseNullOutputsAndInputs) {
  const RuntimeAbi& a = abi();
  uint64_t u = 0;
  uint8_t byte = 0;
  constexpr int kBad = PTO_RUNTIME_ERR_INVALID_ARGUMENT;
  Context ctx(a);
  ASSERT_STATUS(SIMPLER_OK, a.init_device(ctx, 0, nullptr));
  int64_t id = 0;
  EXPECT_STATUS(kBad, a.register_callable(ctx, nullptr, 16, &id));
  EXPECT_STATUS(kBad, a.register_callable(ctx, &byte, 0, &id));
  EXPECT_STATUS(kBad, a.prepare_run(ctx, 0, nullptr, nullptr, &u));
  EXPECT_STATUS(kBad, a.run(ctx, 0, nullptr, nullptr));
  EXPECT_STATUS(kBad, a.copy_to(ctx, 16, nullptr, 4));
  EXPECT_STATUS(kBad, a.copy_from(ctx, nullptr, 16, 4));
  // Every entry refuses a NULL args struct.
  const SimplerApi& t = a.table();
  EXPECT_STATUS(kBad, t.last_error(nullptr));
  EXPECT_STATUS(kBad, t.runtime_name(nullptr));
  EXPECT_STATUS(kBad, t.context_create(nullptr));
  EXPECT_STATUS(kBad, t.context_destroy(nullptr));
  EXPECT_STATUS(kBad, t.init_device(nullptr));
  EXPECT_STATUS(kBad, t.register_callable(nullptr));
  EXPECT_STATUS(kBad, t.unregister_callable(nullptr));
  EXPECT_STATUS(kBad, t.prepare_run(nullptr));
  EXPECT_STATUS(kBad, t.launch_run(nullptr));
  EXPECT_STATUS(kBad, t.poll_run(nullptr));
  EXPECT_STATUS(kBad, t.wait_run(nullptr));
  EXPECT_STATUS(kBad, t.finalize_run(nullptr));
  EXPECT_STATUS(kBad, t.run(nullptr));
  EXPECT_STATUS(kBad, t.device_malloc(nullptr));
  EXPECT_STATUS(kBad, t.device_free(nullptr));
  EXPECT_STATUS(kBad, t.copy_to_device(nullptr));
  EXPECT_STATUS(kBad, t.copy_from_device(nullptr));
  EXPECT_STATUS(kBad, t.device_memory_info(nullptr));
  EXPECT_STATUS(kBad, t.kernel_mode_supported(nullptr));
  EXPECT_STATUS(kBad, t.kernel_mode_init(nullptr));
  EXPECT_STATUS(kBad, t.kernel_mode_prepare_callable(nullptr));
  EXPECT_STATUS(kBad, t.kernel_mode_launch(nullptr));
  EXPECT_STATUS(kBad, t.kernel_mode_launch_error(nullptr));
  EXPECT_STATUS(kBad, t.committed_device_memory(nullptr));
  EXPECT_STATUS(kBad, t.finalize_device(nullptr));
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

// C ABI 2.1: a host that gives up on a context (a run stuck past its grace period) gets
// the device back at once; the abandoned context keeps everything else and refuses all.
TEST_P(ContextLifecycle, AnAbandonedContextReleasesItsDeviceAndKeepsTheRest) {
  SimplerDeviceContext* fresh = nullptr;
  ASSERT_STATUS(SIMPLER_OK, abi().create(&fresh));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().abandon(fresh));  // not program mode
  EXPECT_NE(last_error(abi(), fresh).find("program-mode"), std::string::npos);
  ASSERT_STATUS(SIMPLER_OK, abi().destroy(fresh));

  SimplerDeviceContext* stuck = nullptr;
  uint64_t ptr = 0;
  {
    // `stuck` is leaked on purpose below: LeakSanitizer is told not to report what it holds.
    [[maybe_unused]] const LeakCheckOff leaked_on_purpose;
    ASSERT_STATUS(SIMPLER_OK, abi().create(&stuck));
    ASSERT_STATUS(SIMPLER_OK, abi().init_device(stuck, 2, nullptr));
    ASSERT_STATUS(SIMPLER_OK, abi().malloc(stuck, 4096, &ptr));
  }
  const uint64_t held = committed(abi(), stuck);
  ASSERT_STATUS(SIMPLER_OK, abi().abandon(stuck));
  EXPECT_STATUS(SIMPLER_OK, abi().abandon(stuck));  // idempotent
  {
    Context next(abi());  // the device is free again
    EXPECT_STATUS(SIMPLER_OK, abi().init_device(next, 2, nullptr));
  }
  // Everything else refused; nothing released (a stuck run may still use it).
  uint64_t u = 0;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().malloc(stuck, 16, &u));
  EXPECT_NE(last_error(abi(), stuck).find("abandoned"), std::string::npos);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().free(stuck, ptr));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().finalize(stuck));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().destroy(stuck));
  EXPECT_EQ(committed(abi(), stuck), held);
  // `stuck` is leaked on purpose: that is the contract of abandon_context.
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
  EXPECT_NE(last_error(abi(), ctx).find("call init_device first"), std::string::npos);
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(ctx, 0, nullptr));
  ASSERT_STATUS(SIMPLER_OK, abi().finalize(ctx));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().malloc(ctx, 16, &u));
  std::vector<uint8_t> image = unloadable_callable({ArgDirection::IN});
  int64_t id = 0;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE,
                abi().register_callable(ctx, image.data(), image.size(), &id));
  EXPECT_EQ(id, -1);
}

TEST_P(ContextLifecycle, LastErrorIsPerThreadAndClearedByTheNextCall) {
  Context a(abi());
  uint64_t u = 0;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().malloc(a, 16, &u));
  EXPECT_NE(last_error(abi(), a).find("device_malloc: "), std::string::npos)
      << last_error(abi(), a);
  SimplerLastErrorArgs read{.struct_size = sizeof read};
  ASSERT_STATUS(SIMPLER_OK, abi().table().last_error(&read));
  EXPECT_EQ(read.status, PTO_RUNTIME_ERR_INVALID_STATE);
  // Another thread has its own (empty) last error, and its failures do not touch ours.
  std::string seen_elsewhere = "unset";
  std::thread([&] {
    seen_elsewhere = last_error(abi(), a);
    EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().destroy(nullptr));
  }).join();
  EXPECT_EQ(seen_elsewhere, "");
  EXPECT_NE(last_error(abi(), a).find("device_malloc"), std::string::npos);
  // The next call clears it, success or not.
  EXPECT_EQ(committed(abi(), a), 0u);
  EXPECT_EQ(last_error(abi(), a), "");
  ASSERT_STATUS(SIMPLER_OK, abi().table().last_error(&read));
  EXPECT_EQ(read.status, SIMPLER_OK);
}

TEST_P(ContextLifecycle, ConcurrentFailuresKeepTheirOwnMessages) {
  // Two threads fail different calls at the same time, many times: each reads its own.
  Context ctx(abi());
  auto worker = [&](bool use_malloc, std::atomic<int>& mismatches) {
    for (int i = 0; i < 2000; ++i) {
      uint64_t u = 0;
      const int st = use_malloc ? abi().malloc(ctx, 16, &u) : abi().free(ctx, 16);
      const std::string message = last_error(abi(), ctx);
      if (st == SIMPLER_OK || message.rfind(use_malloc ? "device_malloc" : "device_free", 0) != 0) {
        mismatches.fetch_add(1);
      }
    }
  };
  std::atomic<int> mismatches{0};
  std::thread t1(worker, true, std::ref(mismatches));
  std::thread t2(worker, false, std::ref(mismatches));
  t1.join();
  t2.join();
  EXPECT_EQ(mismatches.load(), 0);
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

namespace simpler::test {
namespace {

using ImageDigest = BothBuilds;

TEST_P(ImageDigest, ACorruptedImageIsRefusedBeforeAnythingIsLoaded) {
  Context ctx(abi());
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(ctx, 0, nullptr));
  std::vector<uint8_t> image = unloadable_callable({ArgDirection::IN}, 256);
  image[image.size() - 100] ^= 0x04;  // inside the orchestration binary
  int64_t id = 7;
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                abi().register_callable(ctx, image.data(), image.size(), &id));
  EXPECT_EQ(id, -1);
  EXPECT_NE(last_error(abi(), ctx).find("digest"), std::string::npos) << last_error(abi(), ctx);
  EXPECT_EQ(committed(abi(), ctx), 0u);  // nothing was copied to the device
}

INSTANTIATE_FOR_BOTH_BUILDS(ImageDigest);

}  // namespace
}  // namespace simpler::test
