// sim_device_reset: waits for the device's streams, destroys them, frees its memory.
#include <atomic>
#include <chrono>
#include <thread>

#include "sim_test_support.h"

namespace simpler::sim::test {
namespace {

using ResetTest = SimTest;

void slow_flag(void* flag) {
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  static_cast<std::atomic<bool>*>(flag)->store(true);
}

TEST_F(ResetTest, ResetWaitsDestroysStreamsAndFreesMemoryOfThatDeviceOnly) {
  ASSERT_SIM_OK(sim_set_device(3));
  void* kept = nullptr;
  ASSERT_SIM_OK(sim_malloc(&kept, 4096));
  sim_stream_t survivor = nullptr;
  ASSERT_SIM_OK(sim_stream_create(&survivor));

  ASSERT_SIM_OK(sim_set_device(2));
  size_t free_before = 0, total = 0;
  ASSERT_SIM_OK(sim_mem_get_info(&free_before, &total));
  void* doomed = nullptr;
  ASSERT_SIM_OK(sim_malloc(&doomed, 1 << 20));
  sim_stream_t stream = nullptr;
  ASSERT_SIM_OK(sim_stream_create(&stream));
  std::atomic<bool> finished{false};
  ASSERT_SIM_OK(sim_launch_host_func(stream, slow_flag, &finished));

  ASSERT_SIM_OK(sim_device_reset(2));
  EXPECT_TRUE(finished.load());  // pending work ran before the stream went away
  EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_stream_query(stream));
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_free(doomed));
  size_t free_after = 0;
  ASSERT_SIM_OK(sim_mem_get_info(&free_after, &total));
  EXPECT_EQ(free_after, total);
  EXPECT_EQ(call_count("device_reset"), 1u);

  // Device 3 is untouched.
  EXPECT_SIM_OK(sim_stream_query(survivor));
  int32_t owner = -1;
  EXPECT_SIM_OK(sim_pointer_device(kept, 4096, &owner));
  EXPECT_EQ(owner, 3);
  // The reset device is usable again.
  void* again = nullptr;
  ASSERT_SIM_OK(sim_malloc(&again, 1024));
  ASSERT_SIM_OK(sim_free(again));
  ASSERT_SIM_OK(sim_stream_destroy(survivor));
  ASSERT_SIM_OK(sim_free(kept));
}

}  // namespace
}  // namespace simpler::sim::test
