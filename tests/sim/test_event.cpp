// Events: record, query, synchronize, cross-stream and cross-device waits, destroy.
#include <atomic>
#include <cstring>
#include <vector>

#include "sim_test_support.h"

namespace simpler::sim::test {
namespace {

using EventTest = SimTest;

struct Flagged {
  std::atomic<int> value{0};
  std::atomic<int> seen_by_reader{-1};
};
void write_value(void* p) { static_cast<Flagged*>(p)->value.store(42); }
void read_value(void* p) {
  auto* f = static_cast<Flagged*>(p);
  f->seen_by_reader.store(f->value.load());
}
int failing_job(void*) { return SIMPLER_CHIP_ERR_KERNEL_FAULT; }

class ScopedEvent {
 public:
  ScopedEvent() { status_ = sim_event_create(&event_); }
  ~ScopedEvent() {
    if (event_ != nullptr) sim_event_destroy(event_);
  }
  ScopedEvent(const ScopedEvent&) = delete;
  ScopedEvent& operator=(const ScopedEvent&) = delete;
  sim_event_t get() const { return event_; }
  int status() const { return status_; }

 private:
  sim_event_t event_ = nullptr;
  int status_ = SIMPLER_OK;
};

TEST_F(EventTest, UnrecordedEventCountsAsComplete) {
  ScopedEvent event;
  ASSERT_SIM_OK(event.status());
  EXPECT_SIM_OK(sim_event_query(event.get()));
  EXPECT_SIM_OK(sim_event_synchronize(event.get()));
  ScopedStream stream;
  ASSERT_SIM_OK(sim_stream_wait_event(stream.get(), event.get()));
  EXPECT_SIM_OK(sim_stream_synchronize(stream.get()));
}

TEST_F(EventTest, RecordIsPendingUntilTheStreamReachesIt) {
  ScopedEvent event;
  ScopedStream stream;
  Gate gate;
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), Gate::host_fn, &gate));
  ASSERT_SIM_OK(sim_event_record(event.get(), stream.get()));
  EXPECT_STATUS(SIMPLER_NOT_READY, sim_event_query(event.get()));
  gate.open();
  ASSERT_SIM_OK(sim_event_synchronize(event.get()));
  EXPECT_SIM_OK(sim_event_query(event.get()));
  // A new record makes it pending again (the latest record counts).
  Gate second;
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), Gate::host_fn, &second));
  ASSERT_SIM_OK(sim_event_record(event.get(), stream.get()));
  EXPECT_STATUS(SIMPLER_NOT_READY, sim_event_query(event.get()));
  second.open();
  ASSERT_SIM_OK(sim_event_synchronize(event.get()));
}

TEST_F(EventTest, StreamWaitsForAnEventRecordedOnAnotherStream) {
  ScopedEvent event;
  ScopedStream producer, consumer;
  Gate gate;
  Flagged data;
  ASSERT_SIM_OK(sim_launch_host_func(producer.get(), Gate::host_fn, &gate));
  ASSERT_SIM_OK(sim_launch_host_func(producer.get(), write_value, &data));
  ASSERT_SIM_OK(sim_event_record(event.get(), producer.get()));
  ASSERT_SIM_OK(sim_stream_wait_event(consumer.get(), event.get()));
  ASSERT_SIM_OK(sim_launch_host_func(consumer.get(), read_value, &data));
  EXPECT_STATUS(SIMPLER_NOT_READY, sim_stream_query(consumer.get()));
  gate.open();
  ASSERT_SIM_OK(sim_stream_synchronize(consumer.get()));
  EXPECT_EQ(data.seen_by_reader.load(), 42);
}

