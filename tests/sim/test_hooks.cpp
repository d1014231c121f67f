// Fault injection and call counters.
#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "sim_test_support.h"

namespace simpler::sim::test {
namespace {

using HookTest = SimTest;

constexpr int kCustomStatus = SIMPLER_CHIP_ERR_DEVICE_FAULT;

int succeed(void* p) {
  static_cast<std::atomic<int>*>(p)->fetch_add(1);
  return SIMPLER_OK;
}
void count_cleanup(void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(100); }
void noop(void*) {}

TEST_F(HookTest, UnknownOperationNamesAreRefused) {
  EXPECT_STATUS(SIM_ERR_UNKNOWN_OPERATION, sim_inject_fault("no_such_op", 1, 0));
  EXPECT_STATUS(SIM_ERR_UNKNOWN_OPERATION, sim_inject_fault("event_query", 1, 0));
  uint64_t count = 0;
  EXPECT_STATUS(SIM_ERR_UNKNOWN_OPERATION, sim_call_count("no_such_op", &count));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_inject_fault(nullptr, 1, 0));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_inject_fault("free", -1, 0));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_call_count(nullptr, &count));
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_call_count("free", nullptr));
}

TEST_F(HookTest, EveryNamedOperationIsCountedIncludingFailingCalls) {
  void* ptr = nullptr;
  ASSERT_SIM_OK(sim_malloc(&ptr, 1024));
  EXPECT_NE(sim_malloc(nullptr, 1024), SIMPLER_OK);
  ASSERT_SIM_OK(sim_memset(ptr, 0, 16));
  char host[16] = {};
  ASSERT_SIM_OK(sim_memcpy(host, ptr, 16, SIM_MEMCPY_DEVICE_TO_HOST));
  sim_stream_t stream = nullptr;
  ASSERT_SIM_OK(sim_stream_create(&stream));
  ASSERT_SIM_OK(sim_memcpy_async(host, ptr, 16, SIM_MEMCPY_DEVICE_TO_HOST, stream));
  ASSERT_SIM_OK(sim_memset_async(ptr, 1, 16, stream));
  ASSERT_SIM_OK(sim_launch_host_func(stream, noop, nullptr));
  std::atomic<int> runs{0};
  ASSERT_SIM_OK(sim_launch_device_job(stream, succeed, &runs, nullptr));
  sim_event_t event = nullptr;
  ASSERT_SIM_OK(sim_event_create(&event));
  ASSERT_SIM_OK(sim_event_record(event, stream));
  ASSERT_SIM_OK(sim_event_synchronize(event));
  ASSERT_SIM_OK(sim_stream_query(stream));
  ASSERT_SIM_OK(sim_stream_synchronize(stream));
  EXPECT_NE(sim_stream_synchronize(nullptr), SIMPLER_OK);
  ASSERT_SIM_OK(sim_event_destroy(event));
  ASSERT_SIM_OK(sim_stream_destroy(stream));
  ASSERT_SIM_OK(sim_free(ptr));
  EXPECT_NE(sim_set_device(-1), SIMPLER_OK);
  ASSERT_SIM_OK(sim_set_device(0));

  EXPECT_EQ(call_count("malloc"), 2u);
  EXPECT_EQ(call_count("free"), 1u);
  EXPECT_EQ(call_count("memcpy"), 2u);  // sync and async
  EXPECT_EQ(call_count("memset"), 2u);
  EXPECT_EQ(call_count("host_func"), 1u);
  EXPECT_EQ(call_count("launch"), 1u);
  EXPECT_EQ(call_count("stream_create"), 1u);
  EXPECT_EQ(call_count("stream_query"), 1u);
  EXPECT_EQ(call_count("stream_synchronize"), 2u);
  EXPECT_EQ(call_count("stream_destroy"), 1u);
  EXPECT_EQ(call_count("event_create"), 1u);
  EXPECT_EQ(call_count("event_record"), 1u);
  EXPECT_EQ(call_count("event_synchronize"), 1u);
  EXPECT_EQ(call_count("event_destroy"), 1u);
  EXPECT_EQ(call_count("set_device"), 2u);
  EXPECT_EQ(call_count("device_reset"), 0u);

  ASSERT_SIM_OK(sim_reset_counters());
  EXPECT_EQ(call_count("malloc"), 0u);
  EXPECT_EQ(call_count("set_device"), 0u);
}

