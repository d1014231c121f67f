// Program-mode device memory: malloc/free/copies/info, committed memory, foreign pointers,
// and finalize_device's failed-release retry (sim fault injection), on both builds.
#include <numeric>
#include <vector>

#include "abi_test_support.h"

namespace simpler::test {
namespace {

using DeviceMemory = BothBuilds;

TEST_P(DeviceMemory, RoundTripsDataAndAccountsCommittedBytes) {
  Context ctx(abi());
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(ctx, 0, nullptr));
  const uint64_t base = committed(abi(), ctx);
  uint64_t free_before = 0, total = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().memory_info(ctx, &free_before, &total));
  EXPECT_GT(total, 0u);
  EXPECT_LE(free_before, total);

  std::vector<int32_t> in(10000);
  std::iota(in.begin(), in.end(), -5000);
  const size_t bytes = in.size() * sizeof(int32_t);
  uint64_t ptr = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().malloc(ctx, bytes, &ptr));
  EXPECT_NE(ptr, 0u);
  EXPECT_EQ(ptr % 1024, 0u);
  EXPECT_EQ(committed(abi(), ctx), base + bytes);
  uint64_t free_after = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().memory_info(ctx, &free_after, &total));
  EXPECT_LE(free_after + bytes, free_before);

  ASSERT_STATUS(SIMPLER_OK, abi().copy_to(ctx, ptr, in.data(), bytes));
  std::vector<int32_t> out(in.size(), 0);
  ASSERT_STATUS(SIMPLER_OK, abi().copy_from(ctx, out.data(), ptr, bytes));
  EXPECT_EQ(out, in);
  // A copy into the middle of the allocation is fine too.
  const int32_t marker = 77;
  ASSERT_STATUS(SIMPLER_OK, abi().copy_to(ctx, ptr + 400, &marker, sizeof marker));
  int32_t back = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().copy_from(ctx, &back, ptr + 400, sizeof back));
  EXPECT_EQ(back, marker);

  ASSERT_STATUS(SIMPLER_OK, abi().free(ctx, ptr));
  EXPECT_EQ(committed(abi(), ctx), base);
}

TEST_P(DeviceMemory, RefusesForeignInteriorFreedAndOtherContextsPointers) {
  Context ctx(abi());
  Context other(abi());
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(ctx, 0, nullptr));
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(other, 1, nullptr));
  uint64_t mine = 0, theirs = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().malloc(ctx, 8192, &mine));
  ASSERT_STATUS(SIMPLER_OK, abi().malloc(other, 8192, &theirs));
  int host = 0;

  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                abi().free(ctx, reinterpret_cast<uint64_t>(&host)));
  EXPECT_NE(last_error(abi(), ctx).find("not an allocation of this context"), std::string::npos);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().free(ctx, mine + 1024));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().free(ctx, theirs));
  EXPECT_STATUS(SIMPLER_OK, abi().free(ctx, mine));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().free(ctx, mine));  // double free

  // Copies: out of range, a freed block, a host pointer, memory of another device.
  ASSERT_STATUS(SIMPLER_OK, abi().malloc(ctx, 4096, &mine));
  std::vector<uint8_t> buf(8192);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().copy_to(ctx, mine, buf.data(), 4097));
  EXPECT_NE(last_error(abi(), ctx).find("dst_device"), std::string::npos) << last_error(abi(), ctx);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                abi().copy_from(ctx, buf.data(), mine + 4000, 200));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT,
                abi().copy_to(ctx, reinterpret_cast<uint64_t>(buf.data()), &host, sizeof host));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().copy_to(ctx, theirs, &host, sizeof host));
  EXPECT_NE(last_error(abi(), ctx).find("device 1"), std::string::npos) << last_error(abi(), ctx);
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().malloc(ctx, 0, &mine));
}

TEST_P(DeviceMemory, FinalizeReleasesEverythingAndTheDevice) {
  Context ctx(abi());
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(ctx, 0, nullptr));
  uint64_t a = 0, b = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().malloc(ctx, 1 << 20, &a));
  ASSERT_STATUS(SIMPLER_OK, abi().malloc(ctx, 3000, &b));
  EXPECT_GE(committed(abi(), ctx), uint64_t{(1 << 20) + 3000});
  sim_reset_counters();
  ASSERT_STATUS(SIMPLER_OK, abi().finalize(ctx));
  EXPECT_EQ(committed(abi(), ctx), 0u);
  EXPECT_EQ(call_count("device_reset"), 0u);
  EXPECT_GE(call_count("free"), 2u);
  EXPECT_EQ(call_count("stream_destroy"), 1u);
  int32_t owner = -1;
  EXPECT_NE(sim_pointer_device(reinterpret_cast<void*>(a), 1, &owner), SIMPLER_OK);  // really freed
  Context successor(abi());
  EXPECT_STATUS(SIMPLER_OK, abi().init_device(successor, 0, nullptr));
}

TEST_P(DeviceMemory, FailedReleaseKeepsTheRestAndTheDeviceThenRetrySucceeds) {
  for (const char* op : {"free", "stream_destroy"}) {
    SCOPED_TRACE(op);
    Context ctx(abi());
    ASSERT_STATUS(SIMPLER_OK, abi().init_device(ctx, 0, nullptr));
    uint64_t a = 0, b = 0;
    ASSERT_STATUS(SIMPLER_OK, abi().malloc(ctx, 4096, &a));
    ASSERT_STATUS(SIMPLER_OK, abi().malloc(ctx, 8192, &b));
    ASSERT_STATUS(SIMPLER_OK, sim_inject_fault(op, 1, 0));
    const int status = abi().finalize(ctx);
    EXPECT_STATUS(SIM_ERR_INJECTED_FAULT, status);
    EXPECT_NE(last_error(abi(), ctx).find("close again"), std::string::npos);
    if (std::string(op) == "free") {
      EXPECT_EQ(committed(abi(), ctx), 4096u + 8192u);  // nothing freed yet
    }
    EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE, abi().destroy(ctx));
    Context rival(abi());
    EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE,
                  abi().init_device(rival, 0, nullptr));  // still claimed
    uint64_t c = 0;
    EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_STATE,
                  abi().malloc(ctx, 16, &c));        // closing: no new work
    EXPECT_STATUS(SIMPLER_OK, abi().finalize(ctx));  // retry
    EXPECT_EQ(committed(abi(), ctx), 0u);
    EXPECT_STATUS(SIMPLER_OK, abi().init_device(rival, 0, nullptr));
    EXPECT_STATUS(SIMPLER_OK, abi().finalize(rival));
  }
}

TEST_P(DeviceMemory, FailedFreeReportsTheDriverStatusAndKeepsTheBlock) {
  Context ctx(abi());
  ASSERT_STATUS(SIMPLER_OK, abi().init_device(ctx, 0, nullptr));
  uint64_t a = 0;
  ASSERT_STATUS(SIMPLER_OK, abi().malloc(ctx, 4096, &a));
  ASSERT_STATUS(SIMPLER_OK, sim_inject_fault("free", 1, 0));
  EXPECT_STATUS(SIM_ERR_INJECTED_FAULT, abi().free(ctx, a));
  EXPECT_NE(last_error(abi(), ctx).find("SIM_ERR_INJECTED_FAULT"), std::string::npos);
  EXPECT_EQ(committed(abi(), ctx), 4096u);
  EXPECT_STATUS(SIMPLER_OK, abi().free(ctx, a));
  EXPECT_EQ(committed(abi(), ctx), 0u);
}

INSTANTIATE_FOR_BOTH_BUILDS(DeviceMemory);

}  // namespace
}  // namespace simpler::test
