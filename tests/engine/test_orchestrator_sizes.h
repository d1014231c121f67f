// An Orchestrator that a test drives directly, without an Engine: sizes, chip, fixture.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/orchestrator.h"
#include "engine_test_support.h"

namespace simpler::rt::testing {

// Small pools; the orchestrator's heap is `heap`.
inline OrchestratorSizes small_orchestrator_sizes(DeviceBuffer& heap) {
  OrchestratorSizes sizes;
  sizes.device = kDevice;
  sizes.heap_base = static_cast<uint8_t*>(heap.data());
  sizes.heap_bytes = heap.size();
  sizes.arena_bytes = 1 << 16;
  sizes.dep_pool_size = 1024;
  sizes.tensormap_capacity = 1024;
  return sizes;
}

// A task of `blocks` AIV blocks of kernel `func` with one INOUT tensor, the shape every
// direct-orchestrator test submits.
inline SimplerTaskDesc inout_task(int32_t func, const ChipTensor& x, uint32_t blocks = 1) {
  SimplerTaskDesc d{};
  d.func_id = func;
  d.core_type = SIMPLER_CORE_AIV;
  d.block_num = blocks;
  d.tensor_count = 1;
  d.tensors[0].tensor = x;
  d.tensors[0].mode = SIMPLER_TENSOR_INOUT;
  return d;
}

// An orchestrator the test drives on a chip of two clusters with a `window`-slot task
// window and no scheduler threads: every block runs on the test's thread. `x_`: 16
// float32 zeros on the device for the kernels.
class DirectOrchestratorTest : public EngineTest {
 protected:
  void set_up(uint64_t window) {
    EngineTest::SetUp();
    heap_ = std::make_unique<DeviceBuffer>(1 << 16);
    x_ = std::make_unique<DeviceBuffer>(64);
    x_->upload(std::vector<float>(16, 0.0f));
    chip_.window = window;
    chip_.window_mask = window - 1;
    chip_.slots = std::make_unique<TaskSlot[]>(window);
    chip_.init_cores(2);
    chip_.clusters.init(2, 1);
    for (auto& queue : chip_.ready) queue.reset(2 * window);
    orch_ = std::make_unique<Orchestrator>(chip_, small_orchestrator_sizes(*heap_));
  }
  // Registers `entry` under `func` with the signature [INOUT any dtype].
  void add_inout_kernel(int32_t func, simpler_kernel_entry_fn entry) {
    LoadedKernel& k = program_.kernels[func];
    k.entry = entry;
    k.tensor_count = 1;
    k.directions[0] = CHIP_ARG_INOUT;
    k.dtypes[0] = LoadedKernel::kAnyDtype;
    k.seal();
    program_.func_ids.push_back(func);
  }

  std::unique_ptr<DeviceBuffer> heap_;
  std::unique_ptr<DeviceBuffer> x_;
  ChipState chip_;
  std::unique_ptr<Orchestrator> orch_;
  LoadedProgram::Impl program_;
};

}  // namespace simpler::rt::testing