TEST_F(HookTest, DefaultInjectedStatusIsInjectedFault) {
  ASSERT_SIM_OK(sim_inject_fault("malloc", 1, 0));
  void* ptr = nullptr;
  EXPECT_STATUS(SIM_ERR_INJECTED_FAULT, sim_malloc(&ptr, 1024));
  EXPECT_EQ(ptr, nullptr);
  ASSERT_SIM_OK(sim_malloc(&ptr, 1024));
  ASSERT_SIM_OK(sim_free(ptr));
}

TEST_F(HookTest, FreeFaultKeepsTheAllocationThenRetrySucceeds) {
  void* ptr = nullptr;
  ASSERT_SIM_OK(sim_malloc(&ptr, 1024));
  ASSERT_SIM_OK(sim_inject_fault("free", 2, kCustomStatus));
  int foreign = 0;
  // A call refused by argument checks does not consume a fault.
  EXPECT_STATUS(SIM_ERR_INVALID_POINTER, sim_free(&foreign));
  EXPECT_STATUS(kCustomStatus, sim_free(ptr));
  EXPECT_STATUS(kCustomStatus, sim_free(ptr));
  int32_t device = -1;
  EXPECT_SIM_OK(sim_pointer_device(ptr, 1024, &device));  // still allocated
  EXPECT_SIM_OK(sim_free(ptr));
  EXPECT_EQ(call_count("free"), 4u);
}

TEST_F(HookTest, StreamAndEventDestroyFaultsLeaveThemUsableForRetry) {
  sim_stream_t stream = nullptr;
  sim_event_t event = nullptr;
  ASSERT_SIM_OK(sim_stream_create(&stream));
  ASSERT_SIM_OK(sim_event_create(&event));
  ASSERT_SIM_OK(sim_inject_fault("stream_destroy", 1, kCustomStatus));
  ASSERT_SIM_OK(sim_inject_fault("event_destroy", 1, kCustomStatus));
  EXPECT_STATUS(kCustomStatus, sim_stream_destroy(stream));
  EXPECT_STATUS(kCustomStatus, sim_event_destroy(event));
  ASSERT_SIM_OK(sim_event_record(event, stream));
  ASSERT_SIM_OK(sim_stream_synchronize(stream));
  EXPECT_SIM_OK(sim_event_destroy(event));
  EXPECT_SIM_OK(sim_stream_destroy(stream));
}

TEST_F(HookTest, EnqueueFaultsAreReturnedAndNothingIsEnqueued) {
  ScopedStream stream;
  ScopedDeviceBuffer buffer(1024);
  std::vector<unsigned char> host(1024, 9);
  ASSERT_SIM_OK(sim_inject_fault("memcpy", 1, kCustomStatus));
  ASSERT_SIM_OK(sim_inject_fault("memset", 1, kCustomStatus));
  ASSERT_SIM_OK(sim_inject_fault("host_func", 1, kCustomStatus));
  ASSERT_SIM_OK(sim_inject_fault("event_record", 1, kCustomStatus));
  EXPECT_STATUS(kCustomStatus, sim_memcpy_async(buffer.get(), host.data(), 1024,
                                                SIM_MEMCPY_HOST_TO_DEVICE, stream.get()));
  EXPECT_STATUS(kCustomStatus, sim_memset_async(buffer.get(), 1, 1024, stream.get()));
  std::atomic<int> runs{0};
  auto bump = [](void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); };
  EXPECT_STATUS(kCustomStatus, sim_launch_host_func(stream.get(), bump, &runs));
  sim_event_t event = nullptr;
  ASSERT_SIM_OK(sim_event_create(&event));
  EXPECT_STATUS(kCustomStatus, sim_event_record(event, stream.get()));
  EXPECT_SIM_OK(sim_event_query(event));                // the failed record left it unrecorded
  EXPECT_SIM_OK(sim_stream_synchronize(stream.get()));  // the stream is not poisoned
  EXPECT_EQ(runs.load(), 0);
  // Retries succeed.
  ASSERT_SIM_OK(sim_memset_async(buffer.get(), 3, 1024, stream.get()));
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), bump, &runs));
  ASSERT_SIM_OK(sim_stream_synchronize(stream.get()));
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(buffer.bytes()[0], 3);
  ASSERT_SIM_OK(sim_event_destroy(event));
}

