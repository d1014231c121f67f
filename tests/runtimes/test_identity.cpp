// The exported symbol set, identity entries and the kernel-mode probe of both builds.
#include <cstring>
#include <set>
#include <string>

#include "abi_test_support.h"
#include "elf_symbols.h"

namespace simpler::test {
namespace {

const std::set<std::string> kAbiEntries = {
    "simpler_runtime_abi_version",
    "simpler_runtime_name",
    "create_device_context",
    "destroy_device_context",
    "simpler_init_device",
    "simpler_register_callable",
    "simpler_unregister_callable",
    "simpler_prepare_run",
    "simpler_launch_run",
    "simpler_poll_run",
    "simpler_wait_run",
    "simpler_finalize_run",
    "simpler_run",
    "simpler_device_malloc",
    "simpler_device_free",
    "simpler_copy_to_device",
    "simpler_copy_from_device",
    "simpler_device_memory_info",
    "simpler_kernel_mode_supported",
    "simpler_kernel_mode_init",
    "simpler_kernel_mode_prepare_callable",
    "simpler_kernel_mode_launch",
    "simpler_committed_device_memory",
    "finalize_device",
    "simpler_last_error",
};

using Identity = BothBuilds;

TEST_P(Identity, ExportsExactlyTheAbiEntries) {
  const std::set<std::string> exported = exported_dynamic_symbols(GetParam().library().path());
  EXPECT_EQ(exported, kAbiEntries);
}

TEST_P(Identity, ReportsAbiVersionAndName) {
  uint32_t version = 0;
  EXPECT_STATUS(SIMPLER_OK, abi().abi_version(&version));
  EXPECT_EQ(version, uint32_t{SIMPLER_RUNTIME_ABI_VERSION});
  const char* name = nullptr;
  EXPECT_STATUS(SIMPLER_OK, abi().name(&name));
  ASSERT_NE(name, nullptr);
  EXPECT_STREQ(name, GetParam().kernel_mode ? "tensormap_and_ringbuffer" : "host_build_graph");
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().abi_version(nullptr));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().name(nullptr));
}

TEST_P(Identity, KernelModeProbeAnswersFromTheBuildAloneTakingNoDevice) {
  sim_reset_counters();
  SimplerDeviceContext* ctx = nullptr;
  ASSERT_STATUS(SIMPLER_OK, abi().create(&ctx));
  EXPECT_EQ(abi().kernel_supported(ctx), GetParam().kernel_mode ? 1 : 0);
  EXPECT_EQ(committed(abi(), ctx), 0u);
  EXPECT_EQ(call_count("set_device"), 0u);
  EXPECT_EQ(call_count("malloc"), 0u);
  EXPECT_EQ(call_count("stream_create"), 0u);
  EXPECT_STATUS(SIMPLER_OK, abi().destroy(ctx));
  EXPECT_STATUS(PTO_RUNTIME_ERR_INVALID_ARGUMENT, abi().kernel_supported(nullptr));
}

INSTANTIATE_FOR_BOTH_BUILDS(Identity);

TEST(Identity, BothBuildsLoadSideBySideWithSeparateState) {
  // Program-mode device claims are per loaded build: one context of each build may own
  // the same device.
  Context tmr(tmr_library().abi());
  Context hbg(hbg_library().abi());
  EXPECT_STATUS(SIMPLER_OK, tmr_library().abi().init_device(tmr, 3, nullptr));
  EXPECT_STATUS(SIMPLER_OK, hbg_library().abi().init_device(hbg, 3, nullptr));
}

}  // namespace
}  // namespace simpler::test
