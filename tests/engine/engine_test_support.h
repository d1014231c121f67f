// Shared helpers of engine_tests: device buffers, tensors, programs, engines.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "program_catalog.h"
#include "simpler/abi/chip_types.h"
#include "simpler/kernel/kernel_abi.h"
#include "simpler/sim/sim_driver.h"
#include "simpler/task/task_interface.h"

namespace simpler::rt::testing {

inline constexpr int32_t kDevice = 0;

// Device memory for one test, freed on destruction.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return ptr_; }
  size_t size() const { return bytes_; }
  template <typename T>
  void upload(const std::vector<T>& host) {
    copy_in(host.data(), host.size() * sizeof(T));
  }
  template <typename T>
  std::vector<T> download() const {
    std::vector<T> host(bytes_ / sizeof(T));
    copy_out(host.data(), host.size() * sizeof(T));
    return host;
  }
  // A contiguous DEVICE tensor over the whole buffer.
  ChipTensor tensor(std::vector<int64_t> shape, DataType dtype = DataType::FLOAT32) const;

 private:
  void copy_in(const void* src, size_t n);
  void copy_out(void* dst, size_t n) const;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Makes kDevice current on the calling thread (tests run on the main thread).
class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override;
};

SimplerCallConfig default_config();
std::unique_ptr<LoadedProgram> load(const ChipCallable& callable);
std::unique_ptr<Engine> make_engine(const SimplerCallConfig& config = default_config(),
                                    bool build_graph_first = false);

ChipStorageTaskArgs make_args(const std::vector<ChipTensor>& tensors,
                              const std::vector<uint64_t>& scalars = {});

// Runs and returns the status; `error` gets the message.
int run(Engine& engine, const LoadedProgram& program, const ChipStorageTaskArgs& args,
        std::string* error = nullptr, const SimplerCallConfig* run_config = nullptr);

std::vector<float> iota_floats(size_t n, float start, float step);

// Runs test_programs::spmd() with `blocks` blocks on `core_type` and checks that every
// block wrote its own index into its 4 elements (each block ran exactly once).
void expect_spmd_blocks(Engine& engine, const LoadedProgram& spmd, uint32_t blocks,
                        uint32_t core_type);

}  // namespace simpler::rt::testing