TEST_F(EventTest, StreamWaitsForAnEventOfAnotherDevice) {
  ScopedEvent event;  // device 0
  ScopedStream producer;
  ScopedDeviceBuffer src(4096);
  ASSERT_SIM_OK(sim_set_device(1));
  ScopedStream consumer;
  ScopedDeviceBuffer dst(4096);
  std::vector<unsigned char> host(4096, 0x7E), back(4096, 0);
  Gate gate;
  ASSERT_SIM_OK(sim_launch_host_func(producer.get(), Gate::host_fn, &gate));
  ASSERT_SIM_OK(
      sim_memcpy_async(src.get(), host.data(), 4096, SIM_MEMCPY_HOST_TO_DEVICE, producer.get()));
  ASSERT_SIM_OK(sim_event_record(event.get(), producer.get()));
  ASSERT_SIM_OK(sim_stream_wait_event(consumer.get(), event.get()));
  ASSERT_SIM_OK(
      sim_memcpy_async(dst.get(), src.get(), 4096, SIM_MEMCPY_DEVICE_TO_DEVICE, consumer.get()));
  ASSERT_SIM_OK(
      sim_memcpy_async(back.data(), dst.get(), 4096, SIM_MEMCPY_DEVICE_TO_HOST, consumer.get()));
  gate.open();
  ASSERT_SIM_OK(sim_stream_synchronize(consumer.get()));
  EXPECT_EQ(std::memcmp(host.data(), back.data(), 4096), 0);
}

TEST_F(EventTest, RecordOnAStreamOfAnotherDeviceIsRefused) {
  ScopedEvent event;  // device 0
  ASSERT_SIM_OK(sim_set_device(1));
  ScopedStream other;
  EXPECT_STATUS(SIM_ERR_WRONG_DEVICE, sim_event_record(event.get(), other.get()));
  EXPECT_SIM_OK(sim_event_query(event.get()));
}

TEST_F(EventTest, DestroyWithPendingRecordIsSafe) {
  sim_event_t event = nullptr;
  ASSERT_SIM_OK(sim_event_create(&event));
  ScopedStream stream, waiter;
  Gate gate;
  ASSERT_SIM_OK(sim_launch_host_func(stream.get(), Gate::host_fn, &gate));
  ASSERT_SIM_OK(sim_event_record(event, stream.get()));
  ASSERT_SIM_OK(sim_stream_wait_event(waiter.get(), event));
  ASSERT_SIM_OK(sim_event_destroy(event));
  EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_event_query(event));
  gate.open();
  EXPECT_SIM_OK(sim_stream_synchronize(stream.get()));
  EXPECT_SIM_OK(sim_stream_synchronize(waiter.get()));
}

TEST_F(EventTest, RecordSkippedByAStickyErrorStillReleasesWaiters) {
  ScopedEvent event;
  ScopedStream failing, waiter;
  ASSERT_SIM_OK(sim_launch_device_job(failing.get(), failing_job, nullptr, nullptr));
  ASSERT_SIM_OK(sim_event_record(event.get(), failing.get()));
  ASSERT_SIM_OK(sim_stream_wait_event(waiter.get(), event.get()));
  EXPECT_SIM_OK(sim_stream_synchronize(waiter.get()));
  EXPECT_STATUS(SIMPLER_CHIP_ERR_KERNEL_FAULT, sim_stream_synchronize(failing.get()));
}

TEST_F(EventTest, InvalidHandlesAreRefused) {
  EXPECT_STATUS(SIM_ERR_INVALID_VALUE, sim_event_create(nullptr));
  ScopedStream stream;
  sim_event_t destroyed = nullptr;
  ASSERT_SIM_OK(sim_event_create(&destroyed));
  ASSERT_SIM_OK(sim_event_destroy(destroyed));
  const auto as_event = reinterpret_cast<sim_event_t>(stream.get());
  for (sim_event_t bad : {static_cast<sim_event_t>(nullptr), destroyed, as_event}) {
    EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_event_query(bad));
    EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_event_synchronize(bad));
    EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_event_record(bad, stream.get()));
    EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_stream_wait_event(stream.get(), bad));
    EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_event_destroy(bad));
  }
  ScopedEvent event;
  EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_event_record(event.get(), nullptr));
  EXPECT_STATUS(SIM_ERR_INVALID_HANDLE, sim_stream_wait_event(nullptr, event.get()));
}

}  // namespace
}  // namespace simpler::sim::test