TEST_F(HookTest, LaunchFaultSurfacesAsTheStreamsStickyError) {
  ScopedStream stream;
  std::atomic<int> runs{0};
  ASSERT_SIM_OK(sim_inject_fault("launch", 1, kCustomStatus));
  ASSERT_SIM_OK(sim_launch_device_job(stream.get(), succeed, &runs, count_cleanup));
  EXPECT_STATUS(kCustomStatus, sim_stream_synchronize(stream.get()));
  EXPECT_EQ(runs.load(), 100);  // job never ran, cleanup ran once
  EXPECT_STATUS(kCustomStatus, sim_stream_query(stream.get()));
  // The next launch on a fresh stream is unaffected (the fault was consumed).
  ScopedStream fresh;
  ASSERT_SIM_OK(sim_launch_device_job(fresh.get(), succeed, &runs, nullptr));
  EXPECT_SIM_OK(sim_stream_synchronize(fresh.get()));
  EXPECT_EQ(runs.load(), 101);
}

TEST_F(HookTest, SynchronousCallFaultsThenRetry) {
  ScopedStream stream;
  sim_event_t event = nullptr;
  ASSERT_SIM_OK(sim_event_create(&event));
  struct Case {
    const char* op;
    std::function<int()> call;
  };
  void* ptr = nullptr;
  sim_stream_t created = nullptr;
  sim_event_t created_event = nullptr;
  const std::vector<Case> cases = {
      {"malloc", [&] { return sim_malloc(&ptr, 1024); }},
      {"stream_create", [&] { return sim_stream_create(&created); }},
      {"event_create", [&] { return sim_event_create(&created_event); }},
      {"stream_synchronize", [&] { return sim_stream_synchronize(stream.get()); }},
      {"stream_query", [&] { return sim_stream_query(stream.get()); }},
      {"event_synchronize", [&] { return sim_event_synchronize(event); }},
      {"set_device", [&] { return sim_set_device(1); }},
      {"device_reset", [&] { return sim_device_reset(3); }},
  };
  for (const Case& c : cases) {
    ASSERT_SIM_OK(sim_inject_fault(c.op, 1, kCustomStatus));
    EXPECT_STATUS(kCustomStatus, c.call()) << c.op;
    EXPECT_SIM_OK(c.call()) << c.op;
  }
  int32_t current = -1;
  ASSERT_SIM_OK(sim_get_device(&current));
  EXPECT_EQ(current, 1);
  ASSERT_SIM_OK(sim_free(ptr));
  ASSERT_SIM_OK(sim_stream_destroy(created));
  ASSERT_SIM_OK(sim_event_destroy(created_event));
  ASSERT_SIM_OK(sim_event_destroy(event));
}

TEST_F(HookTest, ClearFaultsDropsPendingFaults) {
  ASSERT_SIM_OK(sim_inject_fault("malloc", 5, 0));
  ASSERT_SIM_OK(sim_inject_fault("free", 5, 0));
  ASSERT_SIM_OK(sim_clear_faults());
  void* ptr = nullptr;
  ASSERT_SIM_OK(sim_malloc(&ptr, 1024));
  ASSERT_SIM_OK(sim_free(ptr));
  ASSERT_SIM_OK(sim_inject_fault("malloc", 3, 0));
  ASSERT_SIM_OK(sim_inject_fault("malloc", 0, 0));  // count 0 clears one operation
  ASSERT_SIM_OK(sim_malloc(&ptr, 1024));
  ASSERT_SIM_OK(sim_free(ptr));
}

TEST_F(HookTest, CountersAndFaultsAreThreadSafe) {
  ASSERT_SIM_OK(sim_inject_fault("set_device", 100, 0));
  std::atomic<int> faults{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i)
        if (sim_set_device(0) == SIM_ERR_INJECTED_FAULT) faults.fetch_add(1);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(call_count("set_device"), 4000u);
  EXPECT_EQ(faults.load(), 100);  // each fault consumed exactly once
}

}  // namespace
}  // namespace simpler::sim::test
