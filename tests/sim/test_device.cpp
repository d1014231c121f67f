// Devices: the current device of each thread, invalid ids, several threads on their own devices.
#include <cstring>
#include <thread>
#include <vector>

#include "sim_test_support.h"

namespace simpler::sim::test {
namespace {

using DeviceTest = SimTest;

TEST_F(DeviceTest, NoDeviceUntilSetOnThisThread) {
  std::thread([] {
    int32_t device = 7;
    EXPECT_STATUS(SIM_ERR_NO_DEVICE, sim_get_device(&device));
    void* ptr = nullptr;
    EXPECT_STATUS(SIM_ERR_NO_DEVICE, sim_malloc(&ptr, 1024));
    EXPECT_EQ(ptr, nullptr);
    sim_stream_t stream = nullptr;
    EXPECT_STATUS(SIM_ERR_NO_DEVICE, sim_stream_create(&stream));
    sim_event_t event = nullptr;
    EXPECT_STATUS(SIM_ERR_NO_DEVICE, sim_event_create(&event));
    size_t free_bytes = 0, total = 0;
    EXPECT_STATUS(SIM_ERR_NO_DEVICE, sim_mem_get_info(&free_bytes, &total));
  }).join();
}

TEST_F(DeviceTest, CurrentDeviceIsPerThread) {
  ASSERT_SIM_OK(sim_set_device(1));
  int32_t seen_by_other = -1;
  std::thread([&] {
    ASSERT_SIM_OK(sim_set_device(2));
    ASSERT_SIM_OK(sim_get_device(&seen_by_other));
  }).join();
  int32_t mine = -1;
  ASSERT_SIM_OK(sim_get_device(&mine));
  EXPECT_EQ(mine, 1);
  EXPECT_EQ(seen_by_other, 2);
}

TEST_F(DeviceTest, InvalidDeviceIdsAreRefusedAndKeepTheCurrentDevice) {
  int32_t count = 0;
  ASSERT_SIM_OK(sim_get_device_count(&count));
  ASSERT_SIM_OK(sim_set_device(count - 1));
  EXPECT_STATUS(SIM_ERR_INVALID_DEVICE, sim_set_device(-1));
  EXPECT_STATUS(SIM_ERR_INVALID_DEVICE, sim_set_device(count));
  int32_t current = -1;
  ASSERT_SIM_OK(sim_get_device(&current));
  EXPECT_EQ(current, count - 1);
  SimTopology topology{};
  EXPECT_STATUS(SIM_ERR_INVALID_DEVICE, sim_device_topology(count, &topology));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_device_topology(0, nullptr));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_get_device(nullptr));
  EXPECT_STATUS(SIM_ERR_INVALID_DEVICE, sim_device_reset(count));
}

TEST_F(DeviceTest, TopologyFollowsTheConfig) {
  SimConfig config{};
  ASSERT_SIM_OK(sim_get_config(&config));
  SimTopology topology{};
  ASSERT_SIM_OK(sim_device_topology(0, &topology));
  EXPECT_EQ(topology.clusters, config.clusters_per_device);
  EXPECT_EQ(topology.aic_cores, config.clusters_per_device);
  EXPECT_EQ(topology.aiv_cores, 2 * config.clusters_per_device);
  EXPECT_EQ(topology.aicpu_threads, config.aicpu_threads);
}

// Each thread drives its own device: memory, a stream, async copies. Run under TSan.
TEST_F(DeviceTest, SeveralThreadsEachOnItsOwnDevice) {
  int32_t count = 0;
  ASSERT_SIM_OK(sim_get_device_count(&count));
  constexpr size_t kBytes = 64 * 1024;
  std::vector<int> failures(static_cast<size_t>(count), 0);
  std::vector<std::thread> threads;
  for (int32_t d = 0; d < count; ++d) {
    threads.emplace_back([d, &failures] {
      int& failed = failures[static_cast<size_t>(d)];
      if (sim_set_device(d) != SIMPLER_OK) {
        failed = 1;
        return;
      }
      std::vector<unsigned char> host(kBytes), back(kBytes, 0);
      for (int round = 0; round < 20; ++round) {
        for (size_t i = 0; i < kBytes; ++i) host[i] = static_cast<unsigned char>(i * 7 + d + round);
        void* a = nullptr;
        void* b = nullptr;
        sim_stream_t stream = nullptr;
        if (sim_malloc(&a, kBytes) || sim_malloc(&b, kBytes) || sim_stream_create(&stream)) {
          failed = 2;
          return;
        }
        int32_t owner = -1;
        if (sim_pointer_device(a, kBytes, &owner) || owner != d) failed = 3;
        int32_t stream_device = -1;
        if (sim_stream_device(stream, &stream_device) || stream_device != d) failed = 4;
        if (sim_memcpy_async(a, host.data(), kBytes, SIM_MEMCPY_HOST_TO_DEVICE, stream) ||
            sim_memcpy_async(b, a, kBytes, SIM_MEMCPY_DEVICE_TO_DEVICE, stream) ||
            sim_memcpy_async(back.data(), b, kBytes, SIM_MEMCPY_DEVICE_TO_HOST, stream) ||
            sim_stream_synchronize(stream))
          failed = 5;
        if (std::memcmp(host.data(), back.data(), kBytes) != 0) failed = 6;
        if (sim_stream_destroy(stream) || sim_free(a) || sim_free(b)) failed = 7;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int32_t d = 0; d < count; ++d)
    EXPECT_EQ(failures[static_cast<size_t>(d)], 0) << "device " << d;
}

}  // namespace
}  // namespace simpler::sim::test
