// Configuration: defaults, environment variables, sim_configure before/after first use.
// Each case runs in a fresh process (threadsafe death-test style re-executes the binary),
// because the configuration is read once per process and frozen at first device use.
#include <cstdio>
#include <cstdlib>

#include "sim_test_support.h"

namespace {

void clear_sim_environment() {
  unsetenv("SIMPLER_SIM_DEVICES");
  unsetenv("SIMPLER_SIM_DEVICE_MEMORY");
  unsetenv("SIMPLER_SIM_CLUSTERS");
  unsetenv("SIMPLER_SIM_AICPU_THREADS");
}

// Exits 0 when `ok`, else prints what failed and exits 1 (the parent checks the code).
[[noreturn]] void finish(bool ok, const char* what) {
  if (!ok) std::fprintf(stderr, "check failed: %s\n", what);
  std::exit(ok ? 0 : 1);
}

#define CHECK_OR_EXIT(cond)            \
  do {                                 \
    if (!(cond)) finish(false, #cond); \
  } while (0)

[[noreturn]] void child_DefaultsWithoutEnvironment() {
  clear_sim_environment();
  SimConfig config{};
  CHECK_OR_EXIT(sim_get_config(&config) == SIMPLER_OK);
  CHECK_OR_EXIT(config.device_count == 4);
  CHECK_OR_EXIT(config.clusters_per_device == 8);
  CHECK_OR_EXIT(config.aicpu_threads == 4);
  CHECK_OR_EXIT(config.device_memory_bytes == (uint64_t{1} << 30));
  int32_t count = 0;
  CHECK_OR_EXIT(sim_get_device_count(&count) == SIMPLER_OK && count == 4);
  SimTopology topology{};
  CHECK_OR_EXIT(sim_device_topology(3, &topology) == SIMPLER_OK);
  CHECK_OR_EXIT(topology.clusters == 8 && topology.aic_cores == 8);
  CHECK_OR_EXIT(topology.aiv_cores == 16 && topology.aicpu_threads == 4);
  CHECK_OR_EXIT(sim_device_topology(4, &topology) == SIM_ERR_INVALID_DEVICE);
  finish(true, "");
}

[[noreturn]] void child_EnvironmentOverridesDefaults() {
  clear_sim_environment();
  setenv("SIMPLER_SIM_DEVICES", "2", 1);
  setenv("SIMPLER_SIM_DEVICE_MEMORY", "64M", 1);
  setenv("SIMPLER_SIM_CLUSTERS", "3", 1);
  setenv("SIMPLER_SIM_AICPU_THREADS", "2", 1);
  SimConfig config{};
  CHECK_OR_EXIT(sim_get_config(&config) == SIMPLER_OK);
  CHECK_OR_EXIT(config.device_count == 2 && config.clusters_per_device == 3);
  CHECK_OR_EXIT(config.aicpu_threads == 2);
  CHECK_OR_EXIT(config.device_memory_bytes == (uint64_t{64} << 20));
  CHECK_OR_EXIT(sim_set_device(2) == SIM_ERR_INVALID_DEVICE);
  CHECK_OR_EXIT(sim_set_device(1) == SIMPLER_OK);
  size_t free_bytes = 0, total = 0;
  CHECK_OR_EXIT(sim_mem_get_info(&free_bytes, &total) == SIMPLER_OK);
  CHECK_OR_EXIT(total == (size_t{64} << 20) && free_bytes == total);
  SimTopology topology{};
  CHECK_OR_EXIT(sim_device_topology(1, &topology) == SIMPLER_OK);
  CHECK_OR_EXIT(topology.aiv_cores == 6 && topology.aicpu_threads == 2);
  finish(true, "");
}

[[noreturn]] void child_UnparsableEnvironmentValueIsReportedAndDefaultKept() {
  clear_sim_environment();
  setenv("SIMPLER_SIM_DEVICES", "lots", 1);
  setenv("SIMPLER_SIM_CLUSTERS", "0", 1);
  SimConfig config{};
  CHECK_OR_EXIT(sim_get_config(&config) == SIMPLER_OK);
  CHECK_OR_EXIT(config.device_count == 4 && config.clusters_per_device == 8);
  finish(true, "");
}

[[noreturn]] void child_ConfigureBeforeFirstUseThenRefused() {
  clear_sim_environment();
  SimConfig wanted{};
  wanted.device_count = 2;
  wanted.clusters_per_device = 2;
  wanted.aicpu_threads = 3;
  wanted.device_memory_bytes = uint64_t{1} << 20;
  CHECK_OR_EXIT(sim_configure(&wanted) == SIMPLER_OK);
  SimConfig got{};
  CHECK_OR_EXIT(sim_get_config(&got) == SIMPLER_OK);
  CHECK_OR_EXIT(got.device_count == 2 && got.clusters_per_device == 2);
  CHECK_OR_EXIT(got.aicpu_threads == 3 && got.device_memory_bytes == (uint64_t{1} << 20));
  CHECK_OR_EXIT(sim_set_device(0) == SIMPLER_OK);  // first use freezes the config
  wanted.device_count = 3;
  CHECK_OR_EXIT(sim_configure(&wanted) == SIM_ERR_ALREADY_INITIALIZED);
  CHECK_OR_EXIT(sim_get_config(&got) == SIMPLER_OK && got.device_count == 2);
  void* too_big = nullptr;
  CHECK_OR_EXIT(sim_malloc(&too_big, (size_t{1} << 20) + 1) == SIM_ERR_OUT_OF_MEMORY);
  finish(true, "");
}

[[noreturn]] void child_ConfigureRefusesOutOfRangeFields() {
  clear_sim_environment();
  CHECK_OR_EXIT(sim_configure(nullptr) == SIM_ERR_INVALID_VALUE);
  SimConfig base{};
  CHECK_OR_EXIT(sim_get_config(&base) == SIMPLER_OK);
  SimConfig bad = base;
  bad.device_count = 0;
  CHECK_OR_EXIT(sim_configure(&bad) == SIM_ERR_INVALID_VALUE);
  bad = base;
  bad.device_count = 65;
  CHECK_OR_EXIT(sim_configure(&bad) == SIM_ERR_INVALID_VALUE);
  bad = base;
  bad.clusters_per_device = -1;
  CHECK_OR_EXIT(sim_configure(&bad) == SIM_ERR_INVALID_VALUE);
  bad = base;
  bad.aicpu_threads = 0;
  CHECK_OR_EXIT(sim_configure(&bad) == SIM_ERR_INVALID_VALUE);
  bad = base;
  bad.device_memory_bytes = 1024;
  CHECK_OR_EXIT(sim_configure(&bad) == SIM_ERR_INVALID_VALUE);
  SimConfig after{};
  CHECK_OR_EXIT(sim_get_config(&after) == SIMPLER_OK);
  CHECK_OR_EXIT(after.device_count == base.device_count);
  CHECK_OR_EXIT(after.device_memory_bytes == base.device_memory_bytes);
  finish(true, "");
}

class SimConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(SimConfigTest, DefaultsWithoutEnvironment) {
  EXPECT_EXIT(child_DefaultsWithoutEnvironment(), ::testing::ExitedWithCode(0), "");
}

TEST_F(SimConfigTest, EnvironmentOverridesDefaults) {
  EXPECT_EXIT(child_EnvironmentOverridesDefaults(), ::testing::ExitedWithCode(0), "");
}

TEST_F(SimConfigTest, UnparsableEnvironmentValueIsReportedAndDefaultKept) {
  EXPECT_EXIT(child_UnparsableEnvironmentValueIsReportedAndDefaultKept(),
              ::testing::ExitedWithCode(0), "ignoring SIMPLER_SIM_DEVICES=\"lots\"");
}

TEST_F(SimConfigTest, ConfigureBeforeFirstUseThenRefused) {
  EXPECT_EXIT(child_ConfigureBeforeFirstUseThenRefused(), ::testing::ExitedWithCode(0), "");
}

TEST_F(SimConfigTest, ConfigureRefusesOutOfRangeFields) {
  EXPECT_EXIT(child_ConfigureRefusesOutOfRangeFields(), ::testing::ExitedWithCode(0), "");
}

TEST(SimVersion, ReportsApiVersion) {
  uint32_t version = 0;
  EXPECT_STATUS(SIMPLER_OK, sim_driver_api_version(&version));
  EXPECT_EQ(version, static_cast<uint32_t>(SIM_DRIVER_API_VERSION));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_driver_api_version(nullptr));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_get_config(nullptr));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_get_device_count(nullptr));
}

}  // namespace
