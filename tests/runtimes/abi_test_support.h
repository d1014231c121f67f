// Shared fixtures of the runtime-build C ABI tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "runtime_library.h"
#include "simpler/abi/status.h"
#include "simpler/sim/sim_driver.h"
#include "simpler/task/task_interface.h"

namespace simpler::test {

// gtest prints statuses by name.
struct Status {
  int value;
  bool operator==(const Status&) const = default;
};
inline void PrintTo(const Status& s, std::ostream* os) {
  *os << simpler_status_name(s.value) << " (" << s.value << ")";
}
#define EXPECT_STATUS(expected, call) \
  EXPECT_EQ(::simpler::test::Status{expected}, ::simpler::test::Status{call})
#define ASSERT_STATUS(expected, call) \
  ASSERT_EQ(::simpler::test::Status{expected}, ::simpler::test::Status{call})

// The calling thread's last error (C ABI v2: per thread, per call; `ctx` is only for
// readability at the call sites). Read it right after the failing call.
std::string last_error(const RuntimeAbi& abi, SimplerDeviceContext* ctx);
uint64_t committed(const RuntimeAbi& abi, SimplerDeviceContext* ctx);
uint64_t call_count(const char* op);

// Owns a context for a test: finalizes (retrying past injected faults) and destroys it.
class Context {
 public:
  explicit Context(const RuntimeAbi& abi);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  SimplerDeviceContext* get() const { return ctx_; }
  operator SimplerDeviceContext*() const { return ctx_; }

 private:
  const RuntimeAbi& abi_;
  SimplerDeviceContext* ctx_ = nullptr;
};

SimplerCallConfig default_config();

// A ChipCallable whose orchestration bytes are not a loadable shared object: parses fine,
// fails LoadedProgram::load.
std::vector<uint8_t> unloadable_callable(std::vector<ArgDirection> signature,
                                         size_t binary_bytes = 64);

// Base fixture: clears injected faults and leaves device 0 current on the test thread.
class AbiTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
};

// Parameterized over both builds.
struct BuildParam {
  const char* name;
  const RuntimeLibrary& (*library)();
  bool kernel_mode;
};
std::string build_param_name(const ::testing::TestParamInfo<BuildParam>& info);
inline void PrintTo(const BuildParam& p, std::ostream* os) { *os << p.name; }
class BothBuilds : public ::testing::TestWithParam<BuildParam> {
 protected:
  void SetUp() override;
  void TearDown() override;
  const RuntimeAbi& abi() const { return GetParam().library().abi(); }
};
#define INSTANTIATE_FOR_BOTH_BUILDS(suite)                                                         \
  INSTANTIATE_TEST_SUITE_P(                                                                        \
      Builds, suite,                                                                               \
      ::testing::Values(::simpler::test::BuildParam{"tmr", &::simpler::test::tmr_library, true},   \
                        ::simpler::test::BuildParam{"hbg", &::simpler::test::hbg_library, false}), \
      ::simpler::test::build_param_name)

}  // namespace simpler::test

namespace simpler::test {

// The bytes of a callable, as the ABI takes them.
inline std::vector<uint8_t> image_of(const ChipCallable& c) {
  return {c.bytes().begin(), c.bytes().end()};
}

// A contiguous float32 tensor over host or device memory.
ChipTensor f32_tensor(uint64_t addr, std::vector<int64_t> shape, AddressSpace space);
inline ChipTensor host_f32(std::vector<float>& data, std::vector<int64_t> shape) {
  return f32_tensor(reinterpret_cast<uint64_t>(data.data()), std::move(shape), AddressSpace::HOST);
}
inline ChipTensor host_f32(std::vector<float>& data) {
  return host_f32(data, {static_cast<int64_t>(data.size())});
}
// Args of 1-D float32 HOST tensors over `data`, in order.
inline ChipStorageTaskArgs host_args(
    std::initializer_list<std::reference_wrapper<std::vector<float>>> data) {
  ChipStorageTaskArgs args{};
  for (std::vector<float>& d : data) args_add_tensor(args, host_f32(d));
  return args;
}

// Device memory owned by the test itself (the "framework"), on the current device.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint64_t addr() const { return reinterpret_cast<uint64_t>(ptr_); }
  void upload(const void* src, size_t bytes);
  void download(void* dst, size_t bytes) const;
  ChipTensor f32(std::vector<int64_t> shape) const {
    return f32_tensor(addr(), std::move(shape), AddressSpace::DEVICE);
  }

 private:
  void* ptr_ = nullptr;
};

}  // namespace simpler::test
