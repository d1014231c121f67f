// Helpers shared by the driver tests.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "simpler/sim/sim_driver.h"

// Compares statuses and prints their names on failure (streamable like EXPECT_EQ).
#define EXPECT_STATUS(expected, expr) \
  EXPECT_PRED_FORMAT2(::simpler::sim::test::status_equal, expected, expr)
#define ASSERT_STATUS(expected, expr) \
  ASSERT_PRED_FORMAT2(::simpler::sim::test::status_equal, expected, expr)
#define ASSERT_SIM_OK(expr) ASSERT_STATUS(SIMPLER_OK, expr)
#define EXPECT_SIM_OK(expr) EXPECT_STATUS(SIMPLER_OK, expr)

namespace simpler::sim::test {

inline ::testing::AssertionResult status_equal(const char* expected_text, const char* actual_text,
                                               int expected, int actual) {
  if (expected == actual) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << actual_text << " returned " << simpler_status_name(actual) << " (" << actual
         << "), expected " << expected_text << " = " << simpler_status_name(expected);
}

// Every test starts on device 0 with no faults and zeroed counters.
class SimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_SIM_OK(sim_clear_faults());
    ASSERT_SIM_OK(sim_set_device(0));
    ASSERT_SIM_OK(sim_reset_counters());
  }
  void TearDown() override { sim_clear_faults(); }
};

// A host function that blocks its stream until the test opens the gate, so "pending"
// states are reached deterministically.
class Gate {
 public:
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return open_; });
  }
  static void host_fn(void* gate) { static_cast<Gate*>(gate)->wait(); }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

// A stream created on the current device, destroyed at scope exit.
class ScopedStream {
 public:
  ScopedStream() { create_status_ = sim_stream_create(&stream_); }
  ~ScopedStream() {
    if (stream_ != nullptr) sim_stream_destroy(stream_);
  }
  ScopedStream(const ScopedStream&) = delete;
  ScopedStream& operator=(const ScopedStream&) = delete;
  sim_stream_t get() const { return stream_; }
  int create_status() const { return create_status_; }

 private:
  sim_stream_t stream_ = nullptr;
  int create_status_ = SIMPLER_OK;
};

// Device memory on the current device, freed at scope exit.
class ScopedDeviceBuffer {
 public:
  explicit ScopedDeviceBuffer(size_t size) { status_ = sim_malloc(&ptr_, size); }
  ~ScopedDeviceBuffer() {
    if (ptr_ != nullptr) sim_free(ptr_);
  }
  ScopedDeviceBuffer(const ScopedDeviceBuffer&) = delete;
  ScopedDeviceBuffer& operator=(const ScopedDeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  unsigned char* bytes() const { return static_cast<unsigned char*>(ptr_); }
  int status() const { return status_; }
  void* release() {
    void* p = ptr_;
    ptr_ = nullptr;
    return p;
  }

 private:
  void* ptr_ = nullptr;
  int status_ = SIMPLER_OK;
};

inline uint64_t call_count(const char* op) {
  uint64_t count = 0;
  EXPECT_SIM_OK(sim_call_count(op, &count));
  return count;
}

// Generous bound for waits that must finish; never a timing assertion.
inline constexpr std::chrono::seconds kGenerousTimeout{20};

}  // namespace simpler::sim::test
