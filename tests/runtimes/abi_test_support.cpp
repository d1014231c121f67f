#include "abi_test_support.h"

#include <span>

namespace simpler::test {

const RuntimeLibrary& tmr_library() {
  static RuntimeLibrary library(SIMPLER_TEST_TMR_LIBRARY);
  return library;
}

const RuntimeLibrary& hbg_library() {
  static RuntimeLibrary library(SIMPLER_TEST_HBG_LIBRARY);
  return library;
}

std::string last_error(const RuntimeAbi& abi, SimplerDeviceContext*) {
  SimplerLastErrorArgs a{.struct_size = sizeof a};
  if (abi.table().last_error(&a) != SIMPLER_OK || a.message == nullptr)
    return "<last_error failed>";
  return a.message;
}

uint64_t committed(const RuntimeAbi& abi, SimplerDeviceContext* ctx) {
  uint64_t bytes = ~uint64_t{0};
  EXPECT_STATUS(SIMPLER_OK, abi.committed(ctx, &bytes));
  return bytes;
}

uint64_t call_count(const char* op) {
  uint64_t count = 0;
  EXPECT_STATUS(SIMPLER_OK, sim_call_count(op, &count));
  return count;
}

Context::Context(const RuntimeAbi& abi) : abi_(abi) {
  if (abi_.create(&ctx_) != SIMPLER_OK || ctx_ == nullptr)
    throw std::runtime_error("context_create failed");
}

Context::~Context() {
  sim_clear_faults();
  for (int attempt = 0; attempt < 4 && abi_.finalize(ctx_) != SIMPLER_OK; ++attempt) {
  }
  const int st = abi_.destroy(ctx_);
  EXPECT_STATUS(SIMPLER_OK, st) << last_error(abi_, ctx_);
}

SimplerCallConfig default_config() {
  SimplerCallConfig c{};
  c.struct_size = sizeof(SimplerCallConfig);
  return c;
}

std::vector<uint8_t> unloadable_callable(std::vector<ArgDirection> signature, size_t binary_bytes) {
  std::vector<uint8_t> binary(binary_bytes, 0x5a);
  ChipCallable c = ChipCallable::build(signature, "orchestrate", binary, {});
  return {c.bytes().begin(), c.bytes().end()};
}

void AbiTest::SetUp() {
  sim_clear_faults();
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(0));
}

void AbiTest::TearDown() { sim_clear_faults(); }

std::string build_param_name(const ::testing::TestParamInfo<BuildParam>& info) {
  return info.param.name;
}

void BothBuilds::SetUp() {
  sim_clear_faults();
  ASSERT_STATUS(SIMPLER_OK, sim_set_device(0));
}

void BothBuilds::TearDown() { sim_clear_faults(); }

}  // namespace simpler::test

namespace simpler::test {

ChipTensor f32_tensor(uint64_t addr, std::vector<int64_t> shape, AddressSpace space) {
  return make_tensor(addr, shape, DataType::FLOAT32, space);
}

DeviceBuffer::DeviceBuffer(size_t bytes) {
  if (sim_malloc(&ptr_, bytes) != SIMPLER_OK) throw std::runtime_error("sim_malloc failed");
}

DeviceBuffer::~DeviceBuffer() { EXPECT_STATUS(SIMPLER_OK, sim_free(ptr_)); }

void DeviceBuffer::upload(const void* src, size_t bytes) {
  ASSERT_STATUS(SIMPLER_OK, sim_memcpy(ptr_, src, bytes, SIM_MEMCPY_HOST_TO_DEVICE));
}

void DeviceBuffer::download(void* dst, size_t bytes) const {
  ASSERT_STATUS(SIMPLER_OK, sim_memcpy(dst, ptr_, bytes, SIM_MEMCPY_DEVICE_TO_HOST));
}

}  // namespace simpler::test
