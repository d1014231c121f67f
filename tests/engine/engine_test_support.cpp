#include "engine_test_support.h"

#include <stdexcept>

namespace simpler::rt::testing {

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  const int rc = sim_malloc(&ptr_, bytes);
  if (rc != SIMPLER_OK)
    throw std::runtime_error(std::string("sim_malloc failed: ") + simpler_status_name(rc));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) (void)sim_free(ptr_);
}

ChipTensor DeviceBuffer::tensor(std::vector<int64_t> shape, DataType dtype) const {
  return make_tensor(reinterpret_cast<uint64_t>(ptr_), shape, dtype, AddressSpace::DEVICE, bytes_);
}

void DeviceBuffer::copy_in(const void* src, size_t n) {
  ASSERT_EQ(sim_memcpy(ptr_, src, n, SIM_MEMCPY_HOST_TO_DEVICE), SIMPLER_OK);
}

void DeviceBuffer::copy_out(void* dst, size_t n) const {
  ASSERT_EQ(sim_memcpy(dst, ptr_, n, SIM_MEMCPY_DEVICE_TO_HOST), SIMPLER_OK);
}

void EngineTest::SetUp() { ASSERT_EQ(sim_set_device(kDevice), SIMPLER_OK); }

SimplerCallConfig default_config() {
  SimplerCallConfig c{};
  c.struct_size = sizeof(SimplerCallConfig);
  return c;
}

std::unique_ptr<LoadedProgram> load(const ChipCallable& callable) {
  std::unique_ptr<LoadedProgram> program;
  std::string error;
  const int rc = LoadedProgram::load(callable.view(), &program, &error);
  if (rc != SIMPLER_OK) throw std::runtime_error("LoadedProgram::load: " + error);
  return program;
}

std::unique_ptr<Engine> make_engine(const SimplerCallConfig& config, bool build_graph_first) {
  EngineOptions options;
  options.device = kDevice;
  options.config = config;
  options.build_graph_first = build_graph_first;
  std::unique_ptr<Engine> engine;
  std::string error;
  const int rc = Engine::create(options, &engine, &error);
  if (rc != SIMPLER_OK) throw std::runtime_error("Engine::create: " + error);
  return engine;
}

ChipStorageTaskArgs make_args(const std::vector<ChipTensor>& tensors,
                              const std::vector<uint64_t>& scalars) {
  ChipStorageTaskArgs args{};
  for (const ChipTensor& t : tensors) args_add_tensor(args, t);
  for (uint64_t s : scalars) args_add_scalar(args, s);
  return args;
}

int run(Engine& engine, const LoadedProgram& program, const ChipStorageTaskArgs& args,
        std::string* error, const SimplerCallConfig* run_config) {
  std::string scratch;
  return engine.execute(program, args, run_config, error != nullptr ? error : &scratch);
}

std::vector<float> iota_floats(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i % 1000);
  return v;
}

void expect_spmd_blocks(Engine& engine, const LoadedProgram& spmd, uint32_t blocks,
                        uint32_t core_type) {
  const int64_t n = 4 * static_cast<int64_t>(blocks);
  DeviceBuffer y(static_cast<size_t>(n) * 4);
  y.upload(std::vector<int32_t>(static_cast<size_t>(n), -1));
  std::string error;
  ASSERT_EQ(
      run(engine, spmd,
          make_args({y.tensor({n}, DataType::INT32)}, {uint64_t{blocks}, uint64_t{core_type}}),
          &error),
      SIMPLER_OK)
      << error;
  const auto hy = y.download<int32_t>();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(hy[static_cast<size_t>(i)], i / 4) << "blocks " << blocks << " element " << i;
}

}  // namespace simpler::rt::testing
